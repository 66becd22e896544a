"""A local bot's PING flood against a real referee: its memory and descriptors meanwhile.

Run: ``python -m bench.bench_pingflood [--seconds 60] [--half-close S]``. It plays a
``gin-referee match`` (no sandbox) between ``tests/bots/pingflood_bot.py`` and a random bot;
at its first game the hostile bot starts ``bench/pingflood.py`` against the referee's private
``ipc://`` socket (two processes of 32 connections, two more every 3 s, all PINGing and never
reading; with ``--half-close`` each connection ends its side after S seconds and keeps its
socket). The referee's RSS and open descriptors are sampled every 0.25 s until the attack
ends; one JSON line reports them (start and peak), the hands, games and faults in the
match's record, and the attack's own report.
``tests/e2e/test_ping_flood.py`` runs the same attack with assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench_boundary import MiB, rss

__all__ = ["Samples", "descriptors", "run_match", "watch"]

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
FLOOD_BOT = ROOT / "tests" / "bots" / "pingflood_bot.py"
RANDOM = f"{PY} -m sample_bots.random_bot"


def descriptors(pid: int) -> int:
    """Open descriptors of ``pid`` (0 once it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


class Samples:
    """RSS (bytes) and descriptors of one process, sampled: the first and the peak."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.rss_start = self.rss_peak = rss(pid)
        self.fds_start = self.fds_peak = descriptors(pid)

    def take(self) -> None:
        """One more sample (fails if the process has ended)."""
        now, fds = rss(self.pid), descriptors(self.pid)
        assert now > 0, "the referee ended during the attack"
        self.rss_peak = max(self.rss_peak, now)
        self.fds_peak = max(self.fds_peak, fds)

    def report(self) -> dict[str, float]:
        """The figures, RSS in MiB."""
        return {
            "rss_start_mib": round(self.rss_start / MiB, 1),
            "rss_peak_mib": round(self.rss_peak / MiB, 1),
            "fds_start": self.fds_start,
            "fds_peak": self.fds_peak,
        }


def watch(pid: int, done: Callable[[], bool], within: float, every: float = 0.1) -> Samples:
    """Sample ``pid`` every ``every`` seconds until ``done()`` (at most ``within`` seconds)."""
    samples = Samples(pid)
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, "the attack did not end in time"
        samples.take()
        time.sleep(every)  # another process's progress: nothing to await
    return samples


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def run_match(
    seconds: float, directory: Path, half_close: float = 0.0, every: float = 0.1
) -> tuple[Samples, dict[str, Any], dict[str, int]]:
    """The attack (see the module docstring) from a match in ``directory``: the referee's
    samples, the attack's report, and the hands, games and faults in its record (it is stopped
    after the attack)."""
    out, seat = directory / "out", directory / "flood.report"
    bot = f"{PY} {FLOOD_BOT} {seconds} {seat}" + (f" {half_close}" if half_close else "")
    referee = subprocess.Popen(
        [PY, "-m", "referee", "match", bot, RANDOM, "--games", "100000",
         "--seed", "1", "--out", str(out), "--move-time", "1", "--bank", "2",
         "--startup-time", "30", "--sandbox", "none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "start" not in _text(seat):
            assert referee.poll() is None and time.monotonic() < deadline, "no flood started"
            time.sleep(0.05)  # another process's progress: nothing to await
        samples = watch(referee.pid, lambda: "{" in _text(seat), seconds + 60, every)
    finally:
        referee.send_signal(signal.SIGTERM)
        referee.communicate(timeout=60)
    report: dict[str, Any] = json.loads(_text(seat).splitlines()[-1])
    return samples, report, _games(out)


def _games(out: Path) -> dict[str, int]:
    """The ``hand``, ``game`` and ``fault`` lines of the match's record in ``out``."""
    counts = {"hand": 0, "game": 0, "fault": 0}
    for record in out.glob("*.jsonl"):
        for line in record.read_text(errors="replace").splitlines():
            kind = json.loads(line).get("type") if line.startswith("{") else None
            if kind in counts:
                counts[kind] += 1
    return counts


def main() -> None:
    """Command line entry point: one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--half-close", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gin-pingflood-") as tmp:
        samples, report, games = run_match(args.seconds, Path(tmp), args.half_close, 0.25)
    print(json.dumps({**samples.report(), **games, "attack": report}), flush=True)


if __name__ == "__main__":
    main()
