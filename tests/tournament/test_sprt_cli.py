"""``gin-referee sprt`` interrupted by SIGTERM says so (a real referee process, real bots)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.tournament.store import SqliteStore
from tests.e2e.helpers import GREEDY, RANDOM

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


def test_a_redirected_sprt_prints_a_progress_line_every_ten_pairs(tmp_path: Path) -> None:
    """stdout to a pipe (as ``> log``): plain progress lines, no carriage return, before the
    verdict. 40 games of greedy against random are 20 pairs: a line at least every ten, and no
    decision (20 pairs won twice are too few to pass the upper bound: 53 are needed)."""
    command = [sys.executable, "-m", "referee", "sprt", "--candidate", GREEDY,
               "--baseline", RANDOM, "--max-games", "40", "--seed", "3",
               "--out", str(tmp_path / "sprt")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=100, check=False)
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stdout
    lines = done.stdout.splitlines()
    progress = [line for line in lines if line.startswith("sprt: ")]
    # every ten pairs, or sooner once ten seconds have passed (a loaded machine): no gap of
    # more than ten pairs, before the first line, between two, or after the last
    counts = [int(line.split("(")[1].split()[0]) for line in progress]
    assert len(counts) >= 2 and counts == sorted(set(counts)), done.stdout
    assert all(b - a <= 10 for a, b in zip([0, *counts], [*counts, 20], strict=True)), counts
    assert all(
        f"sprt: {2 * n} games ({n} pairs)" in line for n, line in zip(counts, progress, strict=True)
    )
    assert all(" LLR " in line and "(bounds -2.94, 2.94)" in line for line in progress)
    assert lines.index(progress[-1]) < lines.index(next(x for x in lines if x.startswith("SPRT")))
    assert "verdict: undecided (no decision within the game limit)" in done.stdout
