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
    Hello,
    Ping,
    Pong,
    Reject,
    Request,
    Welcome,
    WireAction,
    WireView,
)
from referee.match.clock import TimeControl
from referee.match.faults import BotFault, FaultKind
from referee.match.hub import Hub
from referee.match.seat import SeatLink
from tests.match.fakes import FakeTransport

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(10)]

FAST = TimeControl(move=0.05, bank=0.05, grace=0.01, heartbeat=0.02, flood_limit=5)
VIEW = WireView(0, "draw", 0, 1, ("As",) * 0, (), 31, 10, (), 10, 1, 0, (0, 0), None)
PEER = b"\x00peer"


def request(link: SeatLink) -> Request:
    return Request(link.new_request_id(), "draw", (WireAction("draw_stock"),), VIEW, 100, 50)


def ask(link: SeatLink) -> tuple[int, Request]:
    req = request(link)
    return req.request_id, req


async def bound(fake: FakeTransport, control: TimeControl = FAST) -> tuple[Hub, SeatLink]:
    hub = Hub(fake)
    link = hub.open_seat(0, control)
    fake.hello(PEER, link.token)
    await link.connected
    return hub, link


async def test_hello_binds_and_welcomes() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    assert link.peer == PEER and link.name == f"bot-{PEER.hex()}"
    assert isinstance(fake.messages(PEER)[0], Welcome)


@pytest.mark.parametrize(
    ("token", "version", "code"),
    [("nope", 1, "bad_token"), (None, 7, "version_unsupported")],
)
async def test_bad_hellos_are_rejected(token: str | None, version: int, code: str) -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    link = hub.open_seat(0, FAST)
    fake.hello(b"x", token or link.token, version)
    (reply,) = fake.messages(b"x")
    assert isinstance(reply, Reject) and reply.code == code and reply.supported_versions == (1,)
    assert not link.connected.done()


async def test_a_used_token_cannot_take_the_seat_again() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    fake.hello(b"thief", link.token)
    (reply,) = fake.messages(b"thief")
    assert isinstance(reply, Reject) and reply.code == "token_in_use"
    assert link.peer == PEER


async def test_strangers_must_say_hello_first() -> None:
    fake = FakeTransport()
    Hub(fake)
    fake.deliver(b"s", Pong(1))
    fake.deliver(b"t", b"\xc1garbage")
    (first,) = fake.messages(b"s")
    (second,) = fake.messages(b"t")
    assert isinstance(first, Error) and first.code == "unexpected_message"
    assert isinstance(second, Reject) and second.code == "malformed"


async def test_decide_returns_the_reply_and_drops_stale_ones() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    req = request(link)
    task = asyncio.ensure_future(link.decide(req.request_id, req))
    await asyncio.sleep(0)  # let decide send its request
    fake.deliver(PEER, ActionMsg(req.request_id + 100, WireAction("draw_stock")))
    fake.deliver(PEER, ActionMsg(req.request_id, WireAction("draw_stock")))
    action, elapsed = await task
    assert action == WireAction("draw_stock") and elapsed >= 0
    assert link.stale_replies == 1
    errors = [m for m in fake.messages(PEER) if isinstance(m, Error)]
    assert errors and errors[0].code == "stale_request"
    fake.deliver(PEER, ActionMsg(req.request_id, WireAction("draw_stock")))  # late duplicate
    assert link.stale_replies == 2 and link.fault is None


async def test_no_reply_is_a_timeout_fault() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    with pytest.raises(BotFault) as info:
        await link.decide(*ask(link))
    assert info.value.fault.kind is FaultKind.TIMEOUT
    assert info.value.fault.request_id is not None


async def test_one_timer_per_seat_times_out_the_request_outstanding() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    loop = asyncio.get_running_loop()
    first = request(link)
    task = asyncio.ensure_future(link.decide(first.request_id, first))
    await asyncio.sleep(0)
    fake.deliver(PEER, ActionMsg(first.request_id, WireAction("draw_stock")))
    await task
    # Let time pass, so that the timer armed for the first deadline fires while the second
    # request is outstanding: it must re-arm for the second deadline, not fire early.
    await asyncio.sleep(FAST.move)
    second = request(link)
    budget = link.clock.time_left + FAST.grace
    start = loop.time()
    with pytest.raises(BotFault) as info:
        await link.decide(second.request_id, second)
    assert info.value.fault.kind is FaultKind.TIMEOUT
    assert info.value.fault.request_id == second.request_id
    assert loop.time() - start >= budget - 0.002


