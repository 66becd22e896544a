"""A hostile network client: floods a referee's endpoint one way for a while, then reports.

Usage: ``python -m bench.netflood MODE ENDPOINT SECONDS [--server-key=Z85] [--parallel N]
[--source IP]``. It runs until SECONDS have passed (reconnecting whenever the referee closes
it), then prints one JSON line with what it did: connections made, refused or closed by the
referee, bytes and frames sent. Used by ``tests/e2e/test_boundary.py``,
``bench/bench_boundary.py`` and ``bench/bench_storm.py``.

The modes that reconnect (``multipart``, ``bigframes``, ``garbage``, ``storm``) connect to a
loopback endpoint from 250 source addresses (127.0.1.2, .3, ...) in turn, as an attacker with
many addresses would, so that the referee's limit of new connections per address does not
weaken the attack on its memory; ``hello`` is the attack on that limit, from one address.
Modes:

* ``multipart``: frames with the MORE flag that never end a message (libzmq's ROUTER held
  these without bound);
* ``bigframes``: one-frame messages just under 64 KiB, as fast as the socket takes them;
* ``garbage``: random bytes instead of a greeting;
* ``idle``: opens connections and sends nothing, from source addresses 127.0.0.2, .3, ...
  in turn (30 each: past any per-address cap on loopback), for descriptor exhaustion;
* ``storm``: connects, handshakes and disconnects as fast as it can;
* ``hello``: a HELLO storm, the cheapest for the attacker: the same greeting and first
  handshake command (a CURVE HELLO made once, or a NULL READY) written on each connection,
  the referee's answer read (under CURVE a WELCOME: a box opened, a key pair made and a box
  sealed by the referee), the connection dropped and the next one opened at once; ``--parallel``
  connections at a time from one source address (``--source``, else the system's choice);
  ``answered`` counts the handshakes the referee served, ``refused`` the connections it closed
  unanswered (``--source`` gives the other modes one address too);
* ``squat``: libzmq DEALERs asking for libzmq's first automatic routing ids, then ordinary
  connections (the sequence that made libzmq's ROUTER assert).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import zmq
from nacl.bindings import crypto_box, crypto_box_keypair
from zmq.utils import z85

from bench.zmtp_client import SIGNATURE, ZmtpClient, frame
from referee.cli.keys import glue_keys

__all__ = ["flood"]

MODES = ("multipart", "bigframes", "garbage", "idle", "storm", "squat", "hello")


async def flood(
    mode: str,
    endpoint: str,
    seconds: float,
    server_key: bytes | None,
    *,
    parallel: int = 1,
    source: str | None = None,
) -> dict[str, int]:
    """Attack ``endpoint`` for ``seconds``; return counters."""
    stats = {"connections": 0, "failed": 0, "closed_by_referee": 0, "bytes": 0, "frames": 0}
    end = time.monotonic() + seconds
    if mode == "hello":
        stats |= {"answered": 0, "refused": 0}
        opening = _opening(server_key)
        await asyncio.gather(
            *(_hello_storm(endpoint, opening, source, end, stats) for _ in range(parallel))
        )
        return stats
    if mode == "squat":
        await asyncio.to_thread(_squat, endpoint, stats)
        return stats
    if mode == "idle":
        await _idle(endpoint, end, stats)
        return stats
    loopback = endpoint.startswith("tcp://127.0.0.1:")
    while time.monotonic() < end:
        if loopback and source is None:  # many addresses: past the limit of new connections
            origin: str | None = f"127.0.1.{2 + stats['connections'] % 250}"
        else:
            origin = source
        try:
            async with asyncio.timeout(2):
                client = await ZmtpClient.connect(endpoint, server_key=server_key, source=origin)
        except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            stats["failed"] += 1
            await asyncio.sleep(0.01)
            continue
        stats["connections"] += 1
        try:
            await _one(mode, client, end, stats)
        except (OSError, ConnectionError):
            stats["closed_by_referee"] += 1
        finally:
            client.writer.transport.abort()
    return stats


async def _one(mode: str, client: ZmtpClient, end: float, stats: dict[str, int]) -> None:
    """Flood one connection until the deadline or until the referee closes it."""
    if mode == "storm":
        return
    chunk: bytes
    if mode == "multipart":
        chunk = b"".join(client.box(b"m" * 200, 1) for _ in range(64))
    elif mode == "bigframes":
        chunk = client.box(os.urandom(65000))
    else:
        chunk = b""
    while time.monotonic() < end:
        if mode == "garbage":
            chunk = frame(os.urandom(100)) + os.urandom(50)
        client.send_raw(chunk)
        stats["bytes"] += len(chunk)
        stats["frames"] += 64 if mode == "multipart" else 1
        await client.writer.drain()
        if client.writer.transport.is_closing() or client.reader.at_eof():
            raise ConnectionError("closed")


def _opening(server_key: bytes | None) -> bytes:
    """What a ``hello`` storm writes on every connection: greeting and first command."""
    if server_key is None:
        return (
            SIGNATURE
            + b"\x03\x01"
            + b"NULL".ljust(20, b"\x00")
            + bytes(32)
            + frame(b"\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER", 4)
        )
    public, secret = crypto_box_keypair()
    short = (1).to_bytes(8, "big")
    box = crypto_box(bytes(64), b"CurveZMQHELLO---" + short, server_key, secret)
    hello = frame(b"\x05HELLO\x01\x00" + bytes(72) + public + short + box, 4)
    return SIGNATURE + b"\x03\x01" + b"CURVE".ljust(20, b"\x00") + bytes(32) + hello


async def _hello_storm(
    endpoint: str, opening: bytes, source: str | None, end: float, stats: dict[str, int]
) -> None:
    """One connection after another until ``end``: write ``opening``, read the answer, drop."""
    while time.monotonic() < end:
        try:
            async with asyncio.timeout(2):
                reader, writer = await _open(endpoint, source)
        except (OSError, TimeoutError):
            stats["failed"] += 1
            await asyncio.sleep(0.001)
            continue
        stats["connections"] += 1
        try:
            writer.write(opening)
            async with asyncio.timeout(2):
                await reader.readexactly(64 + 2)  # the greeting and a command's header
            stats["answered"] += 1
        except (OSError, asyncio.IncompleteReadError, TimeoutError):
            stats["refused"] += 1
        finally:
            writer.transport.abort()


async def _open(
    endpoint: str, source: str | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if endpoint.startswith("ipc://"):
        return await asyncio.open_unix_connection(endpoint[len("ipc://") :])
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    local = None if source is None else (source, 0)
    return await asyncio.open_connection(host, int(port), local_addr=local)


async def _idle(endpoint: str, end: float, stats: dict[str, int]) -> None:
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    held: list[asyncio.StreamWriter] = []
    while time.monotonic() < end and len(held) < 5000:
        step = len(held) // 30
        source = f"127.0.{step // 250}.{2 + step % 250}" if host == "127.0.0.1" else None
        try:
            async with asyncio.timeout(1):
                _, writer = await asyncio.open_connection(
                    host, int(port), local_addr=None if source is None else (source, 0)
                )
        except (OSError, TimeoutError):
            stats["failed"] += 1
            await asyncio.sleep(0.01)
            continue
        stats["connections"] += 1
        held.append(writer)
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    for writer in held:
        writer.transport.abort()


def _squat(endpoint: str, stats: dict[str, int]) -> None:
    ctx = zmq.Context()
    try:
        socks = []
        for i in range(8):
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.ROUTING_ID, b"\x00" + (0x6B8B4567 + i).to_bytes(4, "big"))
            sock.connect(endpoint)
            sock.send(b"squatting")
            socks.append(sock)
        for _ in range(8):
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(endpoint)
            sock.send(b"ordinary")
            socks.append(sock)
        stats["connections"] = len(socks)
        time.sleep(1.0)
        for sock in socks:
            sock.close(linger=0)
    finally:
        ctx.term()


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("endpoint")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--server-key", help="the referee's public key (Z85): use CURVE")
    parser.add_argument("--parallel", type=int, default=1, help="hello: connections at a time")
    parser.add_argument("--source", help="hello: the source address to connect from")
    args = parser.parse_args(glue_keys(sys.argv[1:]))  # a key may begin with "-"
    key = z85.decode(args.server_key) if args.server_key else None
    run = flood(
        args.mode, args.endpoint, args.seconds, key, parallel=args.parallel, source=args.source
    )
    print(json.dumps(asyncio.run(run)), flush=True)


if __name__ == "__main__":
    main()
