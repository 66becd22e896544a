"""Tests for referee.net.transport against real ZeroMQ peers (libzmq DEALERs) and raw sockets."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import zmq

from bench.zmtp_client import ZmtpClient, frame
from referee.net.budget import ACCEPT_BACKLOG, DESCRIPTOR_RESERVE, descriptor_budget
from referee.net.peer import READ_BUFFER, PeerProtocol
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import (
    Incoming,
    RouterTransport,
    TransportClosed,
    TransportConfig,
    TransportError,
)
from referee.net.zmtp import NULL

from .conftest import TrackingContext, wait_until

pytestmark = pytest.mark.timeout(20)

DealerFactory = Callable[..., zmq.Socket[bytes]]


@pytest_asyncio.fixture
async def transport() -> AsyncIterator[RouterTransport]:
    """A started transport on a random localhost port."""
    t = RouterTransport(TransportConfig())
    collector(t)
    await t.start()
    yield t
    await t.close()


@pytest.fixture
def dealer(zmq_context: TrackingContext) -> Iterator[DealerFactory]:
    """Factory for plain DEALER clients (blocking recv with a 3 s timeout); closed at teardown."""
    made: list[zmq.Socket[bytes]] = []

    def make(endpoint: str, routing_id: bytes | None = None) -> zmq.Socket[bytes]:
        sock = zmq_context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 3000)
        sock.setsockopt(zmq.SNDTIMEO, 3000)
        if routing_id is not None:
            sock.setsockopt(zmq.ROUTING_ID, routing_id)
        sock.connect(endpoint)
        made.append(sock)
        return sock

    yield make
    for sock in made:
        sock.close(linger=0)


class Collector:
    """A transport handler that records messages (and lost connections) for a test to await."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Incoming] = asyncio.Queue()
        self.lost: asyncio.Queue[tuple[bytes, str]] = asyncio.Queue()

    def __call__(self, inc: Incoming) -> None:
        self.queue.put_nowait(inc)

    def on_lost(self, peer: bytes, reason: str) -> None:
        self.lost.put_nowait((peer, reason))

    async def get(self, within: float = 5.0) -> Incoming:
        """The next recorded message (with a timeout)."""
        async with asyncio.timeout(within):
            return await self.queue.get()

    async def get_lost(self, within: float = 5.0) -> tuple[bytes, str]:
        """The next lost connection (with a timeout)."""
        async with asyncio.timeout(within):
            return await self.lost.get()


_COLLECTORS: weakref.WeakKeyDictionary[RouterTransport, Collector] = weakref.WeakKeyDictionary()


def collector(t: RouterTransport) -> Collector:
    """The :class:`Collector` handling ``t``'s messages (set as its handler on first use)."""
    found = _COLLECTORS.get(t)
    if found is None:
        found = _COLLECTORS[t] = Collector()
        t.set_handler(found)
        t.set_lost_handler(found.on_lost)
    return found


async def recv1(t: RouterTransport, within: float = 5.0) -> Incoming:
    """The next message ``t`` delivers, with a timeout."""
    return await collector(t).get(within)


@pytest.mark.asyncio
async def test_binds_random_port_and_reports_it(transport: RouterTransport) -> None:
    host, port = transport.endpoint.rsplit(":", 1)
    assert host == "tcp://127.0.0.1"
    assert int(port) > 0
    other = RouterTransport(TransportConfig())
    try:
        assert await other.start() != transport.endpoint
    finally:
        await other.close()


@pytest.mark.asyncio
async def test_round_trip(transport: RouterTransport, dealer: DealerFactory) -> None:
    client = dealer(transport.endpoint)
    client.send(b"hello")
    got = await recv1(transport)
    assert got.payload == b"hello" and not got.malformed and len(got.peer) == 5
    assert transport.send(got.peer, b"world") is True
    assert client.recv() == b"world"
    assert transport.stats.received == 1
    assert transport.stats.sent == 1
    assert transport.peer_address(got.peer) == "127.0.0.1"
    assert transport.peer_key(got.peer) is None  # NULL mechanism


@pytest.mark.asyncio
async def test_ipc_endpoint(dealer: DealerFactory, tmp_path: Path) -> None:
    cfg = TransportConfig(endpoint=f"ipc://{tmp_path / 'ref.sock'}")
    async with RouterTransport(cfg) as t:
        assert t.endpoint == cfg.endpoint
        client = dealer(t.endpoint)
        client.send(b"ping")
        got = await recv1(t)
        assert got.payload == b"ping"
        assert t.peer_address(got.peer) == f"pid:{os.getpid()}"  # SO_PEERCRED


