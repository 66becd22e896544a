"""The hub driven through an in-memory transport: handshake, strangers, the lobby."""

from __future__ import annotations

import pytest

from protocol.schema import Bye, Error, Hello, Pong, Reject, Welcome
from referee.match.faults import FaultKind
from referee.match.hub import Hub
from referee.net.keys import KeyRing
from tests.match.fakes import FAST, PEER, FakeTransport, bound

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(10)]


async def test_hello_binds_and_welcomes() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
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
    _, link, _ = await bound(fake)
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


async def test_a_lost_connection_is_a_stall_fault_after_the_grace() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    assert PEER in fake.admitted  # a valid hello lifts the transport's admission deadline
    fake.lose(PEER, "silent for 2.5 s (heartbeat timeout)")
    assert link.fault is None  # a crash seen during the grace would win
    timer.advance(0.3)
    assert link.fault is not None and link.fault.kind == FaultKind.STALL
    assert link.fault.detail == "connection lost (silent for 2.5 s (heartbeat timeout))"


async def test_a_crash_seen_during_the_grace_wins_over_the_lost_connection() -> None:
    fake = FakeTransport()
    _, link, timer = await bound(fake)
    fake.lose(PEER)
    link.record_fault(FaultKind.CRASH, "exited with code 1")
    timer.advance(1.0)
    assert link.fault is not None and link.fault.kind == FaultKind.CRASH


async def test_a_rejected_stranger_is_disconnected_and_never_admitted() -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    hub.open_seat(0, FAST)
    fake.hello(b"x", "wrong-token")
    assert fake.disconnected == {b"x": "rejected: unknown token"}
    assert b"x" not in fake.admitted


async def test_an_oversized_message_is_answered_too_large_and_faulted() -> None:
    fake = FakeTransport()
    _, link, _ = await bound(fake)
    fake.deliver(PEER, b"", malformed="too_large")
    error = fake.messages(PEER)[-1]
    assert isinstance(error, Error) and error.code == "too_large"
    assert link.fault is not None and link.fault.kind == FaultKind.MALFORMED
    assert "too_large" in link.fault.detail


ALICE_KEY, BOB_KEY = b"A" * 32, b"B" * 32


async def test_a_registered_token_needs_its_key_and_the_key_ring_follows_the_tokens() -> None:
    fake = FakeTransport()
    ring = KeyRing()
    hub = Hub(fake, keys=ring)
    hub.register_remote("alice-token", "alice", ALICE_KEY)
    assert ring.name(ALICE_KEY) == "alice"
    fake.keys.update({b"thief": BOB_KEY, b"alice": ALICE_KEY})
    for peer in (b"thief", b"nokey"):  # another bot's key, or none (ipc / NULL)
        fake.hello(peer, "alice-token")
        (reply,) = fake.messages(peer)
        assert isinstance(reply, Reject) and reply.code == "bad_token"
        assert "key" in reply.message and peer in fake.disconnected
    assert not hub.is_available("alice-token")
    fake.hello(b"alice", "alice-token")
    assert isinstance(fake.messages(b"alice")[0], Welcome) and hub.is_available("alice-token")
    hub.dismiss("alice-token")
    assert ring.name(ALICE_KEY) is None and len(ring) == 0


async def test_a_thief_with_another_key_learns_nothing_of_the_owner_being_connected() -> None:
    """The key is checked before the token's use: with alice connected (in the lobby, then
    seated), a hello with her token from another key, or none, gets the same ``bad_token`` as
    when she is away, never ``token_in_use``."""
    fake = FakeTransport()
    hub = Hub(fake, keys=KeyRing())
    hub.register_remote("alice-token", "alice", ALICE_KEY)
    fake.keys.update({b"alice": ALICE_KEY, b"thief": BOB_KEY, b"thief2": BOB_KEY})
    fake.keys[b"alice2"] = ALICE_KEY
    fake.hello(b"thief", "alice-token")  # alice away
    fake.hello(b"alice", "alice-token")
    assert hub.is_available("alice-token")
    fake.hello(b"thief2", "alice-token")  # alice in the lobby
    fake.hello(b"nokey", "alice-token")
    replies = [fake.messages(peer)[0] for peer in (b"thief", b"thief2", b"nokey")]
    assert all(isinstance(r, Reject) and r.code == "bad_token" for r in replies), replies
    assert len({r.message for r in replies if isinstance(r, Reject)}) == 1
    fake.hello(b"alice2", "alice-token")  # alice's own key does learn it is in use
    (reply,) = fake.messages(b"alice2")
    assert isinstance(reply, Reject) and reply.code == "token_in_use"


async def test_a_seat_given_a_key_accepts_only_that_key_and_forgets_it_when_closed() -> None:
    fake = FakeTransport()
    ring = KeyRing()
    hub = Hub(fake, keys=ring)
    keyed = hub.open_seat(0, FAST, name="remote", public_key=ALICE_KEY)
    plain = hub.open_seat(1, FAST)
    fake.keys.update({b"alice": ALICE_KEY, b"bob": BOB_KEY})
    fake.hello(b"bob", plain.token)  # a keyed connection cannot take a seat without a key
    fake.hello(b"bob2", keyed.token)  # nor a keyless one a keyed seat
    for peer in (b"bob", b"bob2"):
        (reply,) = fake.messages(peer)
        assert isinstance(reply, Reject) and reply.code == "bad_token"
    fake.hello(b"alice", keyed.token)
    fake.hello(b"local", plain.token)
    await keyed.connected
    await plain.connected
    assert keyed.peer == b"alice" and plain.peer == b"local" and ring(ALICE_KEY) is None
    hub.close_seat(keyed)
    assert ring(ALICE_KEY) == "unknown key" and ring.refused == 1
