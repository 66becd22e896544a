"""The daemon: remote bots connect with their tokens, come and go (or stay, with
``multi_match``), and the tournament ends."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.tournament.store import GameRow, Store
from tests.e2e.daemon import Procs, free_port, start_referee
from tests.e2e.helpers import GREEDY

pytestmark = pytest.mark.timeout(180)
LOOP = Path(__file__).resolve().parents[1] / "bots" / "remote_loop.py"


def stored(out: Path) -> tuple[list[GameRow], list[dict[str, Any]]]:
    """The games and faults of the tournament stored in ``out``."""
    store = Store.open(out / "tournament.sqlite")
    try:
        return store.games(), store.faults()
    finally:
        store.close()


def test_serve_runs_the_tournament_as_remote_bots_come_and_go(tmp_path: Path) -> None:
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
[[bots]]
name = "bob"
remote = true
token = "bob-token-4567"
[[bots]]
name = "greedy"
command = "{GREEDY}"
"""
    )
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", str(config), "--bind", endpoint,
         "--out", str(out), "--until-done"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    loops: list[subprocess.Popen[bytes]] = []
    try:
        assert serve.stderr is not None
        line = serve.stderr.readline()  # the daemon says where it listens once it is bound
        assert "serving on" in line and "alice, bob" in line
        # alice's first connection dies mid-game; bob only arrives a little later.
        loops.append(subprocess.Popen(
            [sys.executable, str(LOOP), endpoint, "alice-token-123", "alice", "8", "crash-first"]
        ))  # fmt: skip
        time.sleep(1.0)  # bob genuinely arrives later: that is the scenario under test
        # bob keeps one connection for all its games (multi_match) and leaves on the bye
        loops.append(subprocess.Popen(
            [sys.executable, str(LOOP), endpoint, "bob-token-4567", "bob", "8", "multi"]
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
        assert serve.returncode == 0, err
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
