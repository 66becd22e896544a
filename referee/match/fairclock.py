"""Fair clocks: a bot is charged the time it could run, not the time it waited for a core.

Design: a seat whose bot the referee started has a :class:`FairClock` over its
:class:`~referee.net.runqueue.RunQueueMeter` (none for a remote bot, or where the kernel gives
no per-task ``schedstat``: those are charged wall time, as before). For a turn (a decision, or
the start-up until the hello) of wall time ``wall``, during which the seat's tasks waited
``delay`` in all on run queues (the growth of ``schedstat``'s second field, summed over every
task of the seat: each thread of each process in its cgroup; a task started during the turn
counts from 0; plus the referee's loop thread's, which may itself wait for a core before it
reads a reply) and its processes used ``cpu`` (the cgroup's CPU counter), the time charged
is::

    charged = max(wall - delay, min(cpu, wall))

and ``wall - charged`` is excused. Two properties follow:

* **The guard.** ``charged >= min(cpu, wall)``: every CPU nanosecond the seat used in the
  turn is charged (up to the wall time). The delay is a *sum* over tasks, so a seat whose
  threads wait side by side (eight spinning threads, each queued) shows a delay far larger
  than the wall time; the guard is what makes that worthless: the seat is then charged its
  CPU time, which includes the thinking thread's, so a thread can never get more CPU per
  decision than the limit, however many threads wait beside it. A per-task maximum would
  excuse less under parallel waits but miss the sequential ones that make up an ordinary
  reply (the bot's I/O thread, then its main thread, each queued in turn), and still need
  the guard; the sum is used, with the guard. A bot that computes longer than its limit is
  timed out with or without load: its CPU alone reaches the limit.
* **Never more than before.** ``charged <= wall``: no bot is charged more than the wall time
  it was charged before fair clocks (the cap on the CPU term keeps a bot that computes on
  several cores in parallel at its wall time, not the sum of its cores' time).

Blocked time (I/O, sleep, waiting for its own other thread) is not run-queue delay: it is
charged. A turn sampled when it began measures that turn alone. Otherwise (see below) its
delay is counted from the latest sample taken, which excuses more (the delay since then), and
its CPU is still the turn's own: the seat cgroup's counter, read at every turn's start (one
``pread``, :meth:`Meter.cpu_now`), so the guard holds exactly; for a seat without a cgroup,
counted from the turn's first check, so the first budget of such a turn is judged by its
delay alone (a bot that is not confined could do worse anyway). CPU a seat used before the
turn (pondering on the opponent's time, earlier turns) is never charged to it.

Where the counters are read (so that an instant reply costs nothing): a seat's first sample is
taken when its hello arrives (:func:`wait_for_hellos`); from then on, a turn is sampled at its
start only while the seat is *watched*: for :data:`WATCH_TURNS` turns after one whose wall time
was over :data:`SLOW` of its budget or whose deadline was checked. At the deadline the
counters are read, and if the time charged so far is under the budget the deadline is moved
by what is left (at least :data:`MIN_STEP` of the budget), never beyond :data:`CEILING` times
the budget in wall time (and never short of :data:`CEILING_FLOOR`): a bot that waits that
long for a CPU times out, with the figures in its fault's detail.

**A wait in progress.** The kernel adds a wait to a task's run-queue delay when the wait ends,
as the task gets a CPU: a task queued at the check shows none of its current wait, and the
turn would be charged it. So a check that finds the budget spent looks again (after
:data:`MIN_STEP` of the budget, at least :data:`WAIT_STEP`) while one of the seat's tasks is
runnable (state ``R``) and its CPU time is under the budget; the next check sees the wait
once the task has run. This excuses nothing a sample would not: a task that runs instead
adds CPU, which the guard charges; a bot asleep is not runnable. (Until this rule, such
checks made most of the timeouts of instant bots at 20 ms on a loaded machine:
docs/performance.md, "Clocks under load".) A reply is measured when
its turn was sampled or took over :data:`SLOW` of the budget; one measured over its budget,
in wall time and in time charged, is a timeout even if it came before the next check. The
start-up limit follows the same rule (:func:`wait_for_hellos`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from referee.match.clock import stalls_of
from referee.net.runqueue import Sample

if TYPE_CHECKING:
    from referee.net.process import BotProcess

__all__ = [
    "CEILING",
    "CEILING_FLOOR",
    "MIN_STEP",
    "SLOW",
    "WAIT_STEP",
    "WATCH_TURNS",
    "Charge",
    "FairClock",
    "Meter",
    "fair_charge",
    "fair_clock",
    "wait_for_hellos",
]

CEILING = 10.0
"""The wall time a turn may last, as a multiple of its budget, however much is excused."""
CEILING_FLOOR = 1.0
"""...but at least this many seconds: at 20 ms, ten budgets (200 ms) is less than the loop lag
of a loaded machine, and turns whose waiting was all excused timed out at the ceiling."""
MIN_STEP = 0.1
"""The smallest move of a deadline, as a fraction of the budget (bounds the re-reads)."""
SLOW = 0.125
"""A reply slower than this fraction of its budget is measured and watches the seat."""
WATCH_TURNS = 32
"""Turns sampled from their start after a slow one (or a checked deadline)."""
WAIT_STEP = 0.005
"""The least wait, in seconds, before a deadline found with a runnable task is checked again."""


class Meter(Protocol):
    """What a fair clock reads (a :class:`~referee.net.runqueue.RunQueueMeter` is one)."""

    def sample(self) -> Sample:
        """The seat's counters now."""
        ...

    def growth(self, before: Sample, after: Sample) -> tuple[int, int]:
        """(run-queue delay, CPU time) between two samples, in ns."""
        ...

    def cpu_now(self) -> int | None:
        """The seat's CPU time so far (ns) if one cheap read gives it, else None."""
        ...

    def runnable(self) -> int:
        """How many of the seat's tasks are runnable now (running or waiting for a CPU)."""
        ...


