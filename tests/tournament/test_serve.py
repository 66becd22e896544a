"""The daemon: remote bots connect with their tokens, come and go (or stay, with
``multi_match``), and the tournament ends."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.tournament.store import SqliteStore
from tests.e2e.helpers import GREEDY

pytestmark = pytest.mark.timeout(180)
LOOP = Path(__file__).resolve().parents[1] / "bots" / "remote_loop.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        rows = store.games()
        faults = store.faults()
    finally:
        store.close()
    assert len(rows) == 6 and all(r.status == "done" for r in rows)
    alice_faults = [
        f for r in rows if r.result for f in r.result["faults"]
        if r.result["seats"][f["seat"]] == "alice"
    ]  # fmt: skip
    assert alice_faults and alice_faults[0]["kind"] in ("timeout", "stall")
    assert faults
