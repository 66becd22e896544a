"""Plain data of the transport: its configuration, messages, counters and errors.

Kept apart from :mod:`referee.net.transport` (the module that owns the sockets) so that the
match layer and tests can name them without the socket code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # referee.net.curve imports libsodium: only CURVE endpoints load it
    from referee.net.curve import Authorizer

__all__ = [
    "CurveServerKeys",
    "Incoming",
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
class CurveServerKeys:
    """The referee's long-term CURVE key pair (raw 32-byte keys) and who may connect.

    ``authorize(client_public_key)`` returns None to admit a client or a reason to refuse it;
    it is asked during the handshake, before the connection can send a message.
    """

    public: bytes
    secret: bytes = field(repr=False)
    authorize: Authorizer


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """Settings for a ``RouterTransport``.

    ``endpoint`` is ``tcp://host:port`` or ``ipc://path``; port 0 (or ``*``) picks a free port,
    reported by ``RouterTransport.start``. ``curve`` makes a ``tcp://`` endpoint require CURVE
    (None: the NULL mechanism, no encryption, for loopback tests and ``--insecure``); an
    ``ipc://`` endpoint is always NULL (the socket file's directory is the access control).
    ``local_ipc``: also listen on an ``ipc://`` endpoint in a fresh private directory (mode
    0700) for the bots started on this machine (``RouterTransport.local_endpoint``).

    Limits (docs/security.md, "Network boundary"): ``max_message_bytes`` per message (a
    multipart message counts as a whole); ``send_buffer_bytes`` queued towards one peer (every
    byte: messages, handshake replies, PINGs, PONGs) before it is aborted and ``send`` fails;
    a close that has not drained within ``close_drain_ms`` is aborted; ``max_connections`` in
    all and ``max_per_address`` from one IP address (or, on ipc, one process); a connection
    must finish its handshake within ``handshake_timeout_ms`` and be admitted by the match
    layer (a valid hello) within ``admit_timeout_ms``; each connection's frames are parsed at
    most ``frames_per_s`` per second (a burst of as many), its reading paused beyond that.
    New connections from one source address (an IP address; on ipc, one process) are held to
    ``connect_burst`` at once and ``connect_rate`` per second after it, those the match layer
    admits given back (:mod:`referee.net.ratelimit`); one beyond is refused at accept
    (``connect_rate`` 0: no limit). Heartbeats: a PING every ``heartbeat_ivl_ms`` to peers that
    speak ZMTP 3.1, and a connection silent for ``heartbeat_timeout_ms`` is dropped (0 disables
    both); ``heartbeat_ttl_ms`` is the silence after which the peer should drop us.
    """

    endpoint: str = "tcp://127.0.0.1:0"
    curve: CurveServerKeys | None = None
    max_message_bytes: int = 65536
    heartbeat_ivl_ms: int = 1000
    heartbeat_timeout_ms: int = 3000
    heartbeat_ttl_ms: int = 3000
    local_ipc: bool = False
    send_buffer_bytes: int = 1 << 20
    max_connections: int = 1024
    max_per_address: int = 32
    handshake_timeout_ms: int = 5000
    admit_timeout_ms: int = 10000
    frames_per_s: int = 20000
    close_drain_ms: int = 1000
    connect_rate: float = 4.0
    connect_burst: int = 32

    def __post_init__(self) -> None:
        if not self.endpoint.startswith(("tcp://", "ipc://")):
            raise ValueError(f"endpoint must be tcp:// or ipc://, got {self.endpoint!r}")
        for name in (
            "max_message_bytes",
            "send_buffer_bytes",
            "max_connections",
            "max_per_address",
            "handshake_timeout_ms",
            "admit_timeout_ms",
            "frames_per_s",
            "close_drain_ms",
            "connect_burst",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        for name in (
            "heartbeat_ivl_ms",
            "heartbeat_timeout_ms",
            "heartbeat_ttl_ms",
            "connect_rate",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")


class Incoming(NamedTuple):
    """One message from a peer: the connection's id and the single payload frame.

    ``malformed`` is True (and ``payload`` empty) when the peer sent anything but exactly one
    frame within the size limit; ``reason`` then says what (``"multipart"`` or
    ``"too_large"``), and the transport closes that connection right after delivering it.
    """

    peer: bytes
    payload: bytes
    malformed: bool = False
    reason: str = ""


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
    """Connections closed for a protocol error or a refused key during the handshake."""
    refused: int = 0
    """Connections closed at once because a connection cap was reached."""
    rate_limited: int = 0
    """Connections closed at once, unread, because their address had used up its
    ``connect_burst`` and ``connect_rate`` of new connections (not counted in ``refused``)."""
    timed_out: int = 0
    """Connections closed for silence: no handshake, no admission, or no heartbeat in time."""
    handler_errors: int = 0
    aborted: int = 0
    """Connections dropped at once: more than ``send_buffer_bytes`` queued towards them, or a
    close that did not drain within ``close_drain_ms``."""
    without_curve: int = 0
    """Connections to a CURVE endpoint that ended before the handshake was complete, as a
    libzmq client without CURVE (a bot that did not use ``GIN_REFEREE_SERVER_KEY``) ends
    them: the hint a bot that never said hello gets."""
    old_zmtp: int = 0
    """Connections refused for greeting with a ZMTP version before 3.0 (libzmq 3.x, Debian's
    JeroMQ 0.3.6): the hint a bot that never said hello gets."""
    old_zmtp_version: str = ""
    """The latest such version, as ``ZMTP 2.0``."""
    pongs_dropped: int = 0
    """PONGs not written because the peer had not read what was queued before them."""
