"""CURVE on the bot endpoint: libzmq clients authenticate, unknown keys never get through,
and a bare client proves replayed or tampered boxes are refused."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import pytest_asyncio
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.bindings import (
    crypto_box,
    crypto_box_keypair,
    crypto_box_open,
    crypto_box_open_afternm,
)
from zmq.utils import z85

from bench.zmtp_client import ZmtpClient, frame
from referee.net.keys import decode_key, encode_key
from referee.net.transport import CurveServerKeys, Incoming, RouterTransport, TransportConfig

from .conftest import TrackingContext, wait_until

pytestmark = pytest.mark.timeout(20)

CurveDealer = Callable[..., zmq.Socket[bytes]]
SERVER_PUBLIC, SERVER_SECRET = crypto_box_keypair()
ALICE = crypto_box_keypair()
MALLORY = crypto_box_keypair()


class Inbox:
    def __init__(self) -> None:
        self.messages: asyncio.Queue[Incoming] = asyncio.Queue()
        self.lost: list[tuple[bytes, str]] = []

    async def get(self) -> Incoming:
        async with asyncio.timeout(5):
            return await self.messages.get()


@pytest_asyncio.fixture
async def secure() -> AsyncIterator[tuple[RouterTransport, Inbox]]:
    """A CURVE transport that admits only alice's key."""
    keys = CurveServerKeys(
        SERVER_PUBLIC, SERVER_SECRET, lambda k: None if k == ALICE[0] else "unknown key"
    )
    t = RouterTransport(TransportConfig(curve=keys, heartbeat_ivl_ms=100, heartbeat_timeout_ms=400))
    inbox = Inbox()
    t.set_handler(inbox.messages.put_nowait)
    t.set_lost_handler(lambda p, r: inbox.lost.append((p, r)))
    await t.start()
    yield t, inbox
    await t.close()


@pytest.fixture
def curve_dealer(zmq_context: TrackingContext) -> Iterator[CurveDealer]:
    made: list[zmq.Socket[bytes]] = []

    def make(
        endpoint: str, keys: tuple[bytes, bytes] | None, server: bytes = SERVER_PUBLIC
    ) -> zmq.Socket[bytes]:
        sock = zmq_context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 3000)
        sock.setsockopt(zmq.HEARTBEAT_IVL, 100)  # its PINGs travel inside CURVE boxes
        if keys is not None:
            sock.curve_serverkey = z85.encode(server)
            sock.curve_publickey = z85.encode(keys[0])
            sock.curve_secretkey = z85.encode(keys[1])
        sock.connect(endpoint)
        made.append(sock)
        return sock

    yield make
    for sock in made:
        sock.close(linger=0)


@pytest.mark.asyncio
async def test_a_listed_key_talks_and_is_known(
    secure: tuple[RouterTransport, Inbox], curve_dealer: CurveDealer
) -> None:
    t, inbox = secure
    alice = curve_dealer(t.endpoint, ALICE)
    alice.send(b"hello")
    got = await inbox.get()
    assert got.payload == b"hello"
    assert t.peer_key(got.peer) == ALICE[0]
    assert t.send(got.peer, b"welcome")
    assert alice.recv() == b"welcome"
    await asyncio.sleep(1.0)  # ten heartbeat intervals: PING/PONG inside CURVE keep it alive
    assert inbox.lost == []
    alice.send(b"still here")
    assert (await inbox.get()).payload == b"still here"


@pytest.mark.asyncio
@pytest.mark.parametrize("who", ["unknown key", "wrong server key", "no CURVE"])
async def test_others_never_reach_the_match_layer(
    secure: tuple[RouterTransport, Inbox], curve_dealer: CurveDealer, who: str
) -> None:
    t, inbox = secure
    if who == "unknown key":
        sock = curve_dealer(t.endpoint, MALLORY)
    elif who == "wrong server key":
        sock = curve_dealer(t.endpoint, ALICE, server=MALLORY[0])
    else:
        sock = curve_dealer(t.endpoint, None)
    sock.send(b"hello with a stolen token")
    # Refused by us (a key we do not list) or by the client itself (it wanted NULL).
    await wait_until(lambda: t.stats.handshake_failed + t.stats.disconnected >= 1)
    assert inbox.messages.empty() and t.stats.received == 0
    alice = curve_dealer(t.endpoint, ALICE)
    alice.send(b"me")
    assert (await inbox.get()).payload == b"me"


@pytest.mark.asyncio
async def test_one_live_connection_per_key(secure: tuple[RouterTransport, Inbox]) -> None:
    t, inbox = secure
    first = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
    first.send(b"first")
    peer = (await inbox.get()).peer
    with pytest.raises(ConnectionError, match="handshake refused"):
        await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
    assert t.send(peer, b"you keep your seat")
    assert await first.recv() == b"you keep your seat"
    await first.close()
    await wait_until(lambda: inbox.lost != [])
    again = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
    again.send(b"back")
    assert (await inbox.get()).payload == b"back"
    await again.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("attack", ["replay", "tamper", "reserved-flag"])
