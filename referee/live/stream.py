"""One spectator's event stream: the server-sent event encoding, the spectator's queue of
unsent bytes (bounded: a spectator that falls too far behind is dropped), and the limits of the
live page (:class:`LiveConfig`).

A spectator may watch one game (``GET /events?game=ID``): it is sent that game's hands and
decisions, and every spectator is sent the light events (each game's header data and progress,
the standings); see :mod:`referee.live.hub`.

A stream is compressed (:class:`Gzip`) when the client accepts it, as every browser does: a
compressor per spectator, flushed at every write, whose window of the last 32 KB sent makes
what repeats (a step's keys, a hand's cards at every step) cost little.
"""

from __future__ import annotations

import asyncio
import json
import re
import zlib
from collections import deque
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GZIP_LEVEL",
    "Gzip",
    "LiveConfig",
    "Spectator",
    "TooManySpectators",
    "accepts_gzip",
    "sse",
]

GZIP_LEVEL = 1
"""zlib's fastest level: the stream of two instant bots at card delay 0 shrinks 8.7 times (level
6 would make it 14.5 times, for 2.6 times the CPU, and the compression runs on the referee's
loop once per spectator)."""
_GZIP = re.compile(r"(?:^|,)\s*gzip\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*(?:,|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveConfig:
    """The spectator server's limits and its card delay."""

    delay: float = 10.0
    """Seconds after a hand ends before its cards are shown (also the game's fault details)."""
    max_spectators: int = 64
    """Concurrent event streams; more are refused with 503."""
    queue_bytes: int = 1 << 20
    """Unsent bytes a spectator may fall behind by before it is dropped."""
    keep_finished: int = 12
    """Finished games kept on the page (older ones are dropped from it)."""
    flush_seconds: float = 0.1
    """Decisions are sent in batches at most this often (a fast bot makes hundreds a second)."""
    standings_seconds: float = 1.0
    """Standings are sent at most this often (a table changing faster cannot be read)."""

    def __post_init__(self) -> None:
        if not 0 <= self.delay < 1e6:
            raise ValueError(f"the spectator delay must be 0 or more seconds, got {self.delay}")
        if self.max_spectators < 1:
            raise ValueError(f"max spectators must be 1 or more, got {self.max_spectators}")
        if self.queue_bytes < 1024 or self.keep_finished < 0:
            raise ValueError("queue_bytes must be at least 1024 and keep_finished 0 or more")


def sse(kind: str, payload: Any) -> bytes:
    """One server-sent event (JSON has no raw newline, so one ``data`` line)."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return f"event: {kind}\ndata: {text}\n\n".encode()


class TooManySpectators(Exception):
    """The spectator cap is reached."""


class Spectator:
    """One event stream's queue of unsent bytes."""

    def __init__(self, limit: int, game: str | None = None) -> None:
        self.game = game
        """The game it watches (its hands and decisions are sent to it), or None."""
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit
        self._wake = asyncio.Event()
        self.dropped = False
        """Set when it fell too far behind: its stream must end."""
        self.behind = 0
        """The bytes it was behind when dropped."""
        self.ending = False
        """Set when the hub closed: the stream ends after what is queued."""

    @property
    def room(self) -> int:
        """The bytes it can still be sent before it would be dropped."""
        return self._limit - self._size

    def push(self, data: bytes) -> bool:
        """Queue ``data``; False (and dropped) if that would exceed the limit."""
        if self.dropped:
            return False
        if self._size + len(data) > self._limit:
            self.behind = self._size + len(data)
            self.drop()
            return False
        self._chunks.append(data)
        self._size += len(data)
        self._wake.set()
        return True

    def drop(self) -> None:
        """End the stream: free the queue and wake the writer."""
        self.dropped = True
        self._chunks.clear()
        self._size = 0
        self._wake.set()

    def end(self) -> None:
        """End the stream once what is queued has been taken (the hub closes)."""
        self.ending = True
        self._wake.set()

    async def take(self, idle: float) -> bytes | None:
        """Everything queued, as one chunk (empty after ``idle`` seconds with nothing new);
        None once dropped, or once ended and empty."""
        if self.ending and not self._chunks:
            return None
        if not self._chunks and not self.dropped:
            self._wake.clear()
            try:
                async with asyncio.timeout(idle):
                    await self._wake.wait()
            except TimeoutError:
                return b""
        if self.dropped or (self.ending and not self._chunks):
            return None
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        return data


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` header accepts gzip (named, and not with ``q=0``)."""
    found = _GZIP.search(accept_encoding)
    if found is None:
        return False
    try:
        return found.group(1) is None or float(found.group(1)) > 0
    except ValueError:
        return False


class Gzip:
    """One stream's gzip compressor (``Content-Encoding: gzip``): each write is flushed, so
    the page gets every event at once."""

    def __init__(self) -> None:
        self._zlib = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)

    def __call__(self, data: bytes) -> bytes:
        """``data`` compressed, up to its last byte."""
        return self._zlib.compress(data) + self._zlib.flush(zlib.Z_SYNC_FLUSH)

    def end(self) -> bytes:
        """The end of the compressed stream (its checksum and length)."""
        return self._zlib.flush(zlib.Z_FINISH)
