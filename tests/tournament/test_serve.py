"""The daemon: remote bots connect with their tokens and CURVE keys, come and go (or stay,
with ``multi_match``), and the tournament ends; a stolen token is useless without its key."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bench.common import free_port, serving_line
from referee.net.keys import KeyPair, write_keypair
from referee.tournament.store import GameRow, SqliteStore
from tests.e2e.daemon import Procs, start_referee
from tests.e2e.helpers import GREEDY

pytestmark = pytest.mark.timeout(180)
LOOP = Path(__file__).resolve().parents[1] / "bots" / "remote_loop.py"


def stored(out: Path) -> tuple[list[GameRow], list[dict[str, Any]]]:
    """The games and faults of the tournament stored in ``out``."""
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        return store.games(), store.faults()
    finally:
        store.close()


def write_config(tmp_path: Path) -> tuple[Path, dict[str, KeyPair]]:
    """alice and bob (remote, with key pairs in ``tmp_path/keys``) and a local greedy bot."""
    keys = {name: write_keypair(tmp_path / "keys", name) for name in ("alice", "bob", "mallory")}
    config = tmp_path / "serve.toml"
    config.write_text(
        f"""
[tournament]
name = "served"
games_per_pairing = 2
concurrency = 2
seed = 3
[time]
move = 0.3
bank = 0.5
startup = 15.0
[[bots]]
name = "alice"
remote = true
token = "alice-token-123"
public_key = "{keys["alice"].public_z85}"
[[bots]]
name = "bob"
remote = true
token = "bob-token-4567"
public_key = "{keys["bob"].public_z85}"
[[bots]]
name = "greedy"
command = "{GREEDY}"
"""
    )
    return config, keys


def start_serve(tmp_path: Path, config: Path) -> tuple[subprocess.Popen[str], str, str]:
    """``gin-referee serve`` with its own key directory; returns it, the endpoint and the
    referee's public key (read from the line it prints once it is bound)."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", str(config), "--bind", endpoint,
         "--out", str(tmp_path / "out"), "--until-done", "--key-dir", str(tmp_path / "home")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert serve.stderr is not None
    line = serving_line(serve.stderr.readline)  # where it listens, once it is bound
    assert "serving on" in line and "alice, bob" in line, line
    return serve, endpoint, line.rsplit("referee key ", 1)[1].strip()


def bot_env(server_key: str, pair: KeyPair) -> dict[str, str]:
    """The environment of a remote bot that connects with ``pair``."""
    return {
        **os.environ,
        "GIN_REFEREE_SERVER_KEY": server_key,
        "GIN_BOT_PUBLIC_KEY": pair.public_z85,
        "GIN_BOT_SECRET_KEY": pair.secret_z85,
    }


def test_serve_runs_the_tournament_as_remote_bots_come_and_go(tmp_path: Path) -> None:
    config, keys = write_config(tmp_path)
    out = tmp_path / "out"
    serve, endpoint, server_key = start_serve(tmp_path, config)
    loops: list[subprocess.Popen[bytes]] = []
    try:
        # alice's first connection dies mid-game; bob only arrives a little later.
        loops.append(subprocess.Popen(
            [sys.executable, str(LOOP), endpoint, "alice-token-123", "alice", "8", "crash-first"],
            env=bot_env(server_key, keys["alice"]),
        ))  # fmt: skip
        time.sleep(1.0)  # bob genuinely arrives later: that is the scenario under test
        # bob keeps one connection for all its games (multi_match) and leaves on the bye
        loops.append(subprocess.Popen(
            [sys.executable, str(LOOP), endpoint, "bob-token-4567", "bob", "8", "multi"],
            env=bot_env(server_key, keys["bob"]),
        ))  # fmt: skip
        _out, err = serve.communicate(timeout=150)
        assert serve.returncode == 0, err
        assert loops[1].wait(30) == 0  # one connection, every game, then the daemon's bye
    finally:
        procs: list[subprocess.Popen[str] | subprocess.Popen[bytes]] = [serve, *loops]
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
    rows, faults = stored(out)
    assert len(rows) == 6 and all(r.status == "done" for r in rows)
    alice_faults = [
        f for r in rows if r.result for f in r.result["faults"]
        if r.result["seats"][f["seat"]] == "alice"
    ]  # fmt: skip
    assert alice_faults and alice_faults[0]["kind"] in ("timeout", "stall")
    assert faults


