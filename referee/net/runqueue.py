"""What the kernel knows of a bot seat's time: CPU it used, and time it waited for a core.

Design: a :class:`RunQueueMeter` reads, on demand, a :class:`Sample` of one seat: the CPU
time all its processes used (the seat cgroup's ``cpuacct.usage``, or ``cpu.stat``
``usage_usec`` on v2: :meth:`~referee.net.cgroups.SeatCgroup.cpu_usage_ns`, which counts
threads and processes that have ended too), and the run-queue delay of each of its tasks
(``/proc/PID/task/TID/schedstat``, second field: nanoseconds the task was runnable and
waiting for a CPU), and that of the referee's own threads (a referee waiting for a core
delays the stamp of a reply that came in time). The seat's tasks
are every thread of every process in the seat cgroup's
``cgroup.procs``; a seat without a cgroup (a bot at sandbox level ``none``, or a machine
without cgroups) is the started process and the other members of its process group, found by
a scan of ``/proc`` kept for :data:`PGROUP_RESCAN` seconds, and its CPU is the sum of its live
tasks' ``schedstat`` first field. :func:`growth` turns two samples into the delay and CPU time
of the interval between them; what those are worth to a clock is the match layer's business
(:mod:`referee.match.fairclock`, which documents the formula and its guard).

Nothing here runs unless asked: a sample is a few small ``/proc`` reads (about 30-60 us for a
Python bot's five tasks, measured in bench/bench_clocks.py), taken where a deadline is
checked, not per message. The kernel adds a task's wait to its delay when the wait ends (the
task gets a CPU): a task queued *now* shows none of its current wait, so at a deadline the
match layer also asks :meth:`RunQueueMeter.runnable` (the tasks in state ``R``).
:meth:`RunQueueMeter.cpu_now` is the one cheap reading (one ``pread`` of the cgroup's CPU
counter), which the match layer takes at every turn's start.

What the kernel must offer: ``/proc/PID/task/TID/schedstat`` (``CONFIG_SCHED_INFO``, set
wherever ``CONFIG_SCHEDSTATS`` or task delay accounting is, as in every distribution kernel
we know of; no sysctl needed). :func:`available` checks it once; without it
:meth:`RunQueueMeter.create` returns None, which the match layer takes to mean "charge the
wall time, as before", and the referee says so once in its log.

Known limits: a task that ended during the interval takes its run-queue delay with it (less
is excused, never more); without a cgroup it takes its CPU too, so the guard counts live
tasks only, which matters little since such a bot is not confined anyway (docs/security.md);
a task id reused within one interval is counted from its new value's start.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["PGROUP_RESCAN", "RunQueueMeter", "Sample", "available", "growth"]

LOGGER = logging.getLogger(__name__)

PGROUP_RESCAN = 1.0
"""Seconds a process group's member list is kept before ``/proc`` is scanned again (a seat
without a cgroup only)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One reading of a seat's counters."""

    cpu_ns: int
    """CPU time used by the seat so far (its cgroup's total; without one, its live tasks')."""
    delays: dict[int, int]
    """Run-queue delay so far, in ns, of each live task, by task id."""
    runs: dict[int, int]
    """CPU time so far, in ns, of each live task, by task id (``schedstat`` first field)."""
    referee_delay: int = 0
    """Run-queue delay so far, in ns, of the referee's own threads, summed (the event loop's
    reads the bot's reply; another holding the GIL can keep it waiting)."""


def growth(before: Sample, after: Sample, *, from_cgroup: bool) -> tuple[int, int]:
    """(run-queue delay, CPU time) of the interval between two samples, in ns.

    The delay is summed over the tasks alive at ``after``, plus the referee's loop thread's
    (a reply the referee was too late to read, waiting for a core itself, was not late); a
    task that was not in ``before`` counts from 0 (it started during the interval). With
    ``from_cgroup`` the CPU time is the cgroup's; else the sum over live tasks, counted the
    same way.
    """
    old_delays = before.delays
    delay = max(0, after.referee_delay - before.referee_delay)
    for tid, value in after.delays.items():
        grown = value - old_delays.get(tid, 0)
        if grown > 0:
            delay += grown
    if from_cgroup:
        return delay, max(0, after.cpu_ns - before.cpu_ns)
    old_runs = before.runs
    cpu = 0
    for tid, value in after.runs.items():
        grown = value - old_runs.get(tid, 0)
        if grown > 0:
            cpu += grown
    return delay, cpu


@functools.cache
def available() -> bool:
    """Whether this kernel gives per-task run-queue delay (checked once, said once if not)."""
    ok = os.path.exists(f"/proc/self/task/{os.getpid()}/schedstat")
    if not ok:
        LOGGER.warning(
            "no /proc/PID/task/TID/schedstat (a kernel without CONFIG_SCHED_INFO): bots are "
            "charged wall time, run-queue delay included"
        )
    return ok


