"""Tests for referee.net.transport against real ZeroMQ peers on tcp://127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
import zmq

from referee.net.process import BotCommand, BotProcess
from referee.net.transport import (
    Incoming,
    MonitorEvent,
    RouterTransport,
    TransportClosed,
    TransportConfig,
    TransportError,
)

from .conftest import TrackingContext, wait_until

pytestmark = pytest.mark.timeout(20)

DealerFactory = Callable[..., zmq.Socket[bytes]]


@pytest_asyncio.fixture
async def transport(zmq_context: TrackingContext) -> AsyncIterator[RouterTransport]:
    """A started transport on a random localhost port, using the leak-tracking context."""
    t = RouterTransport(TransportConfig(), context=zmq_context)
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
    """A transport handler that records messages and lets a test await them."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Incoming] = asyncio.Queue()

    def __call__(self, inc: Incoming) -> None:
        self.queue.put_nowait(inc)

    async def get(self, within: float = 5.0) -> Incoming:
        """The next recorded message (with a timeout)."""
        async with asyncio.timeout(within):
            return await self.queue.get()


_COLLECTORS: weakref.WeakKeyDictionary[RouterTransport, Collector] = weakref.WeakKeyDictionary()


def collector(t: RouterTransport) -> Collector:
    """The :class:`Collector` handling ``t``'s messages (set as its handler on first use)."""
    found = _COLLECTORS.get(t)
    if found is None:
        found = _COLLECTORS[t] = Collector()
        t.set_handler(found)
    return found


async def recv1(t: RouterTransport, within: float = 5.0) -> Incoming:
    """The next message ``t`` delivers, with a timeout."""
    return await collector(t).get(within)


@pytest.mark.asyncio
async def test_binds_random_port_and_reports_it(transport: RouterTransport) -> None:
    host, port = transport.endpoint.rsplit(":", 1)
    assert host == "tcp://127.0.0.1"
    assert int(port) > 0
    other = RouterTransport(TransportConfig(), context=transport.context)
    try:
        assert await other.start() != transport.endpoint
    finally:
        await other.close()


@pytest.mark.asyncio
async def test_round_trip(transport: RouterTransport, dealer: DealerFactory) -> None:
    client = dealer(transport.endpoint, b"alice")
    client.send(b"hello")
    assert await recv1(transport) == Incoming(b"alice", b"hello", False)
    assert transport.send(b"alice", b"world") is True
    assert client.recv() == b"world"
    assert transport.stats.received == 1
    assert transport.stats.sent == 1


@pytest.mark.asyncio
async def test_ipc_endpoint(
    zmq_context: TrackingContext, dealer: DealerFactory, tmp_path: Path
) -> None:
    cfg = TransportConfig(endpoint=f"ipc://{tmp_path / 'ref.sock'}")
    async with RouterTransport(cfg, context=zmq_context) as t:
        assert t.endpoint == cfg.endpoint
        client = dealer(t.endpoint, b"ipc")
        client.send(b"ping")
        assert await recv1(t) == Incoming(b"ipc", b"ping")


@pytest.mark.asyncio
async def test_local_ipc_endpoint_for_local_bots(
    zmq_context: TrackingContext, dealer: DealerFactory
) -> None:
    """``local_ipc`` adds a private ipc:// endpoint on the same socket; close removes it."""
    cfg = TransportConfig(local_ipc=True)
    async with RouterTransport(cfg, context=zmq_context) as t:
        assert t.endpoint.startswith("tcp://127.0.0.1:")
        assert t.local_endpoint.startswith("ipc://")
        directory = Path(t.local_endpoint.removeprefix("ipc://")).parent
        assert directory.stat().st_mode & 0o777 == 0o700
        local, remote = dealer(t.local_endpoint, b"local"), dealer(t.endpoint, b"remote")
        local.send(b"via-ipc")
        remote.send(b"via-tcp")
        got = {await recv1(t), await recv1(t)}
        assert got == {Incoming(b"local", b"via-ipc"), Incoming(b"remote", b"via-tcp")}
        assert t.send(b"local", b"back") and local.recv() == b"back"
    assert not directory.exists()


@pytest.mark.asyncio
async def test_local_endpoint_is_the_endpoint_without_local_ipc(
    transport: RouterTransport, zmq_context: TrackingContext, tmp_path: Path
) -> None:
    assert transport.local_endpoint == transport.endpoint
    cfg = TransportConfig(endpoint=f"ipc://{tmp_path / 'own.sock'}", local_ipc=True)
    async with RouterTransport(cfg, context=zmq_context) as t:  # already ipc: no second one
        assert t.local_endpoint == t.endpoint == cfg.endpoint


