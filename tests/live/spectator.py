"""A spectator as an attacker runs one: a real HTTP client that keeps every byte it is sent,
with the time it arrived, and a parser that accounts for every one of those bytes."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")
"""A card's text anywhere (``7h``, ``Td``), not inside a longer word or number."""


def cards_in(text: str) -> set[str]:
    """Every card named in ``text``."""
    return set(CARD.findall(text))


@dataclass(slots=True)
class Event:
    """One server-sent event and when its last byte arrived (``time.monotonic``)."""

    kind: str
    data: Any
    raw: str
    at: float


@dataclass(slots=True)
class Spectator:
    """Reads an event stream until cancelled or the stream ends: every chunk with its arrival
    time in ``chunks``, every event in ``events`` (``on_event`` is called with each)."""

    url: str
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    status: int = 0
    on_event: Callable[[Event], None] | None = None
    _buffer: bytes = b""

    async def run(self, session: aiohttp.ClientSession) -> None:
        """Connect and read everything (``connected`` is set once the headers are in)."""
        async with session.get(self.url, timeout=aiohttp.ClientTimeout(total=None)) as resp:
            self.status = resp.status
            self.connected.set()
            async for data in resp.content.iter_any():
                at = time.monotonic()
                self.chunks.append((at, data))
                self._parse(data, at)

    def _parse(self, data: bytes, at: float) -> None:
        """Split complete events off the buffer; anything that is not a well-formed event, a
        ``retry`` line or a comment fails the test."""
        self._buffer += data
        while b"\n\n" in self._buffer:
            block, self._buffer = self._buffer.split(b"\n\n", 1)
            text = block.decode("utf-8")
            lines = text.split("\n")
            if all(line.startswith(":") or line.startswith("retry: ") for line in lines):
                assert cards_in(text) == set(), text
                continue
            assert len(lines) == 2, f"not one event: {text[:300]!r}"
            assert lines[0].startswith("event: ") and lines[1].startswith("data: "), text[:300]
            payload = lines[1].removeprefix("data: ")
            event = Event(lines[0].removeprefix("event: "), json.loads(payload), payload, at)
            self.events.append(event)
            if self.on_event is not None:
                self.on_event(event)

    def leftover(self) -> bytes:
        """Bytes received after the last complete event (none, on a clean stream)."""
        return self._buffer
