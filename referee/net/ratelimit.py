"""New connections per source address: a token bucket that refuses a storm at accept.

A client that connects, handshakes and disconnects as fast as it can costs the referee's loop
a handshake each time (under CURVE a HELLO's box opened, a key pair made and a WELCOME boxed),
which its own games then wait behind (docs/security.md, "Network boundary"). Each source
address (an IP address over TCP; ``pid:N``, one process, over ipc) has a bucket of ``burst``
tokens refilled at ``rate`` per second; a new connection takes one, and a connection that
finds its address's bucket empty is refused at accept, before a byte is read or written.

A connection the match layer admits (a valid hello) gives its token back (:meth:`refund`):
what the bucket counts is connections that never became a bot, so the referee's own bots and
a remote bot that reconnects never run dry, however often they connect, while a storm of
handshakes that never say a valid hello is held to ``burst`` and then ``rate`` per second.

Buckets of addresses gone quiet are dropped once full again, so addresses by the thousand
cost the referee a dict entry each only while they are being refused or refilled.
"""

from __future__ import annotations

__all__ = ["ConnectRate"]

PRUNE_ABOVE = 1024
"""Buckets kept before the full ones are dropped (then again at twice as many)."""


class ConnectRate:
    """Token buckets of new connections, one per source address (``rate`` 0: no limit)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}
        """address -> (tokens, when they were counted)."""
        self._prune_at = PRUNE_ABOVE

    def take(self, address: str, now: float) -> bool:
        """Spend one of ``address``'s tokens at loop time ``now``; False: none is left."""
        if not self.rate:
            return True
        tokens, then = self._buckets.get(address, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens < 1:
            self._buckets[address] = (tokens, now)
            return False
        self._buckets[address] = (tokens - 1, now)
        if len(self._buckets) > self._prune_at:
            self._prune(now)
        return True

    def refund(self, address: str) -> None:
        """Give back the token of a connection from ``address`` that was admitted."""
        entry = self._buckets.get(address)
        if entry is not None:
            self._buckets[address] = (min(float(self.burst), entry[0] + 1), entry[1])

    def __len__(self) -> int:
        return len(self._buckets)

    def _prune(self, now: float) -> None:
        """Drop the buckets that have refilled (a new one starts full anyway)."""
        full = [
            address
            for address, (tokens, then) in self._buckets.items()
            if tokens + (now - then) * self.rate >= self.burst
        ]
        for address in full:
            del self._buckets[address]
        self._prune_at = max(PRUNE_ABOVE, 2 * len(self._buckets))
