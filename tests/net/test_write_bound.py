"""Every byte the endpoint writes is bounded per peer: PONGs, closes and messages towards a
peer that never reads (issue #29).

The attacker is a real process (``bench/pingflood.py``): connections that PING as fast as they
can and never read. Before the bound, each PONG owed was queued and a connection the referee
closed waited for a drain that never came, holding its slot, its key and its bytes; so did a
connection whose peer ended its own side (``shutdown(SHUT_WR)``) with bytes still queued
towards it, as asyncio closes it only once it has drained.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import select
import sys
from collections.abc import Callable

import pytest
from nacl.bindings import crypto_box_keypair
from zmq.utils import z85

from bench.common import rss_kib
from bench.zmtp_client import ZmtpClient
from referee.net.transport import CurveServerKeys, Incoming, RouterTransport, TransportConfig

from .conftest import wait_until

pytestmark = pytest.mark.timeout(60)

SERVER_PUBLIC, SERVER_SECRET = crypto_box_keypair()
ALICE = crypto_box_keypair()
MiB = 1024  # rss_kib's unit


class Lost:
    """The lost handler: ``(peer, reason)`` of every connection that ended."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, str]] = []

    def __call__(self, peer: bytes, reason: str) -> None:
        self.seen.append((peer, reason))


async def pingflood(endpoint: str, seconds: float, *args: str) -> dict[str, object]:
    """Run ``bench.pingflood`` as its own process (its workers are processes too)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.pingflood", endpoint, str(seconds), *args,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    report: dict[str, object] = json.loads(out)
    return report


SCALES = (1, 2, 4, 8)
"""How much longer each attack of a flood test lasts than its first, at most: it attacks
again, longer each time, until its attack has happened."""


Attack = Callable[[int], tuple[TransportConfig, tuple[str, ...]]]
"""A flood test's attack at a scale: the transport's config and ``bench.pingflood``'s
options (what lasts scales: the admission deadline, the waves, the half-close)."""


async def flood_local_ipc(
    attack: Attack, until: Callable[[RouterTransport, dict[str, object]], bool]
) -> tuple[RouterTransport, dict[str, object], int]:
    """``8 * scale`` s of ``bench.pingflood`` (2 processes of 4 connections, and the attack's
    options) against a fresh transport's private ipc endpoint (the attack's config), waited
    out until every connection is gone, at each of :data:`SCALES` until ``until(transport,
    report)`` says the attack did what it is for: a PONG is dropped, a close left undrained,
    only once the kernel's socket buffer towards the attacker is full, and on a loaded
    machine the referee reads so seldom (one PONG per read) that a 3 s connection never fills
    it. The last transport, its report (with its ``scale``), and how much the process grew
    (KiB)."""
    for scale in SCALES:
        config, args = attack(scale)
        config = dataclasses.replace(config, endpoint="tcp://127.0.0.1:0", local_ipc=True)
        async with RouterTransport(config) as t:
            before = rss_kib()
            report = await pingflood(
                t.local_endpoint, 8 * scale, "--connections", "4", "--processes", "2", *args
            )
            await wait_until(lambda: t.connections == 0, within=30)
            grew = rss_kib() - before
        if until(t, report):
            break
    return t, {**report, "scale": scale}, grew


def count(report: dict[str, object], key: str) -> int:
    """How many of a report's spread ``key`` there were (0 when absent)."""
    spread = report.get(key)
    value = spread.get("count", 0) if isinstance(spread, dict) else 0
    return value if isinstance(value, int) else 0


def flooded(t: RouterTransport, report: dict[str, object]) -> bool:
    """The ping flood did what its test looks at: over 100,000 PINGs, PONGs dropped, closes
    aborted, more connections than one wave's, some of them after a drop."""
    pings, made = report.get("pings", 0), report.get("connections", 0)
    assert isinstance(pings, int) and isinstance(made, int)
    return (
        pings > 100_000 and t.stats.pongs_dropped > 0 and t.stats.aborted > 0
        and count(report, "reconnect_s") > 0 and made > 4 * 2 * 4
    )  # fmt: skip


