"""Shared helpers for the benchmarks (and the daemon tests that reuse them): timing summaries,
a calibration workload, resident memory, a free port, and the line a starting daemon prints
once it serves."""

from __future__ import annotations

import os
import platform
import resource
import socket
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar


def summary(values: list[float]) -> str:
    """``median [min-max]``, 4 significant digits."""
    return f"{statistics.median(values):.4g} [{min(values):.4g}-{max(values):.4g}]"


def rss_kib(pid: int | str = "self") -> int:
    """Resident set size of process ``pid`` (this one by default) in KiB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The value at ``fraction`` (0..1) of an already sorted sequence."""
    index = min(len(sorted_values) - 1, int(fraction * len(sorted_values)))
    return sorted_values[index]


def calibration_us(repeat: int = 7) -> float:
    """Median microseconds of a fixed pure-Python workload, to compare machines and runs."""

    def work() -> int:
        total = 0
        for i in range(2000):
            total += i * i % 7
        return total

    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


T = TypeVar("T")


def time_each(
    fn: Callable[[T], object], inputs: Sequence[T], before: Callable[[], None] = lambda: None
) -> list[float]:
    """Microseconds of ``fn(x)`` for each input, calling ``before()`` untimed before each."""
    out = []
    clock = time.perf_counter_ns
    for value in inputs:
        before()
        start = clock()
        fn(value)
        out.append((clock() - start) / 1000)
    out.sort()
    return out


def machine() -> str:
    """A one-line description of the machine and interpreter."""
    return f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}"


def cpu_seconds(who: int) -> float:
    """User + system CPU seconds of ``resource.RUSAGE_SELF`` or ``RUSAGE_CHILDREN``."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def thread_names() -> dict[int, str]:
    """The OS name of each of this process's threads by thread id (Linux ``/proc/self/task``;
    empty elsewhere). Threads Python starts keep the process's name (``python``); libzmq names
    its own (``ZMQbg/IO/0``, ``ZMQbg/Reaper``)."""
    out: dict[int, str] = {}
    try:
        tids = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm:
                out[tid] = comm.read().strip()
        except OSError:
            continue  # the thread ended meanwhile
    return out


def thread_seconds(tid: int) -> float | None:
    """User + system CPU seconds of this process's thread ``tid``; None once it has ended."""
    return _stat_seconds(f"/proc/self/task/{tid}/stat")


def proc_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far; None once it has been reaped."""
    return _stat_seconds(f"/proc/{pid}/stat")


def _stat_seconds(path: str) -> float | None:
    try:
        with open(path) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_figures(referee: float, bots: float, decisions: int, seconds: float) -> dict[str, float]:
    """The figures every throughput benchmark reports from the referee's and the bots' CPU
    seconds over ``decisions`` played in ``seconds`` of wall time."""
    return {
        "seconds": round(seconds, 3),
        "decisions_per_s": round(decisions / seconds),
        "referee_cpu_share": round(referee / (referee + bots), 3),
        "referee_us_per_decision": round(referee / decisions * 1e6, 1),
        "bots_us_per_decision": round(bots / decisions * 1e6, 1),
    }


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serving_line(readline: Callable[[], str], most: int = 20) -> str:
    """The first line a starting ``serve``/``tournament`` prints that says ``serving on``
    (warnings such as ``--insecure``'s may come first); RuntimeError with the lines read if
    it does not come within ``most`` lines or before the stream ends."""
    seen: list[str] = []
    while len(seen) < most:
        line = readline()
        seen.append(line)
        if "serving on" in line:
            return line
        if not line:
            break
    raise RuntimeError(f"the daemon did not say it was serving: {seen}")
