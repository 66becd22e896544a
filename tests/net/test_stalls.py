"""The referee's own stalls: found by the loop's ``select`` timing, kept, and left out of the
heartbeat silence (:mod:`referee.net.stalls`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import pytest
import zmq

from referee.net.stalls import STALL_THRESHOLD, TICK, StallLog
from referee.net.transport import RouterTransport, TransportConfig
from referee.net.turns import turns_of

from .conftest import TrackingContext
from .test_transport import collector, recv1
from .test_turns import turns

pytestmark = pytest.mark.timeout(20)


def test_a_late_wake_up_is_a_stall_from_when_the_select_began(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tracker, selector, clock = turns()
    selector.wait = 0.05
    selector.select(0.1)  # woken within its timeout: idle, no stall
    assert tracker.stalls.last_end == float("-inf")
    began = clock.now
    selector.wait = 7.0  # a 0.1 s wait that took 7 s: the process was stopped meanwhile
    with caplog.at_level(logging.WARNING, "referee.net.stalls"):
        selector.select(0.1)
    assert tracker.stalls.spans_between(0, 1e9) == [(began, began + 7.0)]
    assert tracker.stalls.last_end == clock.now
    (line,) = [r.getMessage() for r in caplog.records]
    assert "stalled for 7.00 s" in line  # logged once, with its length
    assert tracker.arrival() == clock.now  # (stamps unchanged: the stall is excused apart)


def test_a_busy_gap_is_a_stall_and_a_short_one_is_not() -> None:
    tracker, selector, clock = turns()
    selector.select(0)
    clock.now += STALL_THRESHOLD / 2  # a callback of half the threshold: no stall
    selector.select(0)
    assert tracker.stalls.last_end == float("-inf")
    returned = clock.now
    clock.now += 2.0  # a callback frozen for 2 s
    selector.ready = [1]
    selector.select(0.5)
    assert tracker.stalls.spans_between(0, 1e9) == [(returned, returned + 2.0)]


def test_an_endless_wait_is_no_stall_and_the_first_select_is_not_a_busy_gap() -> None:
    tracker, selector, clock = turns()
    clock.now += 5.0  # made long before the loop's first select
    selector.wait = 30.0
    selector.select(None)  # no timer at all: idle for 30 s proves nothing
    assert tracker.stalls.last_end == float("-inf")


def test_stalled_sums_the_overlap_with_an_interval() -> None:
    log = StallLog()
    log.add(10.0, 12.0)
    log.add(20.0, 27.0)
    assert log.stalled(0.0) == 9.0
    assert log.stalled(11.0, 21.0) == pytest.approx(2.0)
    assert log.stalled(27.0) == 0.0 and log.stalled(12.0, 20.0) == 0.0
    assert log.spans_between(11.0, 25.0) == [(11.0, 12.0), (20.0, 25.0)]
    window = log.window(15.0)
    log.note_lag(0.3)
    assert window.close(30.0) == {"lag_max": 7.0, "stalls": [[5.0, 7.0]]}
    assert not log.windows  # a closed window gathers no more
    other = log.window(30.0)
    log.note_lag(0.02)
    assert other.close(31.0) == {"lag_max": 0.02, "stalls": []}


@pytest.mark.asyncio
async def test_a_stalled_referee_drops_no_peer_for_heartbeat_silence(
    zmq_context: TrackingContext,
) -> None:
    """The loop frozen for 1 s, more than three times the 300 ms heartbeat timeout: the peer
    (which answers every PING) keeps its connection, and the stall is recorded. (The control,
    a stopped peer dropped after 300 ms: test_transport's test_heartbeat_detects_stopped_peer.)
    """
    cfg = TransportConfig(heartbeat_ivl_ms=100, heartbeat_timeout_ms=300, heartbeat_ttl_ms=3000)
    async with RouterTransport(cfg) as t:
        sock = zmq_context.socket(zmq.DEALER)
        try:
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.RCVTIMEO, 3000)
            sock.connect(t.endpoint)
            sock.send(b"hi")
            peer = (await recv1(t, within=10)).peer
            await asyncio.sleep(2 * TICK)  # the watch ticks: selects are short
            frozen_at = asyncio.get_running_loop().time()
            time.sleep(1.0)  # noqa: ASYNC251 (the point: the loop frozen, as in a long GC)
            await asyncio.sleep(3 * cfg.heartbeat_ivl_ms / 1000)  # several beats after it
            assert collector(t).lost.empty()
            assert t.send(peer, b"still there")
            assert sock.recv() == b"still there"
            stalls = turns_of(asyncio.get_running_loop()).stalls
            assert stalls.stalled(frozen_at - 0.5) == pytest.approx(1.0, abs=0.3)
        finally:
            sock.close(linger=0)


@pytest.mark.asyncio
async def test_the_watch_ticks_only_while_a_transport_is_open() -> None:
    loop = asyncio.get_running_loop()
    watched: Callable[[], bool] = lambda: turns_of(loop)._tick is not None  # noqa: E731
    assert not watched()
    async with RouterTransport(TransportConfig()):
        assert watched()
    assert not watched()
