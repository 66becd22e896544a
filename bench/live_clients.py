"""Spectators for :mod:`bench.bench_live`: N event streams that read everything, and one that
never reads (a small receive buffer, so the server's side fills up). Runs until terminated.

Run: ``python -m bench.live_clients URL N``.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from urllib.parse import urlsplit

import aiohttp


async def reader(session: aiohttp.ClientSession, url: str) -> int:
    """Read a stream to its end; returns the bytes read."""
    total = 0
    async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as resp:
        async for data in resp.content.iter_any():
            total += len(data)
    return total


async def main(url: str, count: int) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    parts = urlsplit(url)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    stalled.sendall(b"GET /events HTTP/1.1\r\nHost: bench\r\n\r\n")  # and never reads
    async with aiohttp.ClientSession() as session:
        tasks = [asyncio.ensure_future(reader(session, url + "events")) for _ in range(count)]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    stalled.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
