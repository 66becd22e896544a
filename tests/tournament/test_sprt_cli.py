"""``gin-referee sprt`` interrupted by SIGTERM says so (a real referee process, real bots)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.tournament.store import SqliteStore
from tests.e2e.helpers import RANDOM

pytestmark = pytest.mark.timeout(120)


def done_games(out: Path) -> int:
    path = out / "tournament.sqlite"
    if not path.exists():
        return 0
    store = SqliteStore.open(path)
    try:
        return sum(1 for row in store.games() if row.status == "done")
    finally:
        store.close()


def test_sigterm_during_sprt_is_reported_as_an_interruption(tmp_path: Path) -> None:
    out = tmp_path / "sprt"
    command = [sys.executable, "-m", "referee", "sprt", "--candidate", RANDOM,
               "--baseline", RANDOM, "--max-games", "2000", "--move-time", "0.5",
               "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and done_games(out) < 1:
            time.sleep(0.05)  # another process's progress: nothing to await
        assert proc.poll() is None, "random vs random cannot decide after one game"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "verdict: undecided (interrupted before a decision" in stdout
    assert "game limit" not in stdout
    assert "run the same command again to resume" in stdout
