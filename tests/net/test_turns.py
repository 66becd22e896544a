"""Receive stamps that leave the loop's own busy time out (:mod:`referee.net.turns`)."""

from __future__ import annotations

import asyncio

import pytest

from referee.net.turns import LoopTurns, turns_of

pytestmark = pytest.mark.timeout(10)


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeSelector:
    """A selector: a poll (timeout 0) finds ``ready``; a wait takes ``wait`` seconds of the
    fake clock and finds one event."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.ready: list[int] = []
        self.wait = 0.0
        self.calls: list[float | None] = []

    def select(self, timeout: float | None = None) -> list[int]:
        self.calls.append(timeout)
        if timeout == 0:
            return self.ready
        self.clock.now += self.wait
        return [1]


def turns() -> tuple[LoopTurns, FakeSelector, FakeClock]:
    clock = FakeClock()
    selector = FakeSelector(clock)
    return LoopTurns(selector, clock), selector, clock


def test_bytes_that_woke_an_idle_loop_arrived_when_select_returned() -> None:
    tracker, selector, clock = turns()
    selector.wait = 0.040  # idle 40 ms until the reply came
    assert selector.select(1.0) == [1] and selector.calls == [0, 1.0]
    clock.now += 0.002  # reading them takes a moment
    assert tracker.waited and tracker.arrival() == pytest.approx(100.040)


def test_bytes_waiting_after_a_busy_turn_arrived_no_earlier_than_its_start() -> None:
    tracker, selector, clock = turns()
    selector.wait = 0.010
    selector.select(0.5)  # turn 1 starts at 100.010
    clock.now += 0.200  # the loop is busy for 200 ms (a spawn, a long callback)
    selector.ready = [1]  # the reply came meanwhile: the poll finds it, no wait
    assert selector.select(0.5) == [1] and selector.calls == [0, 0.5, 0]
    assert not tracker.waited
    assert tracker.arrival() == pytest.approx(100.010)  # the busy 200 ms are left out


def test_bytes_drained_in_a_timer_arrived_after_this_turns_select() -> None:
    tracker, selector, clock = turns()
    selector.select(0)  # nothing ready and no wait asked: the loop has callbacks to run
    assert selector.calls == [0] and not tracker.waited
    began = clock.now
    clock.now += 0.3  # a callback blocks, then the watchdog drains the socket
    tracker.draining(True)
    assert tracker.arrival() == began
    tracker.draining(False)


def test_without_a_python_selector_stamps_are_the_time_of_reading() -> None:
    clock = FakeClock()
    tracker = LoopTurns(None, clock)
    clock.now += 1.0
    assert not tracker.timed and tracker.arrival() == 101.0


def test_a_loop_is_timed_once_and_keeps_running() -> None:
    async def main() -> LoopTurns:
        loop = asyncio.get_running_loop()
        first = turns_of(loop)
        assert turns_of(loop) is first and first.timed
        await asyncio.sleep(0)  # one turn of the loop through the timed select
        assert first.returned >= first.previous
        return first

    assert asyncio.run(main()).timed
