"""The fair clock's formula, guard and deadline moves, on a scripted meter (no processes)."""

from __future__ import annotations

import asyncio

import pytest

from referee.match.fairclock import (
    CEILING,
    CEILING_FLOOR,
    WAIT_STEP,
    FairClock,
    fair_charge,
    wait_for_hellos,
)
from referee.net.runqueue import Sample, growth

MS = 1_000_000  # ns


class ScriptedMeter:
    """Counters set by the test: seat CPU and one run-queue delay per task."""

    def __init__(self) -> None:
        self.cpu = 0
        self.delays: dict[int, int] = {}
        self.queued = 0
        """Tasks runnable now, their current wait in no counter yet."""

    def sample(self) -> Sample:
        return Sample(self.cpu, dict(self.delays), {})

    def growth(self, before: Sample, after: Sample) -> tuple[int, int]:
        return growth(before, after, from_cgroup=True)

    def cpu_now(self) -> int | None:
        return self.cpu

    def runnable(self) -> int:
        return self.queued


class UncountedMeter(ScriptedMeter):
    """A seat without a cgroup: no cheap reading of its CPU."""

    def cpu_now(self) -> int | None:
        return None


def test_waiting_for_a_core_is_excused_running_is_charged() -> None:
    assert fair_charge(0.2, 0.19, 0.004) == pytest.approx(0.01)
    assert fair_charge(0.2, 0.0, 0.004) == 0.2  # blocked (its own I/O): charged


def test_the_guard_charges_the_cpu_of_threads_waiting_side_by_side() -> None:
    """Eight threads queued in parallel: the summed delay is eight times the wall time; the
    seat is charged its CPU, so the thinking thread's CPU is always in the charge."""
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    meter.delays = {tid: 450 * MS for tid in range(9)}
    meter.cpu = 60 * MS
    charge = clock.measure(0.5)
    assert charge.delay == pytest.approx(9 * 0.45)
    assert charge.charged == pytest.approx(0.06)
    assert charge.excused == pytest.approx(0.44)


def test_never_more_than_the_wall_time() -> None:
    assert fair_charge(0.05, 0.0, 0.4) == 0.05


def test_tasks_started_during_the_turn_count_from_zero() -> None:
    before = Sample(0, {1: 5 * MS}, {})
    after = Sample(0, {1: 7 * MS, 2: 3 * MS}, {})
    assert growth(before, after, from_cgroup=True) == (5 * MS, 0)


def test_a_fast_unwatched_reply_reads_nothing() -> None:
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.begin()
    assert clock.on_reply(0.001, 0.05) is None
    assert clock.samples == 0


def test_the_deadline_moves_by_what_is_left_then_times_out() -> None:
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    clock.begin()
    meter.delays = {1: 40 * MS}
    meter.cpu = 5 * MS
    more, charge = clock.extension(0.05, 0.05)  # 10 ms charged of 50: 40 ms more
    assert more == pytest.approx(0.04) and charge.charged == pytest.approx(0.01)
    meter.cpu = 50 * MS  # it computed: out of time, whatever the delay
    meter.delays = {1: 500 * MS}
    more, charge = clock.extension(0.09, 0.05)
    assert more is None and charge.charged == pytest.approx(0.05)


def test_a_wait_in_progress_is_looked_at_again_not_charged() -> None:
    """The kernel counts a wait when it ends: a task queued at the deadline shows none of it.
    The clock looks again while a task is runnable and the CPU is under the budget; once the
    task has run, its wait is counted and the turn goes on."""
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    clock.begin()
    meter.cpu, meter.queued = 1 * MS, 1  # 20 ms of wall, 1 ms of CPU, the rest a wait in progress
    more, charge = clock.extension(0.02, 0.02)
    assert charge.charged == pytest.approx(0.02)  # what the counters say so far
    assert more == pytest.approx(WAIT_STEP)
    meter.delays, meter.queued = {1: 24 * MS}, 0  # it ran: the kernel added the wait
    more, charge = clock.extension(0.025, 0.02)
    assert charge.charged == pytest.approx(0.001)
    assert more == pytest.approx(0.019)