def waves(scale: int) -> tuple[TransportConfig, tuple[str, ...]]:
    """The ping flood: connections closed at the admission deadline (3 s), waves of
    processes every 2 s (longer at a larger scale)."""
    return TransportConfig(admit_timeout_ms=3000 * scale), ("--wave", str(2 * scale))


@pytest.mark.asyncio
@pytest.mark.timeout(sum(SCALES) * 8 * 3)
async def test_a_ping_flood_that_never_reads_holds_nothing_and_its_slots_come_back() -> None:
    t, report, grew = await flood_local_ipc(waves, until=flooded)
    pings, made = report["pings"], report["connections"]
    assert isinstance(pings, int) and isinstance(made, int)
    assert pings > 100_000  # it really flooded
    assert t.stats.pongs_dropped > 0  # a peer that does not read is owed one PONG at most
    # The admission deadline closed each connection; the close did not drain (nothing is
    # read), so it was aborted and its slot given back: the workers connected again, past
    # the 32 each is allowed at once.
    assert t.stats.aborted > 0
    reconnected = report["reconnect_s"]
    assert isinstance(reconnected, dict) and reconnected["count"] > 0, report
    assert made > 4 * 2 * 4, report  # more than a wave of 2 processes of 4 connections
    assert grew < 64 * MiB, f"grew {grew / MiB:.0f} MiB"


@pytest.mark.asyncio
async def test_a_curve_key_flooding_pings_is_free_again_after_its_abort() -> None:
    keys = CurveServerKeys(SERVER_PUBLIC, SERVER_SECRET, lambda k: None if k == ALICE[0] else "no")
    config = TransportConfig(curve=keys, admit_timeout_ms=1000)
    async with RouterTransport(config) as t:
        lost = Lost()
        t.set_lost_handler(lost)
        report = await pingflood(
            t.endpoint, 5, "--connections", "1", "--processes", "1",
            f"--server-key={z85.encode(SERVER_PUBLIC).decode()}",  # a key may begin with "-"
            f"--client-secret={z85.encode(ALICE[1]).decode()}",
        )  # fmt: skip
        # One live connection per key: each new one got in only once the last was dropped.
        made = report["connections"]
        assert isinstance(made, int) and made >= 2, report
        ended = [reason for _, reason in lost.seen[:-1]]  # the last one, the attacker ended
        assert ended and all(reason == "no valid hello in time" for reason in ended), lost.seen
        await wait_until(lambda: t.connections == 0)
        inbox: asyncio.Queue[Incoming] = asyncio.Queue()
        t.set_handler(inbox.put_nowait)
        again = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
        again.send(b"back")
        async with asyncio.timeout(5):
            assert (await inbox.get()).payload == b"back"
        await again.close()


async def a_peer_that_never_reads(t: RouterTransport) -> tuple[Lost, bytes, ZmtpClient]:
    """A client that said one message and reads nothing more; what the transport loses."""
    lost = Lost()
    t.set_lost_handler(lost)
    inbox: asyncio.Queue[Incoming] = asyncio.Queue()
    t.set_handler(inbox.put_nowait)
    client = await ZmtpClient.connect(t.endpoint)
    client.stop_reading()
    client.send(b"hello")
    async with asyncio.timeout(5):
        peer = (await inbox.get()).peer
    return lost, peer, client


@pytest.mark.asyncio
async def test_a_peer_over_the_send_bound_is_aborted_and_forgotten() -> None:
    config = TransportConfig(send_buffer_bytes=256 * 1024, heartbeat_ivl_ms=0)
    async with RouterTransport(config) as t:
        lost, peer, client = await a_peer_that_never_reads(t)
        sent = 0
        while t.send(peer, b"x" * 60_000):
            sent += 1
        assert sent * 60_000 > 256 * 1024  # the kernel's buffers took some first
        assert t.stats.aborted == 1
        await wait_until(lambda: lost.seen != [])
        assert lost.seen[0][0] == peer and "not reading" in lost.seen[0][1]
        assert t.connections == 0 and t.send(peer, b"more") is False
        # Reset, not closed: the kernel drops what it held for the peer at once, and the
        # peer, its window shut, learns it (a FIN would wait behind the bytes it never reads).
        poller = select.poll()
        poller.register(client.writer.get_extra_info("socket").fileno(), select.POLLERR)
        await wait_until(lambda: bool(poller.poll(0)))
        client.writer.transport.abort()


