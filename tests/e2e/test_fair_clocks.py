"""Fair clocks with real processes: a loaded machine does not time out an instant bot, and a
bot that computes too long is timed out, load or not, however many threads it spins.

The load is made here (:func:`bench.hogs.hogs`: twice the cores of CPU hogs at nice 0, each
ending by itself within two minutes, killed when the test ends). Deadlines are the issue's:
50 ms per decision, no bank, no grace (the control's 200 ms: see :data:`CONTROL`). The
computing bot spins 100 ms of its thinking thread's CPU per decision
(``tests/bots/spin_bot.py``), so every request it gets must time out; with 8 threads
hashing beside it, their wait for a core swells the summed run-queue delay, and the guard
(the seat's CPU time is always charged) must leave it no better off.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.hogs import hogs
from referee.match.faults import FaultKind, FaultPolicy
from referee.match.result import MatchResult
from referee.net import cgroups
from referee.net.runqueue import available
from tests.e2e.helpers import BOTS, FAST, PY, RANDOM, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(240), pytest.mark.xdist_group("cpu-load")]
"""(``xdist_group``: run in parallel, the tests that load the machine run one after another, on
one test process, so that no test meets more than one test's load.)"""

TIGHT = replace(FAST, move=0.05, bank=0.0, grace=0.0, startup=60.0)
CONTROL = replace(TIGHT, move=0.2)
"""The control's deadline: 50 ms is the benchmark's (docs/tournaments.md, "Fair clocks": one
unexplained timeout in about 1,000 decisions was seen beside a second load); here 4x that."""
COMPUTES = f"{PY} {BOTS / 'spin_bot.py'} 0.1"
SLEEPS_RUNNABLE = f"{PY} {BOTS / 'slow_bot.py'} 2 yield"


@pytest.fixture(autouse=True)
def _kernel_counters() -> None:
    if not available():
        pytest.skip("NO /proc/PID/task/TID/schedstat ON THIS KERNEL: wall time is charged")
    found = cgroups.detect()
    if found.version is None:
        pytest.skip(f"NO CGROUP PER SEAT HERE (the guard needs its CPU counter): {found.reason}")


def timeouts(result: MatchResult, seat: int) -> int:
    return sum(1 for f in result.seats[seat].faults if f.kind is FaultKind.TIMEOUT)


async def attack(bot: str, games: int) -> MatchResult:
    return await play(
        bot, RANDOM, games=games, time=TIGHT, policy=FaultPolicy.FORFEIT_GAME,
        max_hands_per_game=1,
    )  # fmt: skip


@pytest.mark.parametrize("threads", ["", " 8"], ids=["one-thread", "8-threads"])
async def test_a_bot_computing_too_long_times_out_every_time_load_or_not(threads: str) -> None:
    for loaded in (False, True):
        with hogs(seconds=120) if loaded else _nothing():
            result = await attack(COMPUTES + threads, games=3)
        # never answered in time; every game it was asked in is its timeout (a game its
        # starved opponent forfeited first, under the 10x wall-time ceiling, asks it nothing)
        assert result.seats[0].decisions == 0, (loaded, result.seats[0])
        assert result.games_played == 3
        faults = [s.faults for s in result.seats]
        assert timeouts(result, 0) + len(faults[1]) >= 3 and timeouts(result, 0) >= 1, faults
        assert all(f.kind is FaultKind.TIMEOUT for f in faults[0]), faults
        assert "charged" in result.seats[0].faults[0].detail


async def test_a_sleeping_bot_with_a_runnable_thread_is_timed_out_load_or_not() -> None:
    """A deadline check that finds the budget spent looks again while a task of the seat is
    runnable (its wait may not be counted yet). A bot that sleeps 2 s with a thread kept
    runnable (``sched_yield`` in a loop) must not buy its sleep that way: it is out of time
    when its CPU reaches the budget or at the wall-time ceiling (1 s), load or not."""
    for loaded in (False, True):
        with hogs(seconds=120) if loaded else _nothing():
            result = await attack(SLEEPS_RUNNABLE, games=2)
        assert result.seats[0].decisions == 0, (loaded, result.seats[0])
        faults = [s.faults for s in result.seats]
        assert timeouts(result, 0) >= 1 and all(f.kind is FaultKind.TIMEOUT for f in faults[0])
        assert "charged" in result.seats[0].faults[0].detail


async def test_instant_bots_on_a_loaded_machine_are_not_timed_out() -> None:
    """The control: the sample random bots, no bank, no grace, beside the same load. (Random
    play seldom knocks: two uncapped games ran 120 s, the hogs filling both cores all along,
    beside every other test; three hands a game are over 100 decisions a seat.)"""
    with hogs(seconds=120):
        result = await play(RANDOM, RANDOM, games=2, time=CONTROL, max_hands_per_game=3)
    assert result.reason == "normal", result
    assert [s.faults for s in result.seats] == [[], []]
    assert min(s.decisions for s in result.seats) > 100, result.seats


class _nothing:  # noqa: N801 (a context manager, used like ``hogs``)
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
