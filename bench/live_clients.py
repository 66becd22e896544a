"""Spectators for :mod:`bench.bench_live`: N event streams that read everything, and one that
never reads (a small receive buffer, so the server's side fills up). Runs until terminated,
then prints one JSON line: the bytes each reader received, and the seconds from its connection
to its stream's end (or the termination).

Run: ``python -m bench.live_clients URL N``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sys
import time
from urllib.parse import urlsplit

import aiohttp


async def reader(session: aiohttp.ClientSession, url: str, got: list[float]) -> None:
    """Read a stream to its end, keeping ``[bytes read, seconds connected]`` in ``got``."""
    async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as resp:
        start = time.monotonic()
        async for data in resp.content.iter_any():
            got[0] += len(data)
            got[1] = time.monotonic() - start


async def main(url: str, count: int) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    parts = urlsplit(url)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    stalled.sendall(b"GET /events HTTP/1.1\r\nHost: bench\r\n\r\n")  # and never reads
    async with aiohttp.ClientSession() as session:
        got = [[0.0, 0.0] for _ in range(count)]
        tasks = [asyncio.ensure_future(reader(session, url + "events", g)) for g in got]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"bytes": [g[0] for g in got], "seconds": [g[1] for g in got]}), flush=True)
    stalled.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