def _read_schedstat(path: str) -> tuple[int, int] | None:
    try:
        with open(path, "rb", buffering=0) as file:
            fields = file.read(128).split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None  # the task ended meanwhile


class RunQueueMeter:
    """Samples one seat's tasks (see the module docstring); made by :meth:`create`."""

    def __init__(
        self,
        *,
        pid: int,
        cgroup_pids: Callable[[], list[int]] | None,
        cgroup_cpu_ns: Callable[[], int] | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pid = pid
        """The process the referee started (the process group's leader)."""
        self._cgroup_pids = cgroup_pids
        self._cgroup_cpu_ns = cgroup_cpu_ns
        self._clock = clock
        self._group: list[int] = [pid]
        self._group_at = -PGROUP_RESCAN
        self.from_cgroup = cgroup_cpu_ns is not None
        """Whether the CPU time is the cgroup's (every process, ended ones included)."""

    @classmethod
    def create(
        cls,
        *,
        pid: int,
        cgroup_pids: Callable[[], list[int]] | None = None,
        cgroup_cpu_ns: Callable[[], int] | None = None,
    ) -> RunQueueMeter | None:
        """A meter for the seat whose started process is ``pid`` (with its cgroup's member
        list and CPU counter, if it has one), or None where the kernel gives no schedstat."""
        if not available():
            return None
        return cls(pid=pid, cgroup_pids=cgroup_pids, cgroup_cpu_ns=cgroup_cpu_ns)

    def pids(self) -> list[int]:
        """The seat's processes: the cgroup's members, else its process group's."""
        if self._cgroup_pids is not None:
            pids = self._cgroup_pids()
            return pids if pids else [self.pid]
        now = self._clock()
        if now - self._group_at >= PGROUP_RESCAN:
            self._group = _process_group(self.pid)
            self._group_at = now
        return self._group

    def sample(self) -> Sample:
        """Read the counters now (tasks that cannot be read are left out)."""
        cpu_ns = self._cgroup_cpu_ns() if self._cgroup_cpu_ns is not None else 0
        delays: dict[int, int] = {}
        runs: dict[int, int] = {}
        for tid, task in self.tasks():
            read = _read_schedstat(f"{task}/schedstat")
            if read is not None:
                runs[tid], delays[tid] = read
        if self._cgroup_cpu_ns is None:
            cpu_ns = sum(runs.values())
        return Sample(cpu_ns, delays, runs, _own_delay())

    def runnable(self) -> int:
        """How many of the seat's tasks are runnable now (state ``R`` in
        ``/proc/PID/task/TID/stat``: on a CPU, or waiting for one). The kernel adds a wait to a
        task's ``schedstat`` delay when the task gets its CPU, so a wait still in progress is
        in no sample yet: this is how the match layer knows one may be (read at a deadline
        only, where a sample alone would charge it)."""
        return sum(1 for _, task in self.tasks() if _task_state(f"{task}/stat") == b"R")

    def tasks(self) -> Iterator[tuple[int, str]]:
        """Each task of the seat's live processes: its id and its ``/proc`` directory."""
        for pid in self.pids():
            try:
                names = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue  # it ended
            for name in names:
                yield int(name), f"/proc/{pid}/task/{name}"

    def cpu_now(self) -> int | None:
        """The seat's CPU time so far in ns where one cheap read gives it (its cgroup's
        counter, every process of the seat, ended ones included), else None."""
        return None if self._cgroup_cpu_ns is None else self._cgroup_cpu_ns()

    def growth(self, before: Sample, after: Sample) -> tuple[int, int]:
        """:func:`growth` with this meter's source of CPU time."""
        return growth(before, after, from_cgroup=self.from_cgroup)


def _task_state(path: str) -> bytes | None:
    """A task's state letter (``/proc/PID/task/TID/stat``'s third field), None if it ended."""
    try:
        with open(path, "rb", buffering=0) as file:
            stat = file.read(512)
        return stat[stat.rindex(b")") + 2 :][:1]
    except (OSError, ValueError):
        return None


def _own_delay() -> int:
    """The run-queue delay so far of the referee's threads, summed, in ns."""
    total = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for tid in tids:
        read = _read_schedstat(f"/proc/self/task/{tid}/schedstat")
        if read is not None:
            total += read[1]
    return total


def _process_group(leader: int) -> list[int]:
    """The processes whose group is ``leader``'s (``/proc/N/stat`` field 5), leader first."""
    members = [leader]
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for name in entries:
        if not name.isdigit() or int(name) == leader:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb", buffering=0) as file:
                stat = file.read(512)
            # After the command's closing parenthesis: state, ppid, pgrp.
            if int(stat[stat.rindex(b")") + 2 :].split()[2]) == leader:
                members.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return members