async def test_a_closed_seat_is_never_timed_out() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    task = asyncio.ensure_future(link.decide(*ask(link)))
    await asyncio.sleep(0)
    link.close()
    await asyncio.sleep(FAST.move + FAST.bank + FAST.grace + 0.02)
    assert link.fault is None and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


class Asker:
    """Records the callbacks of :meth:`SeatLink.ask`."""

    def __init__(self) -> None:
        self.replies: list[tuple[WireAction, float]] = []
        self.faults: list[BotFault] = []
        self.called = asyncio.Event()

    def on_reply(self, action: WireAction, elapsed: float) -> None:
        self.replies.append((action, elapsed))
        self.called.set()

    def on_fault(self, err: BotFault) -> None:
        self.faults.append(err)
        self.called.set()

    def ask(self, link: SeatLink) -> int:
        req = request(link)
        link.ask(req.request_id, encode(req), self.on_reply, self.on_fault)
        return req.request_id


async def test_ask_calls_back_once_with_the_reply_and_charges_the_clock() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    assert isinstance(fake.messages(PEER)[-1], Request)
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))  # a duplicate is stale
    assert [a for a, _ in asker.replies] == [WireAction("draw_stock")]
    assert asker.replies[0][1] >= 0 and not asker.faults
    assert link.clock.decisions == 1 and link.stale_replies == 1 and link.fault is None


async def test_ask_calls_on_fault_on_timeout_and_never_on_reply() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    asker = Asker()
    rid = asker.ask(link)
    await asyncio.wait_for(asker.called.wait(), 5)
    fake.deliver(PEER, ActionMsg(rid, WireAction("draw_stock")))  # too late
    assert not asker.replies and len(asker.faults) == 1
    fault = asker.faults[0].fault
    assert fault.kind is FaultKind.TIMEOUT and fault.request_id == rid


@pytest.mark.parametrize("broken", ["faulted", "unreachable"])
async def test_ask_that_cannot_be_sent_calls_on_fault_once(broken: str) -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
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
    _, link = await bound(fake)
    asker = Asker()
    first = request(link)
    second = request(link)

    def ask_again(action: WireAction, elapsed: float) -> None:
        asker.on_reply(action, elapsed)
        link.ask(second.request_id, encode(second), asker.on_reply, asker.on_fault)

    link.ask(first.request_id, encode(first), ask_again, asker.on_fault)
    waiting = ActionMsg(first.request_id, WireAction("draw_stock"))
    fake.on_drain = lambda: fake.deliver(PEER, waiting)
    await asyncio.wait_for(asker.called.wait(), 5)
    fake.on_drain = None
    assert len(asker.replies) == 1 and not asker.faults and link.fault is None
    asker.called.clear()
    await asyncio.wait_for(asker.called.wait(), 5)  # the second request's own deadline
    assert [f.fault.request_id for f in asker.faults] == [second.request_id]


async def test_a_cancelled_ask_calls_nothing_and_its_reply_is_stale() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
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
    _, link = await bound(fake, TimeControl(move=5, bank=5, heartbeat=5))
    task = asyncio.ensure_future(link.decide(*ask(link)))
    await asyncio.sleep(0)
    if isinstance(frame, bytes):
        fake.deliver(PEER, frame)
    else:
        fake.deliver_raw(PEER, frame)
    with pytest.raises(BotFault) as info:
        await task
    assert info.value.fault.kind is kind


async def test_flooding_is_a_protocol_fault() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    for i in range(10):
        fake.deliver(PEER, ActionMsg(1000 + i, WireAction("draw_stock")))
    assert link.fault is not None and link.fault.kind is FaultKind.PROTOCOL
    assert sum(isinstance(m, Error) for m in fake.messages(PEER)) <= 8