@pytest.mark.asyncio
async def test_local_ipc_endpoint_for_local_bots(dealer: DealerFactory) -> None:
    """``local_ipc`` adds a private ipc:// endpoint; close removes it."""
    async with RouterTransport(TransportConfig(local_ipc=True)) as t:
        assert t.endpoint.startswith("tcp://127.0.0.1:")
        assert t.local_endpoint.startswith("ipc://")
        directory = Path(t.local_endpoint.removeprefix("ipc://")).parent
        assert directory.stat().st_mode & 0o777 == 0o700
        local, remote = dealer(t.local_endpoint), dealer(t.endpoint)
        local.send(b"via-ipc")
        got = {(await recv1(t)).payload}
        remote.send(b"via-tcp")
        got.add((await recv1(t)).payload)
        assert got == {b"via-ipc", b"via-tcp"}
    assert not directory.exists()


@pytest.mark.asyncio
async def test_local_endpoint_is_the_endpoint_without_local_ipc(
    transport: RouterTransport, tmp_path: Path
) -> None:
    assert transport.local_endpoint == transport.endpoint
    cfg = TransportConfig(endpoint=f"ipc://{tmp_path / 'own.sock'}", local_ipc=True)
    async with RouterTransport(cfg) as t:  # already ipc: no second one
        assert t.local_endpoint == t.endpoint == cfg.endpoint


@pytest.mark.asyncio
async def test_handler_echo_many_messages_in_order(dealer: DealerFactory) -> None:
    """Push style; the handler replies synchronously from inside the reader callback."""
    seen: list[bytes] = []
    done = asyncio.Event()
    total = 5000
    async with RouterTransport(TransportConfig()) as transport:

        def echo(inc: Incoming) -> None:
            seen.append(inc.payload)
            assert transport.send(inc.peer, inc.payload)
            if len(seen) == total:
                done.set()

        transport.set_handler(echo)
        client = dealer(transport.endpoint)
        client.setsockopt(zmq.SNDHWM, 0)
        client.setsockopt(zmq.RCVHWM, 0)
        expected = [str(i).encode() for i in range(total)]
        for payload in expected:
            client.send(payload)
        async with asyncio.timeout(10):
            await done.wait()
        assert seen == expected
        assert transport.stats.send_failures == 0
        assert [client.recv() for _ in range(total)] == expected
        assert transport.stats.unhandled == 0


@pytest.mark.asyncio
async def test_send_to_unknown_peer_returns_false(transport: RouterTransport) -> None:
    assert transport.send(b"nobody", b"x") is False
    assert transport.stats.send_failures == 1


