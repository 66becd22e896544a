"""Time the machine takes from a running task, and whether its counters account for it.

Run: ``python -m bench.bench_gaps [--seconds 30] [--min-ms 15] [--load]``. On each CPU in
turn, two probes:

* **Counters.** One thread pinned there spins, reading the clock in a loop. Each gap between
  two readings longer than ``--min-ms`` is split by what Linux can tell a process about its
  own time: the CPU time the thread got (``CLOCK_THREAD_CPUTIME_ID``), the time it waited on
  a run queue (``/proc/self/schedstat``, the counter the fair clocks read), and, for the
  rest, whether the thread slept or faulted meanwhile (voluntary switches, page faults, block
  I/O delay) and whether the CPU reported stolen time (``/proc/stat``'s steal, read 50 ms
  after the gap so that the tick that accounts it has come). The kernel adds a wait to
  ``schedstat`` when the task gets its CPU back, and a task is most often preempted as a
  system call returns, so a reading can hold a delay value from just before a wait and a
  clock value from just after it: a gap is therefore read once more at once (the task is
  running again, its wait counted) before it is split. ``stale_delay`` counts the gaps that
  second reading explained. A gap that is neither run nor queued, with no switch, fault or
  steal, is time the task lost while it was the one running.
* **A real-time witness.** The same thread, at ``SCHED_FIFO`` priority (as root), sleeps 1 ms
  at a time and records how late it wakes: nothing in the guest outranks it, so a late
  wake-up of over ``--min-ms`` is time the CPU itself was not there (on a virtual machine,
  the vCPU not running) or ran with interrupts off.

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
    explained = {"slept_or_faulted": 0, "steal_reported": 0, "stale_delay": 0}
    end = time.monotonic() + seconds
    before, steal_before = Reading.now(), steal_ticks(cpu)
    while before.wall < end:
        after = Reading.now()
        gap = after.wall - before.wall
        if gap * 1000 > min_ms:
            rest = gap - (after.cpu - before.cpu) - (after.queued_ns - before.queued_ns) / 1e9
            if rest * 1000 > min_ms:
                again = Reading.now()  # running again: the wait, if any, is counted now
                rest = (again.wall - before.wall) - (again.cpu - before.cpu)
                rest -= (again.queued_ns - before.queued_ns) / 1e9
                if rest * 1000 <= min_ms:
                    explained["stale_delay"] += 1
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


def witness(cpu: int, seconds: float, min_ms: float) -> dict[str, object]:
    """Sleep 1 ms at a time on ``cpu`` at real-time priority for ``seconds``: the late
    wake-ups over ``min_ms`` (None where real-time scheduling is refused, as for non-root)."""
    os.sched_setaffinity(0, {cpu})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    except OSError:
        return {"cpu": cpu, "late": None}
    late: list[float] = []
    try:
        end = time.monotonic() + seconds
        now = time.monotonic()
        while now < end:
            due = now + 0.001
            time.sleep(0.001)
            now = time.monotonic()
            if (now - due) * 1000 > min_ms:
                late.append((now - due) * 1000)
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    late.sort()
    return {
        "cpu": cpu,
        "late": len(late),
        "per_minute": round(len(late) * 60 / seconds, 1),
        "median_ms": round(statistics.median(late), 1) if late else None,
        "max_ms": round(late[-1], 1) if late else None,
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
    results, witnessed = [], []
    with hogs(None if args.load else 0, seconds=2 * args.seconds * len(cpus) + 30) as count:
        load = os.getloadavg()[0]
        for cpu in cpus:
            result = probe(cpu, args.seconds, args.min_ms)
            results.append(result)
            print(
                f"cpu{cpu}: {result['unexplained']} gaps over {args.min_ms:g} ms neither run nor"
                f" queued, with no switch, fault or steal ({result['per_minute']}/min; median"
                f" {result['median_ms']} ms, max {result['max_ms']} ms, {result['over_50_ms']}"
                f" over 50 ms); explained: {result['slept_or_faulted']} slept or faulted,"
                f" {result['steal_reported']} steal, {result['stale_delay']} counted at the"
                " next reading",
                flush=True,
            )
        for cpu in cpus:
            seen = witness(cpu, args.seconds, args.min_ms)
            witnessed.append(seen)
            print(
                f"cpu{cpu}: a real-time thread woke over {args.min_ms:g} ms late {seen['late']}"
                f" times ({seen.get('per_minute')}/min; median {seen.get('median_ms')} ms,"
                f" max {seen.get('max_ms')} ms)",
                flush=True,
            )
        os.sched_setaffinity(0, cpus)
    if args.json:
        report = {"machine": machine(), "hogs": count, "load": load, "cpus": results}
        print(json.dumps(report | {"witness": witnessed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