def test_a_runnable_task_that_computes_is_charged_and_a_sleeping_one_is_not_waited_for() -> None:
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    clock.begin()
    meter.cpu, meter.queued = 20 * MS, 1  # running, not waiting: its CPU reached the budget
    more, charge = clock.extension(0.02, 0.02)
    assert more is None and charge.charged == pytest.approx(0.02)
    asleep = ScriptedMeter()
    clock = FairClock(asleep)
    clock.mark()
    clock.begin()
    asleep.cpu = 1 * MS  # 19 ms blocked, nothing runnable: charged, out of time
    more, charge = clock.extension(0.02, 0.02)
    assert more is None and charge.charged == pytest.approx(0.02)


def test_a_wait_in_progress_does_not_pass_the_ceiling() -> None:
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    meter.queued = 3
    more, _ = clock.extension(CEILING_FLOOR - 0.001, 0.02)
    assert more == pytest.approx(0.001)
    more, _ = clock.extension(CEILING_FLOOR, 0.02)
    assert more is None


@pytest.mark.parametrize("budget", [0.5, 0.05, 0.02])
def test_the_wall_time_ceiling(budget: float) -> None:
    """Ten budgets of wall time, and never less than a second (a loaded machine's loop lag
    outlasted ten budgets of 20 ms)."""
    ceiling = max(CEILING * budget, CEILING_FLOOR)
    assert ceiling == (5.0 if budget == 0.5 else 1.0)
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    meter.delays = {1: 10_000 * MS}
    more, _ = clock.extension(ceiling - 0.01, budget)
    assert more == pytest.approx(0.01)  # not beyond the ceiling
    more, _ = clock.extension(ceiling, budget)
    assert more is None


@pytest.mark.asyncio
@pytest.mark.timeout(10)
async def test_the_start_up_limit_counts_time_the_bot_could_run() -> None:
    """A bot that waited for a core gets its hello in; a blocked one is late as before."""
    waiting, blocked = ScriptedMeter(), ScriptedMeter()
    clocks = [FairClock(waiting), FairClock(blocked)]
    loop = asyncio.get_running_loop()
    waits: list[asyncio.Future[None]] = [loop.create_future(), loop.create_future()]
    loop.call_later(0.05, waiting.delays.__setitem__, 1, 10_000 * MS)  # it waits for a core
    loop.call_later(0.15, waits[0].set_result, None)
    finished, charges = await wait_for_hellos(waits, clocks, 0.1)
    assert finished == {waits[0]}
    assert charges[0] is not None and charges[0].charged < 0.1
    assert charges[1] is not None and charges[1].charged >= 0.1


def test_cpu_used_before_an_unsampled_turn_is_not_charged_to_it() -> None:
    """A bot that pondered 80 ms on the opponent's time, then waited 45 ms of a 50 ms turn for
    a core and answered with 2 ms of CPU: the turn's own CPU is charged, not the pondering
    (charging it once timed out instant bots at 50 ms under load)."""
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    meter.cpu = 80 * MS  # between turns
    clock.begin()  # not watched: no sample, one cheap reading of the CPU
    assert clock.samples == 1
    meter.cpu += 2 * MS
    meter.delays = {1: 45 * MS}
    more, charge = clock.extension(0.05, 0.05)
    assert charge.cpu == pytest.approx(0.002)
    assert more is not None and charge.charged == pytest.approx(0.005)


def test_the_guard_still_counts_all_of_the_turns_own_cpu() -> None:
    """Eight threads queued side by side in an unsampled turn: the summed delay excuses the
    wall time, the turn's 50 ms of CPU are charged: out of time."""
    meter = ScriptedMeter()
    clock = FairClock(meter)
    clock.mark()
    meter.cpu = 30 * MS
    clock.begin()
    meter.cpu += 50 * MS
    meter.delays = {tid: 400 * MS for tid in range(8)}
    more, charge = clock.extension(0.4, 0.05)
    assert more is None and charge.charged == pytest.approx(0.05)


def test_without_a_cgroup_the_cpu_counts_from_the_first_check() -> None:
    meter = UncountedMeter()
    clock = FairClock(meter)
    clock.mark()
    meter.cpu = 80 * MS
    clock.begin()
    meter.delays = {1: 45 * MS}
    more, charge = clock.extension(0.05, 0.05)
    assert more is not None and charge.cpu == 0 and charge.charged == pytest.approx(0.005)
    meter.cpu += 50 * MS  # it computes from here on: charged, out of time
    more, charge = clock.extension(0.1, 0.05)
    assert more is None and charge.cpu == pytest.approx(0.05)