def fair_charge(wall: float, delay: float, cpu: float) -> float:
    """``max(wall - delay, min(cpu, wall))``, never below 0 (seconds; see the module docstring).

    >>> fair_charge(0.2, 0.19, 0.004)  # waited 190 ms for a core, ran 4 ms
    0.010000000000000009
    >>> fair_charge(0.2, 1.6, 0.15)  # eight threads queued side by side: the CPU is charged
    0.15
    >>> fair_charge(0.05, 0.0, 0.4)  # eight cores for 50 ms: the wall time, as before
    0.05
    """
    return max(0.0, wall - delay, min(cpu, wall))


def fair_clock(process: BotProcess) -> FairClock | None:
    """A fair clock for the seat of a bot the referee started, or None where the kernel gives
    no per-task run-queue delay (the bot is then charged wall time)."""
    meter = process.run_queue_meter()
    return None if meter is None else FairClock(meter)


@dataclass(frozen=True, slots=True)
class Charge:
    """One measured turn, in seconds."""

    wall: float
    """The turn's wall time."""
    charged: float
    """What the bot is charged (:func:`fair_charge`)."""
    delay: float
    """The seat's tasks' run-queue delay, summed."""
    cpu: float
    """The seat's CPU time."""

    @property
    def excused(self) -> float:
        """Wall time not charged: the seat was waiting for a core."""
        return self.wall - self.charged

    def describe(self) -> str:
        """For a fault's detail: ``charged 51 ms of 412 ms (361 ms excused: ...)``."""
        if self.wall >= 1.0:
            return (
                f"charged {self.charged:.1f} s of {self.wall:.1f} s ({self.excused:.1f} s "
                f"excused: waiting for a CPU; {self.cpu:.1f} s of CPU)"
            )
        ms = 1000
        return (
            f"charged {self.charged * ms:.0f} ms of {self.wall * ms:.0f} ms "
            f"({self.excused * ms:.0f} ms excused: waiting for a CPU; "
            f"{self.cpu * ms:.0f} ms of CPU)"
        )


