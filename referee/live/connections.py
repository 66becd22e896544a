"""A cap on the spectators' connections, so that no number of them can take the referee down.

Each connection costs a descriptor until it closes, and a client may open connections and
send nothing on them. Without a cap, 1,100 idle connections at a 1,024-descriptor limit made
the referee's own ``open`` fail (``OSError(24)``) and ended a ladder. So the listening socket's
protocol factory (:class:`CappedFactory`, around aiohttp's) counts the connections it serves:
past :data:`PER_ADDRESS` from one address, or past the total cap, a new connection is answered
``503 Service Unavailable`` with ``Retry-After`` and closed at once. One log line says when the
server starts refusing, and one how many it refused once it serves again (never a line per
connection). The total cap is a quarter of the process's descriptor limit (at most
:data:`MOST`), which leaves the rest to bots, records and the store.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections import Counter
from collections.abc import Callable
from typing import Any

__all__ = ["MOST", "PER_ADDRESS", "CappedFactory", "default_cap"]

logger = logging.getLogger(__name__)

MOST = 1024
"""The largest total cap."""
PER_ADDRESS = 64
"""Connections one address may hold at once."""

_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 30\r\nConnection: close\r\nContent-Length: 32\r\n\r\n"
    b"too many spectator connections\r\n"
)


def default_cap() -> int:
    """A quarter of this process's descriptor limit, between 16 and :data:`MOST`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MOST if soft == resource.RLIM_INFINITY else max(16, min(MOST, soft // 4))


class _Refused(asyncio.Protocol):
    """Answers 503 and closes (what the client sends is ignored)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_REFUSAL)
        transport.close()


class _Counted(asyncio.Protocol):
    """aiohttp's handler for one connection, counted while it lives."""

    def __init__(self, inner: Any, owner: CappedFactory) -> None:
        self.inner, self.owner, self.address = inner, owner, ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if not self.owner.admit(self.address):
            _Refused().connection_made(transport)
            self.inner = None
            return
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self.inner is None else self.inner.eof_received()

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.inner is not None:
            self.owner.release(self.address)
            self.inner.connection_lost(exc)
            self.inner = None


class CappedFactory:
    """The protocol factory for the listening socket: aiohttp's ``factory`` within the caps."""

    def __init__(self, factory: Callable[[], Any], cap: int, per_address: int = PER_ADDRESS):
        self.factory, self.cap, self.per_address = factory, cap, per_address
        self.live: Counter[str] = Counter()
        self.total = 0
        self.refused = 0
        """Connections refused since the server last served one (0 while it serves)."""
        self.refused_ever = 0

    def __call__(self) -> asyncio.Protocol:
        return _Counted(self.factory(), self)

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (refuse it) over a cap."""
        if self.total >= self.cap or self.live[address] >= self.per_address:
            if not self.refused:
                logger.warning(
                    "spectator connections at their cap (%d in all, %d from %s; at most %d, "
                    "%d per address): refusing new ones with 503",
                    self.total, self.live[address], address, self.cap, self.per_address,
                )  # fmt: skip
            self.refused += 1
            self.refused_ever += 1
            return False
        if self.refused:
            logger.warning("spectator connections served again, %d refused", self.refused)
            self.refused = 0
        self.total += 1
        self.live[address] += 1
        return True

    def release(self, address: str) -> None:
        """A counted connection closed."""
        self.total -= 1
        self.live[address] -= 1
        if not self.live[address]:
            del self.live[address]
