"""A hostile client that sends ZMTP PINGs as fast as it can and never reads the PONGs.

Usage: ``python -m bench.pingflood ENDPOINT SECONDS [--connections 32] [--processes 2]
[--wave 0] [--half-close S] [--server-key=Z85 --client-secret=Z85]``. It starts
``--processes`` worker processes (each its own pid, so on ``ipc://`` each has its own
per-address cap), and every ``--wave`` seconds (0: once) as many more, the earlier ones
flooding on; each worker holds ``--connections`` connections that complete the handshake
(CURVE with the client's secret key when given), stop reading, and write PINGs until the
referee drops them, then connect again. With ``--half-close S`` each connection ends its own
side after S seconds of PINGs (``shutdown(SHUT_WR)``, the PONGs the referee queued still
unread) and keeps its socket until the referee closes it: asyncio closes such a connection
only once it has drained, which a peer that never reads never allows. (Over TCP the kernel's
buffers take the PONGs first, and take long to fill: the attack is for ``ipc://``.)
Before the referee bounded what it writes, each PONG it owed such a peer was queued (the
referee grew by a gigabyte in two minutes) and a connection it closed stayed open until the
attacker left, holding its slot and its key.

At the end it prints one JSON line: the connections made, those the referee dropped, the
PINGs sent, connection attempts refused, and the seconds from noticing a drop to the next
completed handshake (the median and the largest: how soon the slot and key were free again),
and with ``--half-close`` the seconds from each connection's end of its stream to the
referee's close of the connection, and the connections still open at the end more than
:data:`PINNED_AFTER` seconds after their end (pinned: none, since the referee aborts a close
that does not drain).
Used by ``tests/e2e/test_ping_flood.py``, ``tests/bots/pingflood_bot.py`` and
``bench/soak.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import select
import statistics
import sys
import time
from dataclasses import dataclass, field

from nacl.bindings import crypto_scalarmult_base

from bench.zmtp_client import ZmtpClient
from referee.cli.keys import glue_keys

__all__ = ["flood_pings", "run"]

PING = b"\x04PING\x00\x1e" + b"c" * 16  # TTL 3 s, the longest context a PONG echoes
BATCH = 64
PINNED_AFTER = 10.0
"""Seconds after its half-close at which a connection the referee still holds is pinned."""


@dataclass
class Counts:
    """What one worker did."""

    connections: int = 0
    dropped: int = 0
    """Connections the referee dropped (a write failed)."""
    refused: int = 0
    """Connection attempts that did not complete a handshake."""
    pings: int = 0
    reconnect_s: list[float] = field(default_factory=list)
    """Seconds from each drop noticed to the next completed handshake."""
    released_s: list[float] = field(default_factory=list)
    """Seconds from each half-close to the referee's close of that connection."""
    pinned: int = 0
    """Half-closed connections the referee still held at the end, more than
    :data:`PINNED_AFTER` seconds after their half-close."""


async def _closed_by_referee(client: ZmtpClient, end: float) -> bool:
    """Wait (until ``end``) for the referee to close ``client``'s connection, reading
    nothing: ``poll`` reports its close (``POLLRDHUP``, or ``POLLHUP`` and ``POLLERR`` after a
    reset) while the bytes before it lie unread."""
    poller = select.poll()
    poller.register(client.writer.get_extra_info("socket").fileno(), select.POLLRDHUP)
    while time.monotonic() < end:
        if poller.poll(0):
            return True
        await asyncio.sleep(0.01)  # the other process's progress: nothing to await
    return False