class FairClock:
    """One seat's turns measured against its meter (see the module docstring)."""

    def __init__(self, meter: Meter) -> None:
        self._meter = meter
        self._last: Sample | None = None
        """The latest sample taken (the base of a turn not sampled at its start)."""
        self._turn_base: Sample | None = None
        """The current turn's base, once it has one."""
        self._exact = False
        """Whether ``_turn_base`` was taken when the turn (or the start-up wait) began."""
        self._turn_cpu: int | None = None
        """The seat's CPU when a turn not sampled at its start began (the cheap reading)."""
        self._cpu_from: Sample | None = None
        """Without that reading: the first check of the turn, where its CPU is counted from."""
        self._watch = 0
        self.samples = 0
        """Samples taken (what the common path does not pay)."""

    def _sample(self) -> Sample:
        self.samples += 1
        return self._meter.sample()

    def mark(self) -> None:
        """Take a sample now: the base of what is measured next (the start-up wait), and of
        the next turns until a fresher one."""
        self._turn_base = self._last = self._sample()
        self._exact, self._turn_cpu, self._cpu_from = True, None, None

    def begin(self) -> None:
        """A turn starts (called just before its request is sent)."""
        self._turn_base, self._exact, self._turn_cpu, self._cpu_from = None, False, None, None
        if self._watch > 0:
            self._turn_base = self._last = self._sample()
            self._exact = True
        else:
            self._turn_cpu = self._meter.cpu_now()

    def measure(self, wall: float) -> Charge:
        """The current turn so far, ``wall`` seconds long."""
        now = self._sample()
        if self._turn_base is None:
            self._turn_base = self._last or now
        delay_ns, cpu_ns = self._meter.growth(self._turn_base, now)
        self._last = now
        if not self._exact:  # the base is older than the turn: its CPU is not all the turn's
            if self._turn_cpu is not None:
                cpu_ns = now.cpu_ns - self._turn_cpu
            else:
                self._cpu_from = self._cpu_from or now
                cpu_ns = self._meter.growth(self._cpu_from, now)[1]
        delay, cpu = delay_ns / 1e9, cpu_ns / 1e9
        return Charge(wall, fair_charge(wall, delay, cpu), delay, cpu)

    def on_reply(self, wall: float, budget: float) -> Charge | None:
        """The turn ended after ``wall`` seconds: its measure, or None when it was not
        sampled at its start and took at most :data:`SLOW` of ``budget`` (charge the wall)."""
        slow = wall > SLOW * budget
        if self._turn_base is None and not slow:
            return None
        charge = self.measure(wall)
        self._turn_base, self._exact = None, False
        self._watch = WATCH_TURNS if slow else self._watch - 1
        return charge

    def extension(self, wall: float, budget: float) -> tuple[float | None, Charge]:
        """At a deadline, ``wall`` seconds into the turn: how long to wait before the next
        check (None: the bot is out of time) and the measure it is based on."""
        charge = self.measure(wall)
        self._watch = WATCH_TURNS
        ceiling = max(CEILING * budget, CEILING_FLOOR)
        if wall >= ceiling:
            return None, charge
        if charge.charged < budget:
            return min(max(budget - charge.charged, MIN_STEP * budget), ceiling - wall), charge
        if charge.cpu < budget and self._meter.runnable():
            # A task waiting for a CPU now has its current wait in no counter yet (the kernel
            # adds it when the task runs): look again once it may have run. A task that runs
            # instead adds CPU, which the guard charges.
            return min(max(MIN_STEP * budget, WAIT_STEP), ceiling - wall), charge
        return None, charge


async def wait_for_hellos(
    waits: Sequence[asyncio.Future[None]],
    clocks: Sequence[FairClock | None],
    limit: float | Sequence[float],
) -> tuple[set[asyncio.Future[None]], list[Charge | None]]:
    """Wait for each seat's hello (``waits[i]``) within ``limit`` seconds (or ``limit[i]``,
    each seat's own) of the time its bot could run (``clocks[i]``; None: wall time), the
    referee's own stalls meanwhile left out (:mod:`referee.net.stalls`): the start-up limit of
    the module docstring.

    Returns the waits that finished in time and, per seat, the measure that ended its wait
    when it ran out (None otherwise). Every seat with a clock is sampled at the start, and
    again when its hello arrives (the base of its first turns).
    """
    loop = asyncio.get_running_loop()
    stalls = stalls_of(loop)
    start = loop.time()
    for clock in clocks:
        if clock is not None:
            clock.mark()
    pending = {wait: index for index, wait in enumerate(waits)}
    finished: set[asyncio.Future[None]] = set()
    charges: list[Charge | None] = [None] * len(waits)
    limits = [float(limit)] * len(waits) if isinstance(limit, int | float) else list(limit)
    due = start + min(limits, default=0.0)
    counted = 0.0  # the referee's own stalls since the start, already added to ``due``

    def add_stalls() -> None:
        nonlocal due, counted
        extra = stalls.stalled(start) - counted
        if extra > 0:
            due, counted = due + extra, counted + extra

    while pending:
        add_stalls()
        done, _ = await asyncio.wait(set(pending), timeout=max(0.0, due - loop.time()))
        for wait in done:
            finished.add(wait)
            clock = clocks[pending.pop(wait)]
            if clock is not None:
                clock.mark()
        if not pending:
            break
        now = loop.time()
        add_stalls()
        if now < due:
            continue
        due = float("inf")
        for wait, index in list(pending.items()):
            clock = clocks[index]
            waited = now - start - counted
            if waited < limits[index]:  # a seat with a longer limit of its own
                due = min(due, now + limits[index] - waited)
                continue
            more = None
            if clock is not None:
                more, charges[index] = clock.extension(waited, limits[index])
            if more is None:
                del pending[wait]
            else:
                due = min(due, now + more)
    return finished, charges
