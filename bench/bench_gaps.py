"""Time the machine takes from a running task without any counter in it showing where.

Run: ``python -m bench.bench_gaps [--seconds 30] [--min-ms 15] [--load]``. On each CPU in
turn, one thread pinned there spins, reading the clock in a loop. Each gap between two
readings longer than ``--min-ms`` is split by what Linux can tell a process about its own
time: the CPU time the thread got (``CLOCK_THREAD_CPUTIME_ID``), the time it waited on a run
queue (``/proc/self/schedstat``, the counter the fair clocks read), and, for the rest, whether
the thread slept or faulted meanwhile (voluntary switches, page faults, block I/O delay) and
whether the CPU reported stolen time (``/proc/stat``'s steal, read 50 ms after the gap so
that the tick that accounts it has come). A gap that is neither run nor queued, with no
switch, fault or steal, is time the task lost while it was the one running: on a virtual
machine, its vCPU was not running and the hypervisor did not say so.

Such a gap inside a bot's turn is wall time that is neither the bot's CPU nor run-queue
delay, so :mod:`referee.match.fairclock` charges it, as it must charge a bot that sleeps or
waits on its own I/O: nothing in the guest tells the two apart. The benchmark measures how
often and how long it happens on the machine at hand (docs/tournaments.md, "Fair clocks").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from dataclasses import dataclass

from bench.common import machine
from bench.hogs import hogs


@dataclass(frozen=True, slots=True)
class Reading:
    """What the spinning thread knows about its own time at one moment."""

    wall: float
    cpu: float
    queued_ns: int
    switches: int
    faults: int
    blkio_ticks: int

    @classmethod
    def now(cls) -> Reading:
        """Read everything (about 20 us)."""
        with open("/proc/thread-self/schedstat") as schedstat:
            queued = int(schedstat.read().split()[1])
        with open("/proc/thread-self/stat") as stat:
            blkio = int(stat.read().rsplit(")", 1)[1].split()[39])
        usage = resource.getrusage(resource.RUSAGE_THREAD)
        return cls(
            time.monotonic(),
            time.thread_time(),
            queued,
            usage.ru_nvcsw,
            usage.ru_majflt + usage.ru_minflt,
            blkio,
        )


def steal_ticks(cpu: int) -> int:
    """The CPU's stolen time in ``/proc/stat`` (USER_HZ ticks)."""
    with open("/proc/stat") as stat:
        for line in stat:
            if line.startswith(f"cpu{cpu} "):
                return int(line.split()[8])
    raise RuntimeError(f"cpu{cpu} not in /proc/stat")


def probe(cpu: int, seconds: float, min_ms: float) -> dict[str, object]:
    """Spin on ``cpu`` for ``seconds``; the unexplained gaps over ``min_ms``."""
    os.sched_setaffinity(0, {cpu})
    lost: list[float] = []
    explained = {"slept_or_faulted": 0, "steal_reported": 0}
    end = time.monotonic() + seconds
    before, steal_before = Reading.now(), steal_ticks(cpu)
    while before.wall < end:
        after = Reading.now()
        gap = after.wall - before.wall
        if gap * 1000 > min_ms:
            rest = gap - (after.cpu - before.cpu) - (after.queued_ns - before.queued_ns) / 1e9
            if rest * 1000 > min_ms:
                settle = time.monotonic() + 0.05
                while time.monotonic() < settle:
                    pass
                if (after.switches, after.faults, after.blkio_ticks) != (
                    before.switches,
                    before.faults,
                    before.blkio_ticks,
                ):
                    explained["slept_or_faulted"] += 1
                elif steal_ticks(cpu) != steal_before:
                    explained["steal_reported"] += 1
                else:
                    lost.append(rest * 1000)
            after = Reading.now()
            steal_before = steal_ticks(cpu)
        before = after
    lost.sort()
    return {
        "cpu": cpu,
        "seconds": seconds,
        "unexplained": len(lost),
        "per_minute": round(len(lost) * 60 / seconds, 1),
        "median_ms": round(statistics.median(lost), 1) if lost else None,
        "max_ms": round(lost[-1], 1) if lost else None,
        "over_50_ms": sum(1 for ms in lost if ms > 50),
        "lost_ms_total": round(sum(lost), 1),
        **explained,
    }


def main(argv: list[str] | None = None) -> int:
    """Probe every CPU in turn and print one line (and ``--json``) per CPU."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_gaps", description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="spin per CPU")
    parser.add_argument("--min-ms", type=float, default=15.0, help="smallest gap counted")
    parser.add_argument("--load", action="store_true", help="beside CPU hogs (bench.hogs)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    cpus = sorted(os.sched_getaffinity(0))
    results = []
    with hogs(None if args.load else 0, seconds=args.seconds * len(cpus) + 30) as count:
        load = os.getloadavg()[0]
        for cpu in cpus:
            result = probe(cpu, args.seconds, args.min_ms)
            results.append(result)
            print(
                f"cpu{cpu}: {result['unexplained']} gaps over {args.min_ms:g} ms neither run nor"
                f" queued, with no switch, fault or steal ({result['per_minute']}/min; median"
                f" {result['median_ms']} ms, max {result['max_ms']} ms, {result['over_50_ms']}"
                f" over 50 ms); explained: {result['slept_or_faulted']} slept or faulted,"
                f" {result['steal_reported']} steal",
                flush=True,
            )
    if args.json:
        print(json.dumps({"machine": machine(), "hogs": count, "load": load, "cpus": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
