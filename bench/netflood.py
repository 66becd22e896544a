"""A hostile network client: floods a referee's endpoint one way for a while, then reports.

Usage: ``python -m bench.netflood MODE ENDPOINT SECONDS [--server-key Z85]``. It runs until
SECONDS have passed (reconnecting whenever the referee closes it), then prints one JSON line
with what it did: connections made, refused or closed by the referee, bytes and frames sent.
Used by ``tests/e2e/test_boundary.py`` and ``bench/bench_boundary.py``. Modes:

* ``multipart``: frames with the MORE flag that never end a message (libzmq's ROUTER held
  these without bound);
* ``bigframes``: one-frame messages just under 64 KiB, as fast as the socket takes them;
* ``garbage``: random bytes instead of a greeting;
* ``idle``: opens connections and sends nothing, from source addresses 127.0.0.2, .3, ...
  in turn (30 each: past any per-address cap on loopback), for descriptor exhaustion;
* ``storm``: connects, handshakes and disconnects as fast as it can;
* ``squat``: libzmq DEALERs asking for libzmq's first automatic routing ids, then ordinary
  connections (the sequence that made libzmq's ROUTER assert).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

import zmq
from zmq.utils import z85

from bench.zmtp_client import ZmtpClient, frame

__all__ = ["flood"]

MODES = ("multipart", "bigframes", "garbage", "idle", "storm", "squat")


async def flood(
    mode: str, endpoint: str, seconds: float, server_key: bytes | None
) -> dict[str, int]:
    """Attack ``endpoint`` for ``seconds``; return counters."""
    stats = {"connections": 0, "failed": 0, "closed_by_referee": 0, "bytes": 0, "frames": 0}
    end = time.monotonic() + seconds
    if mode == "squat":
        await asyncio.to_thread(_squat, endpoint, stats)
        return stats
    if mode == "idle":
        await _idle(endpoint, end, stats)
        return stats
    while time.monotonic() < end:
        try:
            async with asyncio.timeout(2):
                client = await ZmtpClient.connect(endpoint, server_key=server_key)
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
    args = parser.parse_args()
    key = z85.decode(args.server_key) if args.server_key else None
    print(json.dumps(asyncio.run(flood(args.mode, args.endpoint, args.seconds, key))), flush=True)


if __name__ == "__main__":
    main()
