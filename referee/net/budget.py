"""How many connections the referee can afford: the descriptor budget of the endpoint.

Every connection costs a file descriptor, and so do the referee's bot processes (pipes),
records, logs and store. Running out is what aborted the old libzmq endpoint; here the
transport's connection caps are held below what the soft ``RLIMIT_NOFILE`` leaves, counted
apart for TCP (anyone who can reach the port) and ipc (this machine's bots), so that a flood of
TCP connections cannot take the descriptors the referee's own bots need.
"""

from __future__ import annotations

import os
import resource

__all__ = [
    "ACCEPT_BACKLOG",
    "DESCRIPTOR_RESERVE",
    "ConnectionCaps",
    "connection_kind",
    "descriptor_budget",
]

ACCEPT_BACKLOG = 32
"""The listen backlog: asyncio accepts up to this many connections per wake-up, and a refused
connection holds its descriptor until it is closed."""
DESCRIPTOR_RESERVE = 128
"""Descriptors kept for everything but connections (bot pipes, records, logs, the store)."""


def connection_kind(address: str) -> str:
    """``ipc`` for a unix-socket peer (``pid:N``, or ``ipc`` when unknown), else ``tcp``."""
    return "ipc" if address == "ipc" or address.startswith("pid:") else "tcp"


def descriptor_budget() -> int:
    """How many connections of each kind (TCP, ipc) the descriptor limit leaves room for:
    the soft limit less those open now, ``DESCRIPTOR_RESERVE`` and a backlog per listener,
    halved between the two kinds (at least 16 each).

    >>> descriptor_budget() >= 16
    True
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 30
    open_now = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    return max(16, (soft - open_now - DESCRIPTOR_RESERVE - 2 * ACCEPT_BACKLOG) // 2)


class ConnectionCaps:
    """The open connections, counted by kind (TCP, ipc) and by address against their caps."""

    def __init__(self, max_connections: int, max_per_address: int) -> None:
        self.max = {"tcp": max_connections, "ipc": max_connections}
        """The cap of each kind: TCP (anyone who can reach the port) and ipc (this machine's
        bots), each lowered to :func:`descriptor_budget` when the endpoint starts."""
        self.max_per_address = max_per_address
        self._kinds = {"tcp": 0, "ipc": 0}
        self._addresses: dict[str, int] = {}

    def lower_to(self, budget: int) -> None:
        """Hold each kind's cap at most at ``budget``."""
        self.max = {kind: min(cap, budget) for kind, cap in self.max.items()}

    def take(self, address: str) -> str:
        """Count a connection from ``address``; a non-empty reason refuses it (not counted)."""
        kind = connection_kind(address)
        count = self._addresses.get(address, 0)
        if self._kinds[kind] >= self.max[kind]:
            return f"{kind} connection cap ({self.max[kind]}) reached"
        if count >= self.max_per_address:
            return f"{self.max_per_address} connections from {address} already"
        self._kinds[kind] += 1
        self._addresses[address] = count + 1
        return ""

    def release(self, address: str) -> None:
        """A connection counted by :meth:`take` ended."""
        self._kinds[connection_kind(address)] -= 1
        left = self._addresses.get(address, 1) - 1
        if left:
            self._addresses[address] = left
        else:
            self._addresses.pop(address, None)