async def test_an_unreachable_peer_is_a_stall() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    fake.reachable = False
    link.send(Bye())
    assert link.fault is not None and link.fault.kind is FaultKind.STALL


async def test_heartbeat_pings_an_idle_bot_and_a_silent_one_stalls() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
    beat = asyncio.ensure_future(link.heartbeat())
    try:
        async with asyncio.timeout(5):
            fault = await link.wait_for_fault()
    finally:
        beat.cancel()
    assert any(isinstance(m, Ping) for m in fake.messages(PEER))
    assert fault.kind is FaultKind.STALL and "heartbeats" in fault.detail


async def test_pongs_keep_an_idle_bot_alive() -> None:
    # A 0.1 s interval: a silent bot gets 0.5 s, so a busy CI machine pausing this test for a
    # tenth of a second cannot make the pong arrive "late" (with FAST's 0.02 s it could).
    control = replace(FAST, heartbeat=0.1)
    fake = FakeTransport()
    _, link = await bound(fake, control)
    beat = asyncio.ensure_future(link.heartbeat())
    try:
        for _ in range(10):  # 10 intervals, twice the 5 a silent bot gets
            await asyncio.sleep(control.heartbeat)
            fake.deliver(PEER, Pong(1))
    finally:
        beat.cancel()
    assert link.fault is None


@pytest.mark.parametrize("inline", [True, False])
async def test_the_welcome_grants_inline_events_when_asked(inline: bool) -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    link = hub.open_seat(0, FAST)
    fake.hello(PEER, link.token, inline_events=inline)
    await link.connected
    welcome = fake.messages(PEER)[0]
    assert isinstance(welcome, Welcome) and welcome.inline_events is inline
    assert link.inline_events is inline


async def test_a_lobby_bot_keeps_its_inline_events_choice() -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    hub.register_remote("reg-token", "remote")
    fake.hello(PEER, "reg-token", inline_events=True)
    welcome = fake.messages(PEER)[0]
    assert isinstance(welcome, Welcome) and welcome.inline_events
    link = hub.open_seat(1, FAST, "reg-token", reusable=True)
    await link.connected
    assert link.peer == PEER and link.inline_events


async def test_held_events_go_before_any_other_message() -> None:
    fake = FakeTransport()
    _, link = await bound(fake)
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


@pytest.mark.parametrize("hub_grants", [True, False])
async def test_a_retained_connection_is_seated_again_without_a_hello(hub_grants: bool) -> None:
    fake = FakeTransport()
    hub = Hub(fake, multi_match=hub_grants)
    link = hub.open_seat(0, FAST)
    fake.deliver(PEER, Hello(1, "kept", link.token, multi_match=True))
    await link.connected
    welcome = fake.messages(PEER)[0]
    assert isinstance(welcome, Welcome) and welcome.multi_match is hub_grants
    assert link.multi_match is hub_grants
    if not hub_grants:
        assert not hub.retain(link)
        return
    assert hub.retain(link) and link.finished and hub.is_available(link.token)
    again = hub.open_seat(1, FAST, link.token, reusable=True)
    assert again.connected.done() and again.peer == PEER and again.name == "kept"
    assert sum(isinstance(m, Welcome) for m in fake.messages(PEER)) == 1
    assert not hub.is_available(link.token)


async def test_a_faulted_seat_is_not_retained_and_a_dismissed_token_is_refused() -> None:
    fake = FakeTransport()
    hub = Hub(fake, multi_match=True)
    link = hub.open_seat(0, FAST)
    fake.deliver(PEER, Hello(1, "kept", link.token, multi_match=True))
    await link.connected
    link.record_fault(FaultKind.TIMEOUT, "slow")
    assert not hub.retain(link)
    other = hub.open_seat(1, FAST)
    fake.deliver(b"two", Hello(1, "kept2", other.token, multi_match=True))
    await other.connected
    assert hub.retain(other)
    hub.dismiss(other.token)
    assert isinstance(fake.messages(b"two")[-1], Bye) and not hub.is_available(other.token)
    fake.deliver(b"three", Hello(1, "again", other.token))
    reply = fake.messages(b"three")[0]
    assert isinstance(reply, Reject) and reply.code == "token_in_use"
