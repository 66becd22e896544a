"""A seat's clocks leave the referee's own stalls out: reply times, deadlines, the idle
heartbeat and the grace after a lost connection (:mod:`referee.net.stalls`)."""

from __future__ import annotations

import asyncio
import time

import pytest

from protocol.schema import ActionMsg, Ping, WireAction
from referee.match.fairclock import wait_for_hellos
from referee.match.faults import FaultKind
from referee.net.turns import turns_of
from tests.match.fakes import FAST, PEER, FakeTransport, bound
from tests.match.test_seat import Asker, budget

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(10)]

DRAW = WireAction("draw_stock")


async def test_a_reply_read_after_a_stall_is_charged_without_it() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    timer.advance(0.02)
    timer.stall(7.0)  # the bot replied meanwhile; the referee reads it as it resumes
    fake.deliver(PEER, ActionMsg(rid, DRAW), arrived=timer.time())
    ((_, elapsed),) = asker.replies
    assert elapsed == pytest.approx(0.02) and not asker.faults and link.fault is None
    assert link.clock.bank == FAST.bank  # nothing drawn from the bank for the stall


async def test_a_deadline_falling_due_in_a_stall_moves_on_by_its_length() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    limit = budget(link)
    rid = asker.ask(link)
    timer.advance(limit / 2)
    timer.stall(20.0)  # the watchdog runs late, at the stall's end: not a timeout
    assert not asker.faults and link.fault is None
    timer.advance(limit / 2 - 0.001)
    assert not asker.faults
    timer.advance(0.002)  # the bot's own time is up: it is timed out, the stall not counted
    (err,) = asker.faults
    assert err.fault.kind is FaultKind.TIMEOUT and err.fault.request_id == rid


async def test_an_idle_bot_is_not_silent_during_a_stall() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    link.start_heartbeat()
    timer.advance(FAST.heartbeat)
    timer.stall(50 * FAST.heartbeat)  # ten times the silence that makes a stall fault
    assert link.fault is None
    timer.advance(3 * FAST.heartbeat)  # still silent, now on its own time
    assert link.fault is None and any(isinstance(m, Ping) for m in fake.messages(PEER))
    timer.advance(2 * FAST.heartbeat)
    assert link.fault is not None and link.fault.kind is FaultKind.STALL


async def test_the_grace_after_a_lost_connection_runs_on_through_a_stall() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    fake.lose(PEER)
    timer.advance(link.lost_grace / 2)
    timer.stall(5.0)
    assert link.fault is None  # a crash seen now would still win
    timer.advance(link.lost_grace / 2 + 0.001)
    assert link.fault is not None and "connection lost" in link.fault.detail


async def test_the_start_up_limit_runs_on_through_a_stall() -> None:
    """A real loop frozen for 1 s (a callback that blocks) while a hello is awaited with a
    0.5 s limit: the hello 0.3 s of the bot's own time later is in time."""
    loop = asyncio.get_running_loop()
    turns_of(loop)  # the loop's selects are timed from now on (the transport does it)
    await asyncio.sleep(0)
    hello: asyncio.Future[None] = loop.create_future()
    loop.call_later(0.1, time.sleep, 1.0)
    loop.call_later(1.4, hello.set_result, None)
    assert (await wait_for_hellos([hello], [None], 0.5))[0] == {hello}
    late: asyncio.Future[None] = loop.create_future()
    assert (await wait_for_hellos([late], [None], 0.2))[0] == set()  # no stall: it holds