async def test_replayed_or_tampered_boxes_end_the_connection(
    secure: tuple[RouterTransport, Inbox], attack: str
) -> None:
    """A box replayed, altered, or whose inner flags set a reserved bit (libzmq masks them; no
    ZeroMQ library sets them) ends the connection."""
    t, inbox = secure
    client = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
    box = client.box(b"move")
    client.send_raw(box)
    peer = (await inbox.get()).peer
    if attack == "replay":
        client.send_raw(box)
    elif attack == "reserved-flag":
        client.send_raw(client.box(b"move", 4))
    else:
        client.send_raw(box[:-1] + bytes((box[-1] ^ 1,)))
    await wait_until(lambda: inbox.lost != [])
    assert inbox.lost[0][0] == peer and "CURVE" in inbox.lost[0][1]
    assert inbox.messages.empty()
    await client.close()


@pytest.mark.asyncio
async def test_a_pong_boxed_while_parsing_leaves_before_a_reply_sent_from_the_handler() -> None:
    """CURVE boxes must reach the peer in nonce order: a PING answered while parsing and a
    reply the handler sends during the same parse used to go out reply first (libzmq then
    dropped the connection: a heartbeating bot went deaf after a few seconds of play)."""
    keys = CurveServerKeys(SERVER_PUBLIC, SERVER_SECRET, lambda k: None)
    async with RouterTransport(TransportConfig(curve=keys, heartbeat_ivl_ms=0)) as t:

        def echo(inc: Incoming) -> None:
            t.send(inc.peer, b"reply:" + inc.payload)

        t.set_handler(echo)
        client = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
        try:
            ping = client.box(b"\x04PING" + b"\x00\x0a" + b"ctx", 2)
            client.send_raw(ping + client.box(b"hello"))
            nonces, plain = [], []
            for _ in range(2):
                async with asyncio.timeout(5):
                    _, body = await client.read_frame()
                assert body[:8] == b"\x07MESSAGE"
                nonces.append(int.from_bytes(body[8:16], "big"))
                nonce = b"CurveZMQMESSAGES" + body[8:16]
                plain.append(crypto_box_open_afternm(body[16:], nonce, client.shared))
            assert nonces[0] < nonces[1], nonces
            assert plain == [b"\x02\x04PONGctx", b"\x00reply:hello"]
        finally:
            await client.close()


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_the_referees_z85_is_zeromqs(key: bytes) -> None:
    """Our Z85 (the referee does not import pyzmq for it) against pyzmq's, both ways."""
    text = encode_key(key)
    assert text == z85.encode(key).decode("ascii")
    assert decode_key(text) == key == z85.decode(text.encode("ascii"))


async def handshake(
    endpoint: str,
    *,
    padding: bytes = bytes(72),
    signature: bytes = bytes(64),
    vouched_server: bytes = SERVER_PUBLIC,
) -> bytes:
    """A CURVE handshake as alice, written by hand with one field chosen by the test; the
    first command the server answers the HELLO or INITIATE with that is not WELCOME (READY
    or ERROR), or b"" when it closes the connection instead."""
    host, port = endpoint[6:].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(b"\xff" + bytes(8) + b"\x7f\x03\x01" + b"CURVE".ljust(20, b"\0") + bytes(32))
        await reader.readexactly(64)
        cpub, csec = crypto_box_keypair()
        box = crypto_box(signature, b"CurveZMQHELLO---" + struct.pack(">Q", 1), SERVER_PUBLIC, csec)
        writer.write(frame(b"\x05HELLO\x01\x00" + padding + cpub + struct.pack(">Q", 1) + box, 4))
        try:
            body = await read_command(reader)
        except asyncio.IncompleteReadError:
            return b""
        plain = crypto_box_open(body[24:], b"WELCOME-" + body[8:24], SERVER_PUBLIC, csec)
        spub, cookie = plain[:32], plain[32:128]
        vouch = crypto_box(cpub + vouched_server, b"VOUCH---" + bytes(16), spub, ALICE[1])
        meta = b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER"
        inner = ALICE[0] + bytes(16) + vouch + meta
        box = crypto_box(inner, b"CurveZMQINITIATE" + struct.pack(">Q", 2), spub, csec)
        writer.write(frame(b"\x08INITIATE" + cookie + struct.pack(">Q", 2) + box, 4))
        try:
            return await read_command(reader)
        except asyncio.IncompleteReadError:
            return b""
    finally:
        writer.close()


async def read_command(reader: asyncio.StreamReader) -> bytes:
    """The body of the next frame (the handshake's commands are short frames)."""
    async with asyncio.timeout(5):
        _, size = await reader.readexactly(2)
        return await reader.readexactly(size)


@pytest.mark.asyncio
async def test_a_handshake_written_by_hand_is_accepted(
    secure: tuple[RouterTransport, Inbox],
) -> None:
    """The control for the refusals below: the same handshake with every field right."""
    t, _ = secure
    assert (await handshake(t.endpoint))[:6] == b"\x05READY"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "field",
    [
        {"padding": bytes(71) + b"\x01"},
        {"signature": bytes(63) + b"\x01"},
        {"vouched_server": crypto_box_keypair()[0]},
    ],
    ids=["hello-padding", "hello-signature", "vouch-server-key"],
)
async def test_each_field_of_the_handshake_is_checked(
    secure: tuple[RouterTransport, Inbox], field: dict[str, bytes]
) -> None:
    """RFC 26: the server SHALL validate every field; one wrong field ends the handshake
    (libzmq leaves the vouch's server key and HELLO's zeros unchecked)."""
    t, inbox = secure
    assert await handshake(t.endpoint, **field) == b""
    await wait_until(lambda: t.connections == 0)
    assert t.stats.handshake_failed == 1 and inbox.messages.empty()