async def _connection(
    endpoint: str,
    end: float,
    keys: tuple[bytes, bytes, bytes] | None,
    stats: Counts,
    half_close: float = 0.0,
) -> None:
    """One connection slot: connect, flood PINGs without reading until dropped (or, with
    ``half_close``, until it ends its side and the referee closes), again."""
    dropped_at: float | None = None
    while time.monotonic() < end:
        try:
            async with asyncio.timeout(2):
                client = await ZmtpClient.connect(
                    endpoint,
                    server_key=None if keys is None else keys[0],
                    keys=None if keys is None else keys[1:],
                )
        except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            stats.refused += 1
            await asyncio.sleep(0.05)
            continue
        stats.connections += 1
        if dropped_at is not None:
            stats.reconnect_s.append(time.monotonic() - dropped_at)
        client.stop_reading()  # never read a PONG
        stop = end if not half_close else min(end, time.monotonic() + half_close)
        try:
            while time.monotonic() < stop:
                client.send_raw(b"".join(client.box(PING, 2) for _ in range(BATCH)))
                stats.pings += BATCH
                async with asyncio.timeout(max(0.01, end - time.monotonic())):
                    await client.writer.drain()
            if half_close and time.monotonic() < end:
                client.writer.write_eof()
                shut = time.monotonic()
                if await _closed_by_referee(client, end):
                    stats.released_s.append(time.monotonic() - shut)
                    raise ConnectionResetError("closed by the referee")
                stats.pinned += end - shut > PINNED_AFTER
        except (OSError, ConnectionError):
            stats.dropped += 1
            dropped_at = time.monotonic()
        except TimeoutError:
            pass  # the end: the referee still holds this connection (it did not drop it)
        finally:
            client.writer.transport.abort()


async def flood_pings(
    endpoint: str,
    seconds: float,
    connections: int,
    keys: tuple[bytes, bytes, bytes] | None,
    half_close: float = 0.0,
) -> Counts:
    """One worker: ``connections`` flooding connections for ``seconds``; its counters."""
    stats = Counts()
    end = time.monotonic() + seconds
    await asyncio.gather(
        *(_connection(endpoint, end, keys, stats, half_close) for _ in range(connections))
    )
    return stats


def _worker(args: tuple[str, float, int, tuple[bytes, bytes, bytes] | None, float]) -> Counts:
    return asyncio.run(flood_pings(*args))


def _spread(seconds: list[float]) -> dict[str, object]:
    """How many, the median and the largest of ``seconds``."""
    return {
        "count": len(seconds),
        "median": round(statistics.median(seconds), 3) if seconds else None,
        "max": round(max(seconds), 3) if seconds else None,
    }


def run(
    endpoint: str,
    seconds: float,
    *,
    connections: int = 32,
    processes: int = 2,
    wave: float = 0.0,
    keys: tuple[bytes, bytes, bytes] | None = None,
    half_close: float = 0.0,
) -> dict[str, object]:
    """The whole attack (see the module docstring); the summed report."""
    waves = max(1, int(seconds // wave)) if wave > 0 else 1
    start = time.monotonic()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes * waves) as pool:
        pending = []
        for n in range(waves):
            delay = start + n * wave - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # the next wave of processes: nothing to await
            left = max(0.5, seconds - (time.monotonic() - start))
            args = (endpoint, left, connections, keys, half_close)
            pending += [pool.apply_async(_worker, (args,)) for _ in range(processes)]
        reports = [p.get() for p in pending]
    total: dict[str, object] = {"processes": len(reports)}
    for key in ("connections", "dropped", "refused", "pings"):
        total[key] = sum(getattr(r, key) for r in reports)
    total["reconnect_s"] = _spread([d for r in reports for d in r.reconnect_s])
    if half_close:
        total["released_s"] = _spread([d for r in reports for d in r.released_s])
        total["pinned"] = sum(r.pinned for r in reports)
    return total


def main() -> None:
    """Command line entry point."""
    from zmq.utils import z85

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("endpoint")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--wave", type=float, default=0.0)
    parser.add_argument(
        "--half-close", type=float, default=0.0, help="end each connection's side after S s"
    )
    parser.add_argument("--server-key", help="the referee's public key (Z85): use CURVE")
    parser.add_argument("--client-secret", help="this client's secret key (Z85)")
    args = parser.parse_args(glue_keys(sys.argv[1:]))  # a key may begin with "-"
    keys = None
    if args.server_key:
        secret = z85.decode(args.client_secret)
        keys = (z85.decode(args.server_key), crypto_scalarmult_base(secret), secret)
    report = run(
        args.endpoint,
        args.seconds,
        connections=args.connections,
        processes=args.processes,
        wave=args.wave,
        keys=keys,
        half_close=args.half_close,
    )
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
