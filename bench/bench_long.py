"""A long tournament: does the rate hold and does the referee's memory stop growing?

Run: ``python -m bench.bench_long [--games 20000] [--every 30]``. Plays one pairing of two
instant bots (``bench/instant_bot.py``, kept between games, games to 10 points so that many
games fit in a few minutes, 8 at once) with the ``gin-referee tournament`` command into a
temporary directory, and every ``--every`` seconds reads how many games the store holds and the
referee's resident memory (``/proc/PID/status``). Prints one line per sample on stderr and a
JSON summary: games/s per interval (first, last, min, max), memory at the start, after a tenth
of the games and at the end.

What a user running 100,000 games overnight wants to know: a rate that does not fall as the
store fills, and memory that levels off (docs/performance.md, "What to expect").
"""

from __future__ import annotations

import argparse
import itertools
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import rss_kib

CONFIG = """\
[rules]
preset = "standard"
target = 10

[tournament]
name = "long"
format = "round-robin"
games_per_pairing = {games}
duplicate = true
seed = 11
concurrency = {concurrency}
reuse_bots = true
out = "{out}"

[time]
move = 5.0
bank = 60.0
startup = 20.0

[[bots]]
name = "a"
command = "{python} -m bench.instant_bot"

[[bots]]
name = "b"
command = "{python} -m bench.instant_bot"
"""


def games_done(store: Path) -> int:
    """Games recorded in the tournament's SQLite store so far (0 before it exists)."""
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as conn:
            return int(
                conn.execute("SELECT count(*) FROM games WHERE status = 'done'").fetchone()[0]
            )
    except sqlite3.Error:
        return 0


def main() -> None:
    """Run the tournament, sample it, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        out = tmp / "out"
        path = tmp / "long.toml"
        path.write_text(CONFIG.format(games=args.games, concurrency=args.concurrency, out=out,
                                      python=sys.executable))  # fmt: skip
        argv = [sys.executable, "-m", "referee", "tournament", str(path), "--log-level", "warning"]
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples: list[tuple[float, int, int]] = []
        try:
            while proc.poll() is None:
                memory = rss_kib(proc.pid)
                done = games_done(out / "tournament.sqlite")
                samples.append((time.monotonic() - start, done, memory))
                print(f"{samples[-1][0]:7.1f} s {done:7d} games {memory:7d} KiB", file=sys.stderr)
                time.sleep(args.every)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if proc.returncode != 0:
            raise SystemExit(f"the tournament exited {proc.returncode}")
        total = games_done(out / "tournament.sqlite")
    seconds = time.monotonic() - start
    live = [s for s in samples if s[1] > 0]
    rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(live)]
    tenth = next((s[2] for s in live if s[1] >= args.games / 10), 0)
    result: dict[str, Any] = {
        "games": total,
        "seconds": round(seconds, 1),
        "games_per_s": round(total / seconds, 1),
        "interval_games_per_s": {
            "first": round(rates[0], 1) if rates else None,
            "last": round(rates[-1], 1) if rates else None,
            "min": round(min(rates), 1) if rates else None,
            "max": round(max(rates), 1) if rates else None,
        },
        "rss_kib": {
            "first_sample": live[0][2] if live else 0,
            "after_a_tenth": tenth,
            "last_sample": live[-1][2] if live else 0,
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
