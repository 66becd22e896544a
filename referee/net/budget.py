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

__all__ = ["ACCEPT_BACKLOG", "DESCRIPTOR_RESERVE", "connection_kind", "descriptor_budget"]

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
