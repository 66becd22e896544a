"""One lone match, its three processes spread over the cores or kept on one.

Run: ``python -m bench.bench_affinity [--rounds 5] [--games 30] [--bot CMD]``. Each round runs
``gin-referee match BOT BOT --games N --seed R --sandbox none --json`` twice, in an order that
alternates from round to round: once as the system schedules it, once under ``taskset -c
CPU`` (the referee and, by inheritance, both bots on one core). Per run: decisions/s from the
command's start to its exit (start-up included, so use enough games), and the CPU per decision
of the referee and its bots together (``RUSAGE_CHILDREN`` of this process: the command reaps
its bots, so their time is in its own). Prints per-round lines on stderr and the medians
[min-max] and the per-round ratio pinned/spread as JSON.

On a virtual machine a wake-up across cores (the referee's request waking a bot on an idle
core, the reply waking the referee) costs the waker and the woken far more than a switch on
one core; a lone match of fast bots is one long chain of such wake-ups.
docs/design/performance-notes.md ("A lone match on one core") gives the figures and when
pinning pays.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import cpu_seconds, machine, summary

INSTANT = f"{sys.executable} -m bench.instant_bot"


def run(bot: str, games: int, seed: int, cpu: int | None, out: Path) -> dict[str, float]:
    """One ``gin-referee match``; decisions/s and CPU µs per decision (referee + bots)."""
    argv = [sys.executable, "-m", "referee", "match", bot, bot, "--games", str(games)]
    argv += ["--seed", str(seed), "--sandbox", "none", "--json", "--out", str(out)]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu), *argv]
    before = cpu_seconds(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    used = cpu_seconds(resource.RUSAGE_CHILDREN) - before
    decisions = sum(seat["decisions"] for seat in json.loads(done.stdout)["seats"])
    return {"per_s": decisions / seconds, "cpu_us": used / decisions * 1e6}


def main() -> None:
    """Run the rounds and print the JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--bot", default=INSTANT, help="both bots' command")
    parser.add_argument("--cpu", type=int, default=0, help="the core of the pinned runs")
    args = parser.parse_args()
    if args.cpu not in os.sched_getaffinity(0):
        parser.error(f"--cpu {args.cpu} is not a core this process may run on")
    series: dict[str, list[dict[str, float]]] = {"spread": [], "pinned": []}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        run(args.bot, 1, 0, None, tmp / "warm")  # bytecode cache, page cache
        for number in range(args.rounds):
            order = ["spread", "pinned"] if number % 2 == 0 else ["pinned", "spread"]
            for kind in order:
                got = run(
                    args.bot,
                    args.games,
                    number,
                    args.cpu if kind == "pinned" else None,
                    tmp / f"{kind}{number}",
                )
                series[kind].append(got)
                print(number, kind, json.dumps({k: round(v, 1) for k, v in got.items()}),
                      file=sys.stderr)  # fmt: skip
    result: dict[str, Any] = {"machine": machine(), "rounds": args.rounds, "games": args.games}
    result["bot"] = args.bot
    for kind, rows in series.items():
        result[kind] = {key: summary([row[key] for row in rows]) for key in ("per_s", "cpu_us")}
    pairs = list(zip(series["pinned"], series["spread"], strict=True))
    result["ratio_pinned_spread"] = {
        "per_s": summary([p["per_s"] / s["per_s"] for p, s in pairs]),
        "cpu_us": summary([p["cpu_us"] / s["cpu_us"] for p, s in pairs]),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
