"""Plain data of the transport: its configuration, messages, events, counters and errors.

Kept apart from :mod:`referee.net.transport` (the only module that drives zmq sockets) so that
the match layer and tests can name them without the socket code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "Incoming",
    "MonitorEvent",
    "TransportClosed",
    "TransportConfig",
    "TransportError",
    "TransportStats",
]


class TransportError(Exception):
    """Base class for transport failures that are the referee's problem, not a peer's."""


class TransportClosed(TransportError):
    """The transport is closed (or was never started)."""


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """Settings for a ``RouterTransport``.

    ``endpoint`` is ``tcp://host:port`` or ``ipc://path``; port 0 (or ``*``) picks a free port,
    reported by ``RouterTransport.start``.  ``hwm`` is the per-peer ZeroMQ high-water mark in
    messages (both directions).  Heartbeat values of 0 disable ZMTP heartbeats.
    ``local_ipc``: also bind an ``ipc://`` endpoint in a fresh private directory (mode 0700)
    for bots started on this machine (``RouterTransport.local_endpoint``); the unix socket
    costs both sides less CPU per message than TCP loopback. Ignored for an ``ipc://``
    ``endpoint``; where ipc cannot be bound, local bots use ``endpoint``.
    """

    endpoint: str = "tcp://127.0.0.1:0"
    max_message_bytes: int = 65536
    heartbeat_ivl_ms: int = 1000
    heartbeat_timeout_ms: int = 3000
    heartbeat_ttl_ms: int = 3000
    hwm: int = 1000
    local_ipc: bool = False

    def __post_init__(self) -> None:
        if not self.endpoint.startswith(("tcp://", "ipc://")):
            raise ValueError(f"endpoint must be tcp:// or ipc://, got {self.endpoint!r}")
        if self.max_message_bytes <= 0:
            raise ValueError("max_message_bytes must be positive")
        if self.hwm <= 0:
            raise ValueError("hwm must be positive")
        for name in ("heartbeat_ivl_ms", "heartbeat_timeout_ms", "heartbeat_ttl_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")


class Incoming(NamedTuple):
    """One message from a peer: its routing id and the single payload frame.

    ``malformed`` is True (and ``payload`` empty) when the peer sent anything but exactly one
    frame; the match layer should treat that as a protocol fault of ``peer``.
    """

    peer: bytes
    payload: bytes
    malformed: bool = False


class MonitorEvent(NamedTuple):
    """A socket-monitor event: ``kind`` is "accepted", "disconnected" or "handshake_failed".

    ``value`` is the connection's fd (accepted/disconnected) or an error code (handshake
    failures).  There is no routing id: ROUTER does not map connections to peers here.
    """

    kind: str
    event: int
    value: int
    endpoint: str


@dataclass(slots=True)
class TransportStats:
    """Running counters of a transport (mutated in place; read freely)."""

    received: int = 0
    sent: int = 0
    send_failures: int = 0
    malformed: int = 0
    unhandled: int = 0
    """Messages that arrived while no handler was set (dropped)."""
    accepted: int = 0
    disconnected: int = 0
    handshake_failed: int = 0
    handler_errors: int = 0