@pytest.mark.asyncio
async def test_handler_echo_many_messages_in_order(
    zmq_context: TrackingContext, dealer: DealerFactory
) -> None:
    """Push style; the handler replies synchronously from inside the reader callback.

    The client reads nothing until every echo is sent, so the echoes must fit in the queues:
    the transport's send HWM is above ``total`` (with the default 1000 whether 5000 echoes fit
    depended on the kernel's TCP buffers, and a CI machine once refused the 3000th).
    """
    seen: list[bytes] = []
    done = asyncio.Event()
    total = 5000
    async with RouterTransport(TransportConfig(hwm=2 * total), context=zmq_context) as transport:

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
async def test_two_peers_are_routed_independently(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    a = dealer(transport.endpoint, b"A")
    b = dealer(transport.endpoint, b"B")
    a.send(b"from-a")
    b.send(b"from-b")
    got = {await recv1(transport), await recv1(transport)}
    assert got == {Incoming(b"A", b"from-a"), Incoming(b"B", b"from-b")}
    assert transport.send(b"B", b"to-b")
    assert transport.send(b"A", b"to-a")
    assert a.recv() == b"to-a"
    assert b.recv() == b"to-b"
    assert a.poll(50) == 0 and b.poll(50) == 0


@pytest.mark.asyncio
async def test_multi_frame_messages_are_flagged(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    client = dealer(transport.endpoint, b"multi")
    client.send_multipart([b"a", b"b", b"c"])
    client.send_multipart([b"", b"req-style"])
    client.send(b"fine")
    assert await recv1(transport) == Incoming(b"multi", b"", True)
    assert await recv1(transport) == Incoming(b"multi", b"", True)
    assert await recv1(transport) == Incoming(b"multi", b"fine", False)
    assert transport.stats.malformed == 2


@pytest.mark.asyncio
async def test_oversized_message_disconnects_only_that_peer(
    zmq_context: TrackingContext, dealer: DealerFactory
) -> None:
    cfg = TransportConfig(max_message_bytes=1024)
    events: list[MonitorEvent] = []
    async with RouterTransport(cfg, context=zmq_context) as t:
        t.set_monitor_handler(events.append)
        big = dealer(t.endpoint)  # generated routing id: a reconnect gets a new one
        good = dealer(t.endpoint, b"good")
        big.send(b"x" * 1024)  # exactly the limit is fine
        first = await recv1(t)
        assert first.payload == b"x" * 1024
        big.send(b"x" * 1025)
        await wait_until(lambda: not t.send(first.peer, b"are you there?"), within=5)
        # The monitor event is best effort and may trail the pipe teardown slightly.
        await wait_until(lambda: any(e.kind == "disconnected" for e in events), within=5)
        good.send(b"still here")
        assert await recv1(t) == Incoming(b"good", b"still here")
        assert t.send(b"good", b"yes")
        assert good.recv() == b"yes"
        assert collector(t).queue.empty()  # the oversized message never surfaced


@pytest.mark.asyncio
async def test_flood_from_a_thread_keeps_loop_responsive(
    transport: RouterTransport, zmq_context: TrackingContext
) -> None:
    """A blocking sender thread floods; the loop keeps running timers meanwhile."""
    count = 50_000
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


@pytest.mark.asyncio
async def test_handler_errors_are_contained(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    collector = Collector()

    def handler(inc: Incoming) -> None:
        if inc.payload == b"boom":
            raise RuntimeError("handler bug")
        collector(inc)

    transport.set_handler(handler)
    client = dealer(transport.endpoint, b"c")
    client.send(b"boom")
    client.send(b"ok")
    assert await collector.get() == Incoming(b"c", b"ok")
    assert transport.stats.handler_errors == 1


@pytest.mark.asyncio
async def test_monitor_reports_accept_and_disconnect(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    events: asyncio.Queue[MonitorEvent] = asyncio.Queue()
    transport.set_monitor_handler(events.put_nowait)
    client = dealer(transport.endpoint, b"m")
    async with asyncio.timeout(5):
        accepted = await events.get()
    assert accepted.kind == "accepted"
    assert accepted.endpoint == transport.endpoint
    client.close(linger=0)
    async with asyncio.timeout(5):
        gone = await events.get()
    assert gone.kind == "disconnected"
    assert gone.value == accepted.value  # the same fd; there is no routing id
    assert transport.stats.accepted == 1
    assert transport.stats.disconnected == 1


@pytest.mark.asyncio
async def test_duplicate_routing_id_is_ignored(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    events: list[MonitorEvent] = []
    transport.set_monitor_handler(events.append)
    owner = dealer(transport.endpoint, b"dup")
    owner.send(b"one")
    assert await recv1(transport) == Incoming(b"dup", b"one")
    impostor = dealer(transport.endpoint, b"dup")
    await wait_until(lambda: sum(e.kind == "accepted" for e in events) == 2)
    impostor.send(b"hijack")
    owner.send(b"two")
    assert await recv1(transport) == Incoming(b"dup", b"two")
    impostor.send(b"hijack again")
    owner.send(b"three")
    assert await recv1(transport) == Incoming(b"dup", b"three")
    assert collector(transport).queue.empty()
    assert transport.send(b"dup", b"reply")
    assert owner.recv() == b"reply"
    assert impostor.poll(100) == 0


@pytest.mark.asyncio
async def test_garbage_handshake_is_reported_and_harmless(
    transport: RouterTransport, dealer: DealerFactory
) -> None:
    events: list[MonitorEvent] = []
    transport.set_monitor_handler(events.append)
    host, port = transport.endpoint.removeprefix("tcp://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        raw.sendall(b"\xff" * 64)
        await wait_until(lambda: any(e.kind == "handshake_failed" for e in events))
    assert transport.stats.handshake_failed == 1
    client = dealer(transport.endpoint, b"ok")
    client.send(b"hi")
    assert await recv1(transport) == Incoming(b"ok", b"hi")


@pytest.mark.asyncio
async def test_close_is_idempotent_and_terminates_owned_context() -> None:
    t = RouterTransport(TransportConfig())
    await t.start()
    await t.close()
    await t.close()
    assert t.closed
    assert t.context.closed
    with pytest.raises(TransportClosed):
        t.send(b"x", b"y")
    with pytest.raises(TransportClosed):
        await t.start()


@pytest.mark.asyncio
async def test_close_with_shared_context_closes_its_sockets(
    zmq_context: TrackingContext,
) -> None:
    t = RouterTransport(TransportConfig(), context=zmq_context)
    await t.start()
    assert len(zmq_context.open_sockets()) == 2  # ROUTER + monitor PAIR
    await t.close()
    assert zmq_context.open_sockets() == []
    assert not zmq_context.closed  # not ours to terminate


@pytest.mark.asyncio
async def test_send_before_start_raises() -> None:
    t = RouterTransport(TransportConfig())
    try:
        with pytest.raises(TransportClosed):
            t.send(b"x", b"y")
    finally:
        await t.close()
    assert t.context.closed


@pytest.mark.asyncio
async def test_bind_failure_raises_transport_error(
    transport: RouterTransport, zmq_context: TrackingContext
) -> None:
    clash = RouterTransport(TransportConfig(endpoint=transport.endpoint), context=zmq_context)
    with pytest.raises(TransportError, match="cannot bind"):
        await clash.start()
    assert clash.closed
    assert len(zmq_context.open_sockets()) == 2  # only the fixture transport's sockets


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="tcp:// or ipc://"):
        TransportConfig(endpoint="inproc://x")
    with pytest.raises(ValueError, match="max_message_bytes"):
        TransportConfig(max_message_bytes=0)
    with pytest.raises(ValueError, match="hwm"):
        TransportConfig(hwm=0)
    with pytest.raises(ValueError, match="heartbeat_ivl_ms"):
        TransportConfig(heartbeat_ivl_ms=-1)


_SLEEPY_CLIENT = """
import sys, zmq
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 0)
sock.setsockopt(zmq.ROUTING_ID, b"sleepy")
sock.connect(sys.argv[1])
sock.send(b"hello")
while True:
    sock.recv()
"""


@pytest.mark.asyncio
async def test_heartbeat_detects_stopped_peer(zmq_context: TrackingContext) -> None:
    """A SIGSTOPped peer stops answering ZMTP PINGs; its pipe is torn down and send fails."""
    cfg = TransportConfig(heartbeat_ivl_ms=100, heartbeat_timeout_ms=300, heartbeat_ttl_ms=300)
    async with RouterTransport(cfg, context=zmq_context) as t:
        # No sandbox: the test stops the very process that holds the socket.
        client = BotCommand((sys.executable, "-c", _SLEEPY_CLIENT, t.endpoint), sandbox="none")
        bot = await BotProcess.start(client)
        try:
            assert await recv1(t, within=10) == Incoming(b"sleepy", b"hello")
            assert t.send(b"sleepy", b"you there?")
            os.kill(bot.pid, signal.SIGSTOP)
            stopped_at = time.monotonic()
            await wait_until(lambda: not t.send(b"sleepy", b"ping"), within=5)
            elapsed = time.monotonic() - stopped_at
            assert elapsed < (100 + 300) / 1000 + 1.5, elapsed
            assert t.stats.disconnected >= 1
        finally:
            await bot.terminate(grace=0.2)  # SIGKILL works on a stopped process too
        assert bot.returncode is not None


@pytest.mark.asyncio
async def test_messages_without_a_handler_are_counted_and_dropped(
    zmq_context: TrackingContext, dealer: DealerFactory
) -> None:
    async with RouterTransport(TransportConfig(), context=zmq_context) as t:
        client = dealer(t.endpoint, b"early")
        client.send(b"nobody listens")
        await wait_until(lambda: t.stats.unhandled == 1)
        client.send(b"now")
        assert await recv1(t) == Incoming(b"early", b"now")
        assert t.stats.received == 2 and t.stats.unhandled == 1
