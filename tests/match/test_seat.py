"""The hub and a seat driven through an in-memory transport: handshake, decisions, faults."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from protocol.codec import encode
from protocol.schema import (
    ActionMsg,
    Bye,
    Error,
    Event,
    Ping,
    Pong,
    Request,
    WireAction,
    WireView,
)
from referee.match.faults import BotFault, FaultKind
from referee.match.hub import Hub
from referee.match.outbox import MAX_ERROR_REPLIES
from referee.match.seat import SeatLink
from tests.match.fakes import FAST, PEER, FakeTransport, VirtualTimer, bound

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(10)]

VIEW = WireView(0, "draw", 0, 1, ("As",) * 0, (), 31, 10, (), 10, 1, 0, (0, 0), None)


def request(link: SeatLink) -> Request:
    return Request(link.new_request_id(), "draw", (WireAction("draw_stock"),), VIEW, 100, 50)


class Asker:
    """Records the callbacks of :meth:`SeatLink.ask`."""

    def __init__(self) -> None:
        self.replies: list[tuple[WireAction, float]] = []
        self.faults: list[BotFault] = []

    def on_reply(self, action: WireAction, elapsed: float) -> None:
        self.replies.append((action, elapsed))

    def on_fault(self, err: Exception) -> None:
        assert isinstance(err, BotFault), err  # a referee error is not expected here
        self.faults.append(err)

    def ask(self, link: SeatLink) -> int:
        req = request(link)
        link.ask(req.request_id, encode(req), self.on_reply, self.on_fault)
        return req.request_id


def budget(link: SeatLink) -> float:
    """The deadline of the next request, from when it is sent."""
    return link.clock.time_left + link.control.grace


async def test_the_reply_is_charged_to_the_clock_and_stale_ones_are_dropped() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    assert isinstance(fake.messages(PEER)[-1], Request)
    timer.advance(0.03)
    fake.deliver(PEER, ActionMsg(rid + 100, WireAction("draw_stock")))
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))
    ((action, elapsed),) = asker.replies
    assert action == WireAction("draw_stock") and elapsed == pytest.approx(0.03)
    assert not asker.faults
    assert link.clock.decisions == 1 and link.clock.used == pytest.approx(0.03)
    assert link.stale_replies == 1
    errors = [m for m in fake.messages(PEER) if isinstance(m, Error)]
    assert [e.code for e in errors] == ["stale_request"] and errors[0].request_id == rid + 100
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))  # a late duplicate
    assert len(asker.replies) == 1 and link.stale_replies == 2 and link.fault is None


async def test_overtime_is_drawn_from_the_bank_and_shortens_the_next_deadline() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    timer.advance(FAST.move + 0.02)  # 0.02 s over the move time, within the bank
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))
    assert link.clock.bank == pytest.approx(FAST.bank - 0.02) and not asker.faults
    asker.ask(link)
    timer.advance(FAST.move + FAST.bank - 0.02 + FAST.grace - 0.001)
    assert not asker.faults
    timer.advance(0.002)
    assert [f.fault.kind for f in asker.faults] == [FaultKind.TIMEOUT]


async def test_one_timer_per_seat_times_out_the_request_outstanding() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    first = asker.ask(link)
    fake.deliver(PEER, ActionMsg(first, WireAction("draw_stock")))
    # Time passes, so that the alarm set for the first deadline fires while the second
    # request is outstanding: it must be set again for the second deadline, not fire early.
    timer.advance(FAST.move)
    sent, limit = timer.time(), budget(link)
    second = asker.ask(link)
    timer.advance(limit - 0.001)
    assert not asker.faults and link.fault is None
    timer.advance(0.002)
    (err,) = asker.faults
    assert err.fault.kind is FaultKind.TIMEOUT and err.fault.request_id == second
    assert err.fault.at - sent == pytest.approx(limit)
    assert timer.pending == 0  # one alarm per seat: none left behind


async def test_a_closed_seat_is_never_timed_out() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    asker.ask(link)
    link.close()
    timer.advance(10 * budget(link))
    assert link.fault is None and not asker.faults and not asker.replies
    assert timer.pending == 0


async def test_ask_calls_on_fault_on_timeout_and_never_on_reply() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    timer.advance(budget(link))
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))  # too late
    assert not asker.replies and len(asker.faults) == 1
    fault = asker.faults[0].fault
    assert fault.kind is FaultKind.TIMEOUT and fault.request_id == rid


@pytest.mark.parametrize("broken", ["faulted", "unreachable"])
async def test_ask_that_cannot_be_sent_calls_on_fault_once(broken: str) -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    if broken == "faulted":
        link.record_fault(FaultKind.CRASH, "gone")
    else:
        fake.reachable = False
    asker = Asker()
    asker.ask(link)
    kind = FaultKind.CRASH if broken == "faulted" else FaultKind.STALL
    assert [f.fault.kind for f in asker.faults] == [kind] and not asker.replies


async def test_a_reply_drained_at_the_deadline_that_asks_again_is_not_a_timeout() -> None:
    # The reply is waiting in the transport when the deadline fires; delivering it makes the
    # asker ask the same seat again (a draw, then the discard): that new request must not be
    # timed out by the old deadline.
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    asker = Asker()
    first = request(link)
    second = request(link)

    def ask_again(action: WireAction, elapsed: float) -> None:
        asker.on_reply(action, elapsed)
        link.ask(second.request_id, encode(second), asker.on_reply, asker.on_fault)

    link.ask(first.request_id, encode(first), ask_again, asker.on_fault)
    waiting = ActionMsg(first.request_id, WireAction("draw_stock"))
    fake.on_drain = lambda: fake.deliver(PEER, waiting)
    limit = budget(link)
    timer.advance(limit)
    fake.on_drain = None
    assert len(asker.replies) == 1 and not asker.faults and link.fault is None
    timer.advance(limit)  # the second request's own deadline
    assert [f.fault.request_id for f in asker.faults] == [second.request_id]


async def test_a_cancelled_ask_calls_nothing_and_its_reply_is_stale() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    link.cancel_ask()
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))
    link.record_fault(FaultKind.CRASH, "gone")
    assert not asker.replies and not asker.faults and link.stale_replies == 1


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (b"\xc1", FaultKind.MALFORMED),
        ({"type": "action", "request_id": "x"}, FaultKind.MALFORMED),
        ({"type": "hello", "protocol_version": 1, "name": "n", "token": "t"}, FaultKind.PROTOCOL),
        ({"type": "bye"}, FaultKind.STALL),
    ],
)
async def test_bad_frames_fail_the_outstanding_request(frame: object, kind: FaultKind) -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    asker = Asker()
    asker.ask(link)
    if isinstance(frame, bytes):
        fake.deliver(PEER, frame)
    else:
        fake.deliver_raw(PEER, frame)
    assert [f.fault.kind for f in asker.faults] == [kind] and not asker.replies


@pytest.mark.parametrize(
    ("frame", "detail"),
    [
        (b"\xc1", "not valid msgpack: FormatError at first byte 0xc1"),
        (b"\x92\x01", "not valid msgpack: Unpack failed: incomplete input"),
    ],
)
async def test_a_malformed_frame_is_named_once(frame: bytes, detail: str) -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    fake.deliver(PEER, frame)
    assert link.fault is not None and link.fault.kind is FaultKind.MALFORMED
    assert link.fault.detail == detail  # not "malformed: malformed: ..." nor an empty reason


async def test_a_finer_malformed_code_is_kept_in_the_detail() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    fake.deliver_raw(PEER, {"type": "action", "request_id": "x"})
    assert link.fault is not None and link.fault.detail.startswith("bad_type: ")


async def test_flooding_is_a_protocol_fault() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    for i in range(10):
        fake.deliver(PEER, ActionMsg(1000 + i, WireAction("draw_stock")))
    assert link.fault is not None and link.fault.kind is FaultKind.PROTOCOL
    assert sum(isinstance(m, Error) for m in fake.messages(PEER)) == MAX_ERROR_REPLIES


async def test_an_unreachable_peer_is_a_stall() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    fake.reachable = False
    link.send(Bye())
    assert link.fault is not None and link.fault.kind is FaultKind.STALL


async def test_heartbeat_pings_an_idle_bot_and_a_silent_one_stalls() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    link.start_heartbeat()
    timer.advance(2 * FAST.heartbeat + 0.001)
    assert [m for m in fake.messages(PEER) if isinstance(m, Ping)] == [Ping(1)]
    assert link.fault is None
    timer.advance(4 * FAST.heartbeat)
    assert link.fault is not None and link.fault.kind is FaultKind.STALL
    assert "heartbeats" in link.fault.detail
    assert timer.pending == 0  # a stalled seat is pinged no more


async def test_pongs_keep_an_idle_bot_alive_and_a_busy_one_is_not_pinged() -> None:
    """Each ping answered with its nonce: no stall, and no pong is unsolicited."""
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    link.start_heartbeat()
    answered = 0
    for _ in range(10):  # 10 intervals, twice the 5 a silent bot gets
        timer.advance(FAST.heartbeat)
        pings_now = [m for m in fake.messages(PEER) if isinstance(m, Ping)]
        for ping in pings_now[answered:]:
            fake.deliver(PEER, Pong(ping.nonce))
        answered = len(pings_now)
    assert link.fault is None and link.unsolicited == 0 and answered >= 3
    control = replace(FAST, move=10.0)
    busy_fake = FakeTransport()
    _, busy, busy_timer = await bound(busy_fake, control)
    busy.start_heartbeat()
    Asker().ask(busy)  # thinking: a bot with a request outstanding is not pinged
    busy_timer.advance(8 * control.heartbeat)
    assert busy.fault is None
    assert not [m for m in busy_fake.messages(PEER) if isinstance(m, Ping)]
    link.close()
    assert timer.pending == 0


async def test_held_events_go_before_any_other_message() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    first, second = (Event(1, WireAction("discard", card)) for card in ("As", "Kd"))
    link.hold_event(encode(first))
    link.hold_event(encode(second))
    link.send(Ping(9))
    assert fake.messages(PEER)[-3:] == [first, second, Ping(9)]
    link.hold_event(encode(first))
    fake.deliver(PEER, ActionMsg(77, WireAction("draw_stock")))  # stale: answered with an error
    *_, event, error = fake.messages(PEER)
    assert event == first and isinstance(error, Error) and error.code == "stale_request"
    link.hold_event(encode(second))
    assert link.take_held() == [encode(second)] and link.take_held() == []


async def test_a_fault_before_the_hello_ends_the_wait_for_it() -> None:
    fake = FakeTransport()
    hub = Hub(fake, timer=VirtualTimer())
    link = hub.open_seat(0, FAST, name="starter", seed="7")
    assert (link.name, link.seed) == ("starter", "7")
    waiting = asyncio.ensure_future(link.wait_connected())
    await asyncio.sleep(0)  # let it wait
    link.record_fault(FaultKind.CRASH, "exited with code 3 before saying hello")
    with pytest.raises(BotFault) as info:
        await waiting
    assert info.value.fault.kind is FaultKind.CRASH and not link.connected.done()


async def test_a_seat_is_bound_once_and_named_by_the_hello() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    assert link.name == f"bot-{PEER.hex()}" and link.hello is not None
    await link.wait_connected()
    with pytest.raises(RuntimeError, match="bound already"):
        link.bind(b"other", link.hello, multi_match=False, arrived=0.0)
    assert link.peer == PEER


async def test_a_new_game_refills_the_bank_and_forgets_unsolicited_messages() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    link.enter(0, 0)
    rid = Asker().ask(link)
    timer.advance(FAST.move + 0.03)
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))  # stale
    assert link.clock.bank < FAST.bank and link.unsolicited == 1
    link.enter(0, 1)  # the same game: nothing changes but the hand
    assert link.clock.bank < FAST.bank and (link.game, link.hand) == (0, 1)
    link.enter(1, 0)
    assert link.clock.bank == FAST.bank and link.unsolicited == 0
    link.record_fault(FaultKind.TIMEOUT, "slow")
    assert link.fault is not None and (link.fault.game, link.fault.hand) == (1, 0)


@pytest.mark.parametrize("inline", [True, False])
async def test_released_events_go_now_unless_the_bot_takes_them_inline(inline: bool) -> None:
    fake = FakeTransport()
    hub = Hub(fake, timer=VirtualTimer())
    link = hub.open_seat(0, FAST)
    fake.hello(PEER, link.token, inline_events=inline)
    event = Event(1, WireAction("discard", "As"))
    link.hold_event(encode(event))
    link.release_events()
    assert (event in fake.messages(PEER)) is not inline
    assert link.take_held() == ([encode(event)] if inline else [])


async def test_pongs_to_no_ping_count_toward_the_flood_limit() -> None:
    fake = FakeTransport()
    _, link, _timer = await bound(fake)
    for nonce in range(FAST.flood_limit):
        fake.deliver(PEER, Pong(10_000 + nonce))
    assert link.fault is None and link.unsolicited == FAST.flood_limit
    fake.deliver(PEER, Pong(1))  # no ping was ever sent
    assert link.fault is not None and link.fault.kind is FaultKind.PROTOCOL
    assert "flooding" in link.fault.detail
