"""A blocked referee loop does not charge a bot the blocked time (real sockets, real ZMTP).

The bot (a libzmq DEALER in a thread, answering at once) replies while the referee's loop is
stuck in a callback. The callback waits until the reply is in the socket's kernel buffer, notes
when (``seen``), then keeps the loop busy for another 200 ms. Whatever the machine's load, the
time charged may not exceed ``seen`` minus the moment just before the request was sent; the
200 ms after ``seen`` would be in it if the referee stamped the reply when it read it. With a
50 ms deadline the deadline passes during the block: a reply that was in the buffer is still
not a timeout.
"""

from __future__ import annotations

import asyncio
import select
import threading
import time

import msgpack
import pytest
import zmq

from protocol.codec import encode
from protocol.schema import ActionMsg, Hello, WireAction
from referee.match.clock import TimeControl
from referee.match.hub import Hub
from referee.net.transport import RouterTransport, TransportConfig

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(30)]

BLOCK = 0.2
GENEROUS = TimeControl(move=5.0, bank=0.0, grace=0.0, heartbeat=5.0)
TIGHT = TimeControl(move=0.05, bank=0.0, grace=0.0, heartbeat=5.0)


def instant_bot(endpoint: str, token: str, failures: list[BaseException]) -> None:
    """Say hello, then answer the first request at once."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    try:
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 10_000)
        sock.connect(endpoint)
        sock.send(encode(Hello(1, "instant", token)))
        while True:
            msg = msgpack.unpackb(sock.recv())
            if msg.get("type") == "request":
                rid = msg["request_id"]
                sock.send(encode(ActionMsg(rid, WireAction("draw_stock"))))
                return
    except BaseException as err:  # reported by the test
        failures.append(err)
    finally:
        sock.close(0)
        ctx.term()


def busy_referee(fd: int) -> float:
    """Block the loop: wait for the reply to reach the socket ``fd``, then stay busy for
    :data:`BLOCK` seconds (a referee at work, not waiting for anything); when it was seen."""
    readable, _, _ = select.select([fd], [], [], 10)
    seen = time.monotonic()
    assert readable, "the bot's reply never reached the socket"
    time.sleep(BLOCK)
    return seen


@pytest.mark.parametrize("control", [GENEROUS, TIGHT], ids=["generous", "deadline-in-block"])
@pytest.mark.parametrize("reader", ["loop", "drain"])
async def test_a_blocked_loop_is_not_charged_to_the_bot(control: TimeControl, reader: str) -> None:
    async with RouterTransport(TransportConfig(heartbeat_ivl_ms=0)) as transport:
        hub = Hub(transport)
        link = hub.open_seat(0, control)
        failures: list[BaseException] = []
        bot = threading.Thread(target=instant_bot, args=(transport.endpoint, link.token, failures))
        bot.start()
        try:
            await asyncio.wait_for(link.connected, 10)
            assert link.peer is not None
            conn = transport._peers[link.peer]  # the connection's socket, to see the reply land
            assert conn.transport is not None
            fd = conn.transport.get_extra_info("socket").fileno()
            done: asyncio.Future[float] = asyncio.get_running_loop().create_future()

            def on_reply(action: WireAction, elapsed: float) -> None:
                done.set_result(elapsed)

            def on_fault(fault: Exception) -> None:
                done.set_exception(fault)

            before = time.monotonic()
            link.ask(1, msgpack.packb({"type": "request", "request_id": 1}), on_reply, on_fault)
            seen = busy_referee(fd)  # the loop is blocked until this coroutine awaits
            if reader == "drain":
                transport.drain_now()  # what the watchdog does before declaring a timeout
                assert done.done()
            elapsed = await asyncio.wait_for(done, 10)
        finally:
            bot.join(15)
    assert not failures
    assert link.fault is None
    assert 0.0 <= elapsed <= seen - before
    assert link.clock.used == elapsed