@pytest.mark.asyncio
async def test_a_close_that_does_not_drain_is_aborted() -> None:
    config = TransportConfig(close_drain_ms=200, heartbeat_ivl_ms=0)
    async with RouterTransport(config) as t:
        lost, peer, client = await a_peer_that_never_reads(t)
        while t.send(peer, b"x" * 60_000) and t.stats.aborted == 0:
            if t._peers[peer].transport.get_write_buffer_size():  # type: ignore[union-attr]
                break  # the kernel's buffers are full: what follows stays queued here
        t.disconnect(peer, "rejected: unknown token")
        t.admit(peer)  # an admission that comes after the close keeps its drain deadline
        await wait_until(lambda: lost.seen != [])
        assert lost.seen == [(peer, "rejected: unknown token")]
        assert t.stats.aborted == 1 and t.connections == 0
        client.writer.transport.abort()


def half_closed(t: RouterTransport, report: dict[str, object]) -> bool:
    """The half-closing flood did what its test looks at: connections ended their side and
    the referee closed them, aborting closes that did not drain."""
    return count(report, "released_s") > 0 and t.stats.aborted > 0


def half_closes(scale: int) -> tuple[TransportConfig, tuple[str, ...]]:
    """Connections that end their side after 1 s of PINGs (longer at a larger scale); no
    admission deadline within the attack (60 s)."""
    config = TransportConfig(admit_timeout_ms=60_000 * scale, close_drain_ms=300)
    return config, ("--half-close", str(scale))


@pytest.mark.asyncio
@pytest.mark.timeout(sum(SCALES) * 8 * 3)
async def test_peers_that_half_close_without_reading_are_aborted_and_their_slots_come_back() -> (
    None
):
    """The flood's connections end their side after 1 s of PINGs, with PONGs still queued
    towards them, and keep their sockets: each is aborted at the drain deadline (before, each
    held its slot until the attacker left) and the attacker connects again."""
    t, report, grew = await flood_local_ipc(half_closes, until=half_closed)
    released = report["released_s"]
    assert isinstance(released, dict) and released["count"] > 0, report
    # No deadline of the referee's own ran out (admission: 60 s): every abort was a close
    # that did not drain, and only the peers' own ends of their streams closed them.
    assert t.stats.aborted > 0 and t.stats.timed_out == 0, t.stats
    assert grew < 64 * MiB, f"grew {grew / MiB:.0f} MiB"


@pytest.mark.asyncio
async def test_a_curve_peer_that_half_closes_with_bytes_queued_gives_its_key_back() -> None:
    keys = CurveServerKeys(SERVER_PUBLIC, SERVER_SECRET, lambda k: None if k == ALICE[0] else "no")
    config = TransportConfig(curve=keys, close_drain_ms=200, heartbeat_ivl_ms=0)
    async with RouterTransport(config) as t:
        lost = Lost()
        t.set_lost_handler(lost)
        inbox: asyncio.Queue[Incoming] = asyncio.Queue()
        t.set_handler(inbox.put_nowait)
        client = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
        client.stop_reading()
        client.send(b"hello")
        async with asyncio.timeout(5):
            peer = (await inbox.get()).peer
        conn = t._peers[peer]
        while conn.transport is not None and not conn.transport.get_write_buffer_size():
            assert t.send(peer, b"x" * 60_000)  # until the kernel's buffers are full
        client.writer.write_eof()  # and the socket kept open, unread
        await wait_until(lambda: lost.seen != [])
        assert lost.seen == [(peer, "connection closed by the peer")]
        assert t.stats.aborted == 1 and t.connections == 0
        again = await ZmtpClient.connect(t.endpoint, server_key=SERVER_PUBLIC, keys=ALICE)
        again.send(b"back")
        async with asyncio.timeout(5):
            assert (await inbox.get()).payload == b"back"
        await again.close()
        client.writer.transport.abort()
