"""Spectators for :mod:`bench.bench_live`: N readers that behave as the live page does, and one
stream that never reads (a small receive buffer, so the server's side fills up). Runs until
terminated, then prints one JSON line: the bytes each reader received, and the seconds from its
first connection to its last stream's end (or the termination).

A reader is the page (referee/live/static/live.js): it connects to ``events``, shows the first
game in play (else the last finished) and watches it (``events?game=ID``: that game's hands
come too), stays on it until the game leaves the page, then watches the next one so chosen; it
stops at the ``over`` event. It accepts gzip, as a browser does, and counts the bytes as they
came over the wire.

Run: ``python -m bench.live_clients URL N``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sys
import time
import zlib
from urllib.parse import quote, urlsplit

import aiohttp


def shown(games: dict[str, bool]) -> str | None:
    """The game the page shows first: the first in play, else the last finished."""
    playing = [game for game, over in games.items() if not over]
    return playing[0] if playing else next(reversed(games), None)


async def reader(session: aiohttp.ClientSession, url: str, got: list[float]) -> None:
    """Follow the stream as the page does, keeping ``[bytes read, seconds]`` in ``got``."""
    start: float | None = None
    game: str | None = None
    while True:
        target = url + "events" + (f"?game={quote(game)}" if game else "")
        switch: str | None = None
        async with session.get(target, timeout=aiohttp.ClientTimeout(total=None)) as resp:
            start = time.monotonic() if start is None else start
            games: dict[str, bool] = {}
            buffer = b""
            gzip = resp.headers.get("Content-Encoding") == "gzip"
            unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
            async for data in resp.content.iter_any():
                got[0] += len(data)
                got[1] = time.monotonic() - start
                text = unzip.decompress(data) if gzip else data
                *blocks, buffer = (buffer + text).split(b"\n\n")
                for block in blocks:
                    kind, _, rest = block.partition(b"\ndata: ")
                    if kind == b"event: over":
                        return
                    if kind in (b"event: match", b"event: drop"):
                        event = json.loads(rest)
                        if kind == b"event: drop":
                            games.pop(event["id"], None)
                        else:
                            over = event["data"].get("status") == "over"
                            games[event["id"]] = games.get(event["id"], False) or over
                if game is None or game not in games:
                    switch = shown(games)
                    if switch is not None and switch != game:
                        break
        if switch is None or switch == game:
            return  # the stream ended
        game = switch


async def main(url: str, count: int) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    parts = urlsplit(url)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    stalled.sendall(b"GET /events HTTP/1.1\r\nHost: bench\r\n\r\n")  # and never reads
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        got = [[0.0, 0.0] for _ in range(count)]
        tasks = [asyncio.ensure_future(reader(session, url, g)) for g in got]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"bytes": [g[0] for g in got], "seconds": [g[1] for g in got]}), flush=True)
    stalled.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