def test_serve_never_starts_a_game_without_its_remote_bot(tmp_path: Path) -> None:
    # One remote bot in two pairings, two workers competing for it, kept local processes
    # (their release is an await between the availability check and the seating), and a
    # bot that arrives only after the start-up limit: serving, a game waits for its remote
    # bot without limit and seats it only from the lobby, so no start-up fault is possible.
    config = tmp_path / "serve.toml"
    config.write_text(
        f"""
[tournament]
name = "waiting"
games_per_pairing = 2
concurrency = 2
seed = 5
[time]
move = 0.5
bank = 2.0
startup = 3.0
[[bots]]
name = "alice"
remote = true
token = "alice-token-123"
[[bots]]
name = "greedy"
command = "{GREEDY}"
[[bots]]
name = "random"
command = "{sys.executable} -m sample_bots.random_bot"
"""
    )
    procs: Procs = []
    try:
        serve, endpoint, out = start_referee("serve", config, procs, "--until-done")
        time.sleep(4.0)  # alice arrives after the 3 s start-up limit: that is the scenario
        alice = subprocess.Popen(
            [sys.executable, str(LOOP), endpoint, "alice-token-123", "alice", "8", "multi"]
        )
        procs.append(alice)
        _out, err = serve.communicate(timeout=150)
        # 3: a local bot slower than 3 s to start on a loaded machine (never alice, below)
        assert serve.returncode in (0, 3) and "  alice:" not in err, err
        assert alice.wait(30) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
    rows, faults = stored(out)
    assert len(rows) == 6 and all(r.status == "done" for r in rows)
    names = {r.spec.game_id: (r.spec.seat0, r.spec.seat1) for r in rows}
    # (a local bot slower than 3 s to start on a loaded machine is its own start-up fault)
    alice_faults = [f for f in faults if names[f["game_id"]][f["seat"]] == "alice"]
    assert not alice_faults, alice_faults


def test_a_stolen_token_is_useless_without_its_key(tmp_path: Path) -> None:
    """The attack of issue 12: a thief with alice's token was seated in alice's game and alice
    was charged the timeout. Now a thief with another registered key (bob's) gets a reject,
    one with an unknown key is refused during the handshake, and alice plays every game."""
    config, keys = write_config(tmp_path)
    serve, endpoint, server_key = start_serve(tmp_path, config)
    bots: list[subprocess.Popen[str]] = []

    def bot(token: str, name: str, pair: KeyPair, mode: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, str(LOOP), endpoint, token, name, "1", mode],
            env=bot_env(server_key, pair), stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        bots.append(proc)
        return proc

    try:
        for thief_key in ("bob", "mallory"):  # before alice and bob connect
            thief = bot("alice-token-123", "thief", keys[thief_key], "multi")
            _, thief_err = thief.communicate(timeout=60)
            assert thief.returncode == 3, thief_err  # ExitCode.REJECTED: no welcome, no seat
            expected = "bad_token" if thief_key == "bob" else "refused this bot's key"
            assert expected in thief_err, thief_err
        alice = bot("alice-token-123", "alice", keys["alice"], "multi")
        bob = bot("bob-token-4567", "bob", keys["bob"], "multi")
        _out, err = serve.communicate(timeout=150)
        assert serve.returncode == 0, err
        assert alice.wait(30) == 0 and bob.wait(30) == 0
    finally:
        for proc in [serve, *bots]:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
    store = SqliteStore.open(tmp_path / "out" / "tournament.sqlite")
    try:
        rows = store.games()
    finally:
        store.close()
    assert len(rows) == 6 and all(r.status == "done" and r.result for r in rows)
    assert not [f for r in rows if r.result for f in r.result["faults"]]
    log = (tmp_path / "out" / "referee.log.jsonl").read_text()
    assert "token not valid with this connection's key" in log
    assert "refused a CURVE handshake with an unknown key" in log
