"""The limit of new connections per source address (``connect_rate``, ``connect_burst``), with
real sockets: a HELLO storm from one address (``bench/netflood.py hello``) is refused beyond
the burst, counted, while another address, a bot the referee admitted and another process on
the ipc socket still get in."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from bench.netflood import flood
from bench.zmtp_client import ZmtpClient
from referee.net.ratelimit import PRUNE_ABOVE, ConnectRate
from referee.net.transport import Incoming, RouterTransport, TransportConfig

from .conftest import wait_until

pytestmark = pytest.mark.timeout(30)

BURST, RATE = 8, 2.0


def limited(**kwargs: object) -> TransportConfig:
    return TransportConfig(connect_rate=RATE, connect_burst=BURST, **kwargs)  # type: ignore[arg-type]


async def refused_unanswered(endpoint: str, source: str | None = None) -> bool:
    """True if a new connection from ``source`` is closed before the referee's greeting."""
    try:
        client = await ZmtpClient.connect(endpoint, source=source)
    except (ConnectionError, asyncio.IncompleteReadError):
        return True
    await client.close()
    return False


@pytest.mark.asyncio
async def test_a_storm_from_one_address_is_refused_beyond_the_burst_not_another() -> None:
    async with RouterTransport(limited()) as t:
        got: asyncio.Queue[Incoming] = asyncio.Queue()
        t.set_handler(got.put_nowait)
        start = time.monotonic()
        storm = asyncio.ensure_future(flood("hello", t.endpoint, 1.5, None, parallel=4))
        await wait_until(lambda: t.stats.rate_limited > 100)
        # Another address handshakes and is heard while the storm goes on...
        other = await ZmtpClient.connect(t.endpoint, source="127.0.0.2")
        other.send(b"from another address")
        assert (await asyncio.wait_for(got.get(), 3)).payload == b"from another address"
        assert not storm.done()
        # ...while the storm's address is refused before a byte is written to it.
        assert await refused_unanswered(t.endpoint, source="127.0.0.1")
        report = await storm
        seconds = time.monotonic() - start
        await other.close()
        assert report["answered"] <= BURST + RATE * seconds + 1, report
        assert report["refused"] > 100, report
        # Every refusal the attacker saw was counted by the referee (and the probe's).
        assert t.stats.rate_limited >= report["refused"] + 1
        assert t.stats.refused == 0  # the connection caps had nothing to do with it


@pytest.mark.asyncio
async def test_admitted_connections_give_their_token_back() -> None:
    """The referee's own bots and a remote bot that reconnects: each connection the match
    layer admits does not count, so reconnecting many times over the burst is never refused."""
    async with RouterTransport(limited()) as t:
        t.set_handler(lambda inc: t.admit(inc.peer))
        for number in range(3 * BURST):
            client = await ZmtpClient.connect(t.endpoint)
            client.send(b"hello %d" % number)
            await wait_until(lambda n=number: t.stats.received > n)  # type: ignore[misc]
            await client.close()
        assert t.stats.rate_limited == 0
        # Connections that are never admitted spend the bucket.
        for _ in range(BURST):
            assert not await refused_unanswered(t.endpoint)
        assert await refused_unanswered(t.endpoint)
        assert t.stats.rate_limited == 1


@pytest.mark.asyncio
async def test_on_ipc_each_process_has_a_bucket_of_its_own() -> None:
    """A local process that storms the ipc socket runs dry; another process connects."""
    config = TransportConfig(connect_rate=0.1, connect_burst=BURST, local_ipc=True)
    async with RouterTransport(config) as t:
        ipc = t.local_endpoint
        report = await flood("hello", ipc, 0.5, None, parallel=2)  # from this process
        assert report["answered"] <= BURST + 2 and report["refused"] > 20, report
        assert await refused_unanswered(ipc)
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.netflood", "hello", ipc, "0.3",
            stdout=subprocess.PIPE,
        )  # fmt: skip
        out, _ = await other.communicate()
        assert json.loads(out)["answered"] >= 1
        assert await refused_unanswered(t.endpoint) is False  # TCP: another address


@pytest.mark.asyncio
async def test_no_limit_when_the_rate_is_zero() -> None:
    async with RouterTransport(TransportConfig(connect_rate=0, connect_burst=1)) as t:
        report = await flood("hello", t.endpoint, 0.3, None, parallel=2)
        assert report["answered"] > 2 * BURST and report["refused"] == 0, report
        assert t.stats.rate_limited == 0


def test_buckets_refill_and_full_ones_are_dropped() -> None:
    rate = ConnectRate(rate=1.0, burst=2)
    assert rate.take("a", 0.0) and rate.take("a", 0.0) and not rate.take("a", 0.5)
    assert rate.take("a", 1.5)  # one token back after a second
    rate.refund("a")
    assert rate.take("a", 1.5) and not rate.take("a", 1.5)
    for number in range(PRUNE_ABOVE - 1):  # addresses by the thousand, each one token spent
        assert rate.take(f"10.0.{number // 256}.{number % 256}", 2.0)
    assert len(rate) == PRUNE_ABOVE
    assert rate.take("10.9.9.9", 10.0)  # one more: every other bucket is full by now, dropped
    assert len(rate) == 1
