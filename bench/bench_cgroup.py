"""What a seat's cgroup costs the kernel per wake-up, controller by controller.

Run (as root, where seats get cgroups): ``python -m bench.bench_cgroup [--rounds 7]
[--trips 20000]``. A parent and a forked child play ping-pong over a unix socket pair (one
byte each way: two wake-ups a round trip, the shape of an instant bot's decision without the
referee or the bot's code around it). The child is moved into a fresh group made where the
referee makes seat groups (:func:`referee.net.cgrouphost.host_layout`): in each v1 controller
alone, in all of them, or (cgroup v2) in one group with the seat's controllers; and in none.
Variants run in a shuffled order each round, so the machine's changing load falls on all
alike; it reports the median microseconds per round trip and the median of the per-round
differences from ``none`` with their range.

This isolates what docs/performance.md's per-decision figure for the sandbox cannot: how much
of it is the kernel's group scheduling and accounting, which no change in the referee removes
while a seat has a CPU weight of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import time
from pathlib import Path

from bench.common import machine
from referee.net.cgrouphost import host_layout


def round_trip_us(dirs: list[str], trips: int) -> float:
    """Microseconds per round trip with the child in ``dirs`` (cgroup directories)."""
    parent, child = socket.socketpair()
    made = [Path(d) / f"gin-bench-cgroup.{os.getpid()}" for d in dirs]
    for path in made:
        path.mkdir(exist_ok=True)
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: echo until the parent closes
        parent.close()
        os.close(go_w)
        os.read(go_r, 1)
        while data := child.recv(1):
            child.send(data)
        os._exit(0)
    child.close()
    os.close(go_r)
    try:
        for path in made:
            (path / "cgroup.procs").write_text(str(pid))
        os.write(go_w, b"x")
        for _ in range(trips // 10):  # warm-up
            parent.send(b"p")
            parent.recv(1)
        start = time.perf_counter()
        for _ in range(trips):
            parent.send(b"p")
            parent.recv(1)
        elapsed = time.perf_counter() - start
    finally:
        parent.close()
        os.close(go_w)
        os.waitpid(pid, 0)
        for path in made:
            path.rmdir()
    return elapsed / trips * 1e6


def variants() -> dict[str, list[str]]:
    """Variant name -> the directories the child joins (empty: no cgroup of its own)."""
    layout = host_layout()
    if layout.support.version is None:
        raise SystemExit(f"no cgroup for seats here: {layout.support.reason}")
    out: dict[str, list[str]] = {"none": []}
    parents = layout.parents
    if layout.support.version == 1:
        for role, where in sorted(parents.items()):
            out[role] = [where]
    out["seat"] = sorted(set(parents.values()))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print the table (and ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_cgroup", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="rounds (every variant per round)")
    parser.add_argument("--trips", type=int, default=20000, help="round trips per measurement")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    plan = variants()
    results: dict[str, list[float]] = {name: [] for name in plan}
    for _ in range(args.rounds):
        order = list(plan)
        random.shuffle(order)
        for name in order:
            results[name].append(round_trip_us(plan[name], args.trips))
    base = results["none"]
    report = {}
    for name, values in results.items():
        diffs = [value - b for value, b in zip(values, base, strict=True)]
        report[name] = {
            "us_per_round_trip": statistics.median(values),
            "diff_us": statistics.median(diffs),
            "diff_range_us": [min(diffs), max(diffs)],
            "joins": plan[name],
        }
        print(
            f"{name:8s} {statistics.median(values):7.2f} us a round trip;"
            f" {statistics.median(diffs):+6.2f} [{min(diffs):+.2f}..{max(diffs):+.2f}] vs none"
        )
    if args.json:
        print(json.dumps({"machine": machine(), "rounds": args.rounds, "variants": report}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
