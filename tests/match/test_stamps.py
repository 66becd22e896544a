"""The time charged to a bot runs from the send stamp (after the write) to the transport's
receive stamp of its reply, not to when the referee got round to reading it."""

from __future__ import annotations

import pytest

from protocol.schema import ActionMsg, WireAction
from referee.match.clock import TimeControl
from referee.match.faults import FaultKind
from tests.match.fakes import FAST, PEER, FakeTransport, bound
from tests.match.test_seat import Asker, budget

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(10)]

DRAW = WireAction("draw_stock")


@pytest.mark.parametrize(
    ("read_after", "stamp", "charged"),
    [
        # The referee was busy: it reads the reply 40 ms after the send; it came after 10 ms.
        (0.04, 0.01, 0.01),
        # A stamp later than the timer's now is not believed.
        (0.02, 5.0, 0.02),
        # The stamp is a lower bound (the start of the loop turn that read the bytes), which
        # can fall before the send when the reply came within that turn: no negative charge.
        (0.03, -0.01, 0.0),
    ],
)
async def test_the_charge_stops_at_the_receive_stamp(
    read_after: float, stamp: float, charged: float
) -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    sent = timer.time()
    rid = asker.ask(link)
    timer.advance(read_after)
    fake.deliver(PEER, ActionMsg(rid, DRAW), arrived=sent + stamp)
    ((_, elapsed),) = asker.replies
    assert elapsed == pytest.approx(charged)
    assert link.clock.used == pytest.approx(charged) and link.clock.bank == FAST.bank


async def test_the_charge_starts_when_the_request_was_written() -> None:
    # A write that takes 25 ms (a loaded machine): the bot is charged from its end.
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    asked = timer.time()
    fake.on_send = lambda: timer.advance(0.025)
    rid = asker.ask(link)
    fake.on_send = None
    assert timer.time() == pytest.approx(asked + 0.025)
    timer.advance(0.01)
    fake.deliver(PEER, ActionMsg(rid, DRAW))
    assert asker.replies[0][1] == pytest.approx(0.01)


async def test_a_reply_in_the_buffer_at_the_deadline_is_charged_by_its_stamp() -> None:
    # The loop was 300 ms late for the deadline; the reply had reached the referee 5 ms before
    # it. The drain before the timeout delivers it: no fault, and the bot is charged 5 ms less
    # than its budget, not the loop's lateness.
    control = TimeControl(move=0.05, bank=0.0, grace=0.0, heartbeat=1.0)
    fake = FakeTransport()
    _, link, timer = await bound(fake, control)
    asker = Asker()
    sent = timer.time()
    rid = asker.ask(link)
    limit = budget(link)
    reply = ActionMsg(rid, DRAW)
    fake.on_drain = lambda: fake.deliver(PEER, reply, arrived=sent + limit - 0.005)
    timer.advance(limit + 0.3)
    assert link.fault is None and not asker.faults
    assert asker.replies[0][1] == pytest.approx(limit - 0.005)
    fake.on_drain = None
    asker.ask(link)  # the next request has the full move time (no bank was drawn)
    timer.advance(limit - 0.001)
    assert not asker.faults
    timer.advance(0.002)
    assert [f.fault.kind for f in asker.faults] == [FaultKind.TIMEOUT]