@pytest.mark.asyncio
async def test_a_routing_id_chosen_by_a_peer_is_ignored(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    """Two peers asking for the same routing id (or libzmq's first automatic one, the id the
    old ROUTER crashed on) get distinct ids from the transport: nobody can squat or steal."""
    owner = dealer(transport.endpoint, b"\x00\x6b\x8b\x45\x67")
    impostor = dealer(transport.endpoint, b"\x00\x6b\x8b\x45\x67")
    owner.send(b"one")
    first = await recv1(transport)
    impostor.send(b"two")
    second = await recv1(transport)
    assert first.peer != second.peer
    assert {first.peer, second.peer}.isdisjoint({b"\x00\x6b\x8b\x45\x67"})
    assert transport.send(first.peer, b"to-owner") and owner.recv() == b"to-owner"
    assert transport.send(second.peer, b"to-impostor") and impostor.recv() == b"to-impostor"
    assert owner.poll(50) == 0


@pytest.mark.asyncio
async def test_multipart_is_reported_once_and_the_connection_closed(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    client = dealer(transport.endpoint)
    client.send(b"fine")
    fine = await recv1(transport)
    client.send_multipart([b"", b"req-style"])
    assert await recv1(transport) == Incoming(fine.peer, b"", True, "multipart")
    peer, reason = await collector(transport).get_lost()
    assert peer == fine.peer and "multipart" in reason
    assert transport.stats.malformed == 1


@pytest.mark.asyncio
async def test_oversized_message_closes_only_that_peer(dealer: DealerFactory) -> None:
    async with RouterTransport(TransportConfig(max_message_bytes=1024)) as t:
        coll = collector(t)
        big, good = dealer(t.endpoint), dealer(t.endpoint)
        big.send(b"x" * 1024)  # exactly the limit is fine
        first = await recv1(t)
        assert first.payload == b"x" * 1024
        good.send(b"here")
        good_peer = (await recv1(t)).peer
        big.send(b"x" * 1025)
        assert await recv1(t) == Incoming(first.peer, b"", True, "too_large")
        peer, reason = await coll.get_lost()
        assert peer == first.peer and "1025 bytes" in reason
        good.send(b"still here")
        assert await recv1(t) == Incoming(good_peer, b"still here")
        assert t.send(good_peer, b"yes") and good.recv() == b"yes"


@pytest.mark.asyncio
async def test_flood_from_a_thread_keeps_loop_responsive(
    transport: RouterTransport, zmq_context: TrackingContext
) -> None:
    """A blocking sender thread floods; the loop keeps running timers meanwhile."""
    count = 30_000
    received = 0

    def flood() -> None:
        sock = zmq_context.socket(zmq.DEALER)
        try:
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.RCVTIMEO, 10_000)
            sock.connect(transport.endpoint)
            for _ in range(count):
                sock.send(b"spam")
            sock.send(b"last")
            sock.recv()  # wait for our ack so the socket stays up until the end
        finally:
            sock.close(linger=0)

    def on_msg(inc: Incoming) -> None:
        nonlocal received
        received += 1
        if inc.payload == b"last":
            transport.send(inc.peer, b"ack")

    transport.set_handler(on_msg)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    tick_task = asyncio.create_task(ticker())
    thread = threading.Thread(target=flood)
    thread.start()
    try:
        async with asyncio.timeout(15):
            await asyncio.to_thread(thread.join)
    finally:
        tick_task.cancel()
    assert received == count + 1
    assert ticks >= 10  # the loop kept running timers during the flood


BOOM = RuntimeError("handler bug")


@pytest.mark.asyncio
@pytest.mark.expect_error_log  # the handler's bug is logged at ERROR, as it must be
async def test_handler_errors_are_contained(
    transport: RouterTransport, dealer: DealerFactory, no_error_logs: Any
) -> None:
    coll = Collector()

    def handler(inc: Incoming) -> None:
        if inc.payload == b"boom":
            raise BOOM
        coll(inc)

    transport.set_handler(handler)
    client = dealer(transport.endpoint)
    client.send(b"boom")
    client.send(b"ok")
    assert (await coll.get()).payload == b"ok"
    assert transport.stats.handler_errors == 1
    assert [r.exc_info[1] for r in no_error_logs.records if r.exc_info] == [BOOM]


@pytest.mark.asyncio
async def test_a_closed_connection_is_reported_with_its_peer(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    client = dealer(transport.endpoint)
    client.send(b"here")
    peer = (await recv1(transport)).peer
    client.close(linger=0)
    assert await collector(transport).get_lost() == (peer, "connection closed by the peer")
    assert transport.stats.accepted == 1 and transport.stats.disconnected == 1
    assert transport.send(peer, b"gone?") is False


@pytest.mark.asyncio
async def test_disconnect_writes_what_is_queued_then_closes(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    client = dealer(transport.endpoint)
    client.send(b"hello")
    peer = (await recv1(transport)).peer
    assert transport.send(peer, b"bye")
    transport.disconnect(peer, "rejected: unknown token")
    assert client.recv() == b"bye"
    assert await collector(transport).get_lost() == (peer, "rejected: unknown token")


@pytest.mark.asyncio
async def test_garbage_handshake_is_counted_and_harmless(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    host, port = transport.endpoint.removeprefix("tcp://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET / HTTP/1.1\r\n\r\n")
    async with asyncio.timeout(5):
        assert (await reader.read())[:10] == b"\xff" + bytes(8) + b"\x7f"  # greeting, then EOF
    writer.close()
    assert transport.stats.handshake_failed == 1
    client = dealer(transport.endpoint)
    client.send(b"hi")
    assert (await recv1(transport)).payload == b"hi"


@pytest.mark.asyncio
async def test_silent_connections_are_closed_at_the_handshake_and_admission_deadlines(
    dealer: DealerFactory,
) -> None:
    cfg = TransportConfig(handshake_timeout_ms=200, admit_timeout_ms=300)
    async with RouterTransport(cfg) as t:
        coll = collector(t)
        host, port = t.endpoint.removeprefix("tcp://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            await wait_until(lambda: t.stats.timed_out == 1)  # no greeting from it
            assert t.connections == 0
        admitted, ignored = dealer(t.endpoint), dealer(t.endpoint)
        admitted.send(b"hello")
        ignored.send(b"hello")
        first, second = await coll.get(), await coll.get()
        t.admit(first.peer)
        assert await coll.get_lost() == (second.peer, "no valid hello in time")
        assert t.stats.timed_out == 2
        assert t.send(first.peer, b"still welcome") and raw is not None


@pytest.mark.asyncio
async def test_connection_caps_refuse_the_excess(dealer: DealerFactory) -> None:
    async with RouterTransport(TransportConfig(max_per_address=3)) as t:
        clients = [dealer(t.endpoint) for _ in range(5)]
        for i, c in enumerate(clients):
            c.send(str(i).encode())
        got = {(await recv1(t)).payload for _ in range(3)}
        assert len(got) == 3
        await wait_until(lambda: t.stats.refused >= 2)
        assert t.connections == 3
    async with RouterTransport(TransportConfig(max_connections=2)) as t:
        clients = [dealer(t.endpoint) for _ in range(3)]
        await wait_until(lambda: t.stats.refused >= 1)
        assert t.connections == 2


@pytest.mark.asyncio
async def test_tcp_and_ipc_connections_have_separate_caps(dealer: DealerFactory) -> None:
    """A TCP flood at its cap leaves this machine's bots their ipc connections (and the
    other way round): each kind has its own cap."""
    async with RouterTransport(TransportConfig(max_connections=2, local_ipc=True)) as t:
        assert t.local_endpoint.startswith("ipc://")
        tcp = [dealer(t.endpoint) for _ in range(3)]
        await wait_until(lambda: t.stats.refused >= 1)
        assert t.connections == 2
        ipc = [dealer(t.local_endpoint) for _ in range(2)]
        for i, client in enumerate(ipc):
            client.send(b"local %d" % i)
        got = {(await recv1(t)).payload for _ in ipc}
        assert got == {b"local 0", b"local 1"} and t.connections == 4
        assert t.stats.refused == 1 and len(tcp) == 3


def test_the_descriptor_budget_leaves_the_reserve_and_halves_the_rest() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    open_now = len(os.listdir("/proc/self/fd"))
    expected = (soft - open_now - DESCRIPTOR_RESERVE - 2 * ACCEPT_BACKLOG) // 2
    assert abs(descriptor_budget() - max(16, expected)) <= 2  # listdir's own descriptor


@pytest.mark.asyncio
async def test_close_is_idempotent_and_send_after_close_raises() -> None:
    t = RouterTransport(TransportConfig())
    with pytest.raises(TransportClosed):
        t.send(b"x", b"y")  # not started
    await t.start()
    await t.close()
    await t.close()
    assert t.closed
    with pytest.raises(TransportClosed):
        t.send(b"x", b"y")
    with pytest.raises(TransportClosed):
        await t.start()


@pytest.mark.asyncio
async def test_bind_failure_raises_transport_error(transport: RouterTransport) -> None:
    clash = RouterTransport(TransportConfig(endpoint=transport.endpoint))
    with pytest.raises(TransportError, match="cannot bind"):
        await clash.start()
    assert clash.closed


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="tcp:// or ipc://"):
        TransportConfig(endpoint="inproc://x")
    for name in ("max_message_bytes", "send_buffer_bytes", "max_connections", "frames_per_s"):
        with pytest.raises(ValueError, match=name):
            TransportConfig(**{name: 0})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="heartbeat_ivl_ms"):
        TransportConfig(heartbeat_ivl_ms=-1)


_SLEEPY_CLIENT = """
import sys, zmq
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 0)
sock.connect(sys.argv[1])
sock.send(b"hello")
while True:
    sock.recv()
"""


@pytest.mark.asyncio
async def test_heartbeat_detects_stopped_peer() -> None:
    """A SIGSTOPped peer stops answering ZMTP PINGs; its connection is dropped and reported."""
    cfg = TransportConfig(heartbeat_ivl_ms=100, heartbeat_timeout_ms=300, heartbeat_ttl_ms=300)
    async with RouterTransport(cfg) as t:
        # No sandbox: the test stops the very process that holds the socket.
        client = BotCommand((sys.executable, "-c", _SLEEPY_CLIENT, t.endpoint), sandbox="none")
        bot = await BotProcess.start(client)
        try:
            peer = (await recv1(t, within=10)).peer
            assert t.send(peer, b"you there?")
            os.kill(bot.pid, signal.SIGSTOP)
            stopped_at = time.monotonic()
            lost, reason = await collector(t).get_lost(within=5)
            elapsed = time.monotonic() - stopped_at
            assert lost == peer and "heartbeat" in reason
            assert elapsed < (100 + 300) / 1000 + 1.5, elapsed
            assert not t.send(peer, b"ping")
        finally:
            await bot.terminate(grace=0.2)  # SIGKILL works on a stopped process too
        assert bot.returncode is not None


@pytest.mark.asyncio
async def test_messages_without_a_handler_are_counted_and_dropped(dealer: DealerFactory) -> None:
    async with RouterTransport(TransportConfig()) as t:
        client = dealer(t.endpoint)
        client.send(b"nobody listens")
        await wait_until(lambda: t.stats.unhandled == 1)
        client.send(b"now")
        assert (await recv1(t)).payload == b"now"
        assert t.stats.received == 2 and t.stats.unhandled == 1


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (None, "connection closed by the peer"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection reset by the peer"),
        (BrokenPipeError(32, "Broken pipe"), "connection reset by the peer"),
        (OSError(5, "Input/output error"), "connection error: [Errno 5] Input/output error"),
    ],
)
def test_a_lost_connection_is_named_for_what_the_peer_did(
    exc: Exception | None, reason: str
) -> None:
    """A peer that left while the referee wrote to it (EPIPE) left like one that reset."""
    lost: list[str] = []

    class Owner:
        config = TransportConfig()

        def on_lost(self, conn: PeerProtocol, why: str) -> None:
            lost.append(why)

    conn = PeerProtocol(Owner(), NULL, "127.0.0.1")  # type: ignore[arg-type]
    conn.connection_lost(exc)
    assert lost == [reason]


@pytest.mark.asyncio
async def test_connections_share_one_read_buffer_and_keep_their_own_bytes() -> None:
    """Every read lands in the transport's one buffer and is copied out at once: frames that
    arrive in pieces, interleaved with another connection's, reach the handler whole, and
    from the connection that sent them."""
    async with RouterTransport(TransportConfig()) as t:
        a = await ZmtpClient.connect(t.endpoint)
        b = await ZmtpClient.connect(t.endpoint)
        try:
            big = bytes(range(256)) * 100  # 25,600 bytes: more than one read buffer
            a_frame, b_frame = frame(big), frame(b"b's whole message")
            a.send_raw(a_frame[:1000])
            await a.writer.drain()
            b.send_raw(b_frame)
            await b.writer.drain()
            got_b = await recv1(t)
            assert got_b.payload == b"b's whole message"
            a.send_raw(a_frame[1000:])
            await a.writer.drain()
            got_a = await recv1(t)
            assert got_a.payload == big and got_a.peer != got_b.peer
            assert len(t.read_buffer) == READ_BUFFER < len(big)
        finally:
            await a.close()
            await b.close()


@pytest.mark.asyncio
async def test_the_ttl_of_a_peers_ping_is_ignored() -> None:
    """A PING asking the referee to drop its peer after 0.1 s of silence is answered, and the
    peer, silent for longer, keeps its connection: how long a silent bot is waited for is the
    organiser's heartbeat setting, which decides a stall (docs/security.md)."""
    cfg = TransportConfig(heartbeat_ivl_ms=50, heartbeat_timeout_ms=20_000)
    async with RouterTransport(cfg) as t:
        inbox = collector(t)
        client = await ZmtpClient.connect(t.endpoint)
        client.send(b"hello")
        peer = (await inbox.get()).peer
        client.send_raw(frame(b"\x04PING\x00\x01ctx", 4))  # TTL: 1 decisecond
        seen: list[bytes] = []
        async with asyncio.timeout(10):
            while seen.count(b"\x04PING") < 6:  # the referee's: >= 0.25 s of our silence
                seen.append((await client.read_frame())[1][:5])
        assert b"\x04PONG" in seen and inbox.lost.empty()
        client.send(b"still here")
        assert await inbox.get() == Incoming(peer, b"still here")
        await client.close()
