"""The referee's ROUTER socket: its options, its endpoints and its monitor's frames.

Used only by :mod:`referee.net.transport` (with it, the only modules that import zmq).

Socket options, set before ``bind``:
``LINGER=0`` (close never blocks on dead bots); ``ROUTER_MANDATORY=1`` (sending to an unknown or
vanished routing id fails at once with EHOSTUNREACH instead of a silent drop); ``ROUTER_HANDOVER=0``
(a second connection claiming a routing id in use is ignored by libzmq, so a bot cannot hijack
another's identity); ``MAXMSGSIZE`` (libzmq disconnects a peer sending a larger frame, others are
unaffected); ``SNDHWM``/``RCVHWM`` = ``hwm`` messages per peer (one request is in flight per bot,
so queues fill only when a bot stalls or floods: a full send queue makes ``send`` return False, a
full receive queue makes libzmq stop reading that one connection; worst case libzmq holds
``hwm * max_message_bytes`` per peer, 64 MiB with the defaults, so lower ``hwm`` for large
tournaments); ZMTP heartbeats ``HEARTBEAT_IVL``/``_TIMEOUT``/``_TTL`` (we PING every interval and
drop a connection silent for the timeout, so a hung or SIGSTOPped bot gets disconnected instead
of looking connected forever; TTL tells the peer to drop us if we go silent; 0 disables).

Endpoints: the configured one (``tcp://`` with the real port, or ``ipc://``), and with
``TransportConfig.local_ipc`` a second, ``ipc://`` one in a fresh private directory (mode 0700)
for the bots the referee starts itself. One socket serves both, so routing ids, limits and
heartbeats are the same for local and remote bots.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import struct
import tempfile
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import zmq

from referee.net.types import MonitorEvent, TransportConfig, TransportError

__all__ = ["BoundRouter", "monitor_event", "open_router", "remove_ipc_dir"]

logger = logging.getLogger(__name__)

_EVENT_KINDS: Mapping[int, str] = {
    zmq.EVENT_ACCEPTED: "accepted",
    zmq.EVENT_DISCONNECTED: "disconnected",
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL: "handshake_failed",
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "handshake_failed",
    zmq.EVENT_HANDSHAKE_FAILED_AUTH: "handshake_failed",
}
_MONITOR_EVENTS = sum(_EVENT_KINDS)  # distinct bit flags
_monitor_ids = itertools.count()


class BoundRouter(NamedTuple):
    """A configured, bound ROUTER socket and what was bound."""

    sock: zmq.Socket[bytes]
    monitor: zmq.Socket[bytes]
    """PAIR socket receiving the ROUTER's monitor events (see :func:`monitor_event`)."""
    endpoint: str
    """The configured endpoint, with the real port."""
    local_endpoint: str
    """The private ``ipc://`` endpoint for local bots, or ``endpoint``."""
    ipc_dir: str | None
    """The private directory holding the ipc socket (remove it with :func:`remove_ipc_dir`)."""


def open_router(context: zmq.Context[zmq.Socket[bytes]], cfg: TransportConfig) -> BoundRouter:
    """Create the ROUTER socket, set its options, bind it and start its monitor.

    Raises :class:`TransportError` naming the endpoint if it cannot be bound (nothing is left
    open then). A side ``ipc://`` endpoint that cannot be made is logged and skipped: local
    bots then use ``endpoint``.
    """
    sock = context.socket(zmq.ROUTER)
    try:
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        sock.setsockopt(zmq.ROUTER_HANDOVER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, cfg.max_message_bytes)
        sock.setsockopt(zmq.SNDHWM, cfg.hwm)
        sock.setsockopt(zmq.RCVHWM, cfg.hwm)
        if cfg.heartbeat_ivl_ms:
            sock.setsockopt(zmq.HEARTBEAT_IVL, cfg.heartbeat_ivl_ms)
            sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, cfg.heartbeat_timeout_ms)
            sock.setsockopt(zmq.HEARTBEAT_TTL, cfg.heartbeat_ttl_ms)
        sock.bind(cfg.endpoint)
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        monitor = sock.get_monitor_socket(
            _MONITOR_EVENTS, f"inproc://gin-referee-monitor-{next(_monitor_ids)}"
        )
    except zmq.ZMQError as exc:
        sock.close(linger=0)
        raise TransportError(f"cannot bind {cfg.endpoint}: {exc}") from exc
    monitor.setsockopt(zmq.LINGER, 0)
    local_endpoint, ipc_dir = endpoint, None
    if cfg.local_ipc and endpoint.startswith("tcp://"):
        local = _bind_local_ipc(sock)
        if local is not None:
            local_endpoint, ipc_dir = local
    return BoundRouter(sock, monitor, endpoint, local_endpoint, ipc_dir)


def _bind_local_ipc(sock: zmq.Socket[bytes]) -> tuple[str, str] | None:
    """Bind ``ipc://<private dir>/referee.sock``; (endpoint, directory), or None if it fails."""
    try:
        directory = tempfile.mkdtemp(prefix="gin-referee-")  # mode 0700: this user only
    except OSError as exc:
        logger.warning("no private directory for an ipc endpoint (%s); local bots use TCP", exc)
        return None
    endpoint = f"ipc://{directory}/referee.sock"
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as exc:  # e.g. a path too long for a unix socket
        logger.warning("cannot bind %s (%s); local bots use TCP", endpoint, exc)
        remove_ipc_dir(directory)
        return None
    return endpoint, directory


def remove_ipc_dir(directory: str) -> None:
    """Remove the private directory of the side ``ipc://`` endpoint (after the socket closed)."""
    shutil.rmtree(directory, ignore_errors=True)


def monitor_event(frames: Sequence[bytes]) -> MonitorEvent | None:
    """The event in one monitor message, or None for events we do not track (or a format
    other than libzmq 4.x's two frames: 16-bit event id + 32-bit value, then the endpoint)."""
    if len(frames) != 2 or len(frames[0]) != 6:
        return None
    event_id, value = struct.unpack("=Hi", frames[0])
    kind = _EVENT_KINDS.get(event_id)
    if kind is None:
        return None
    return MonitorEvent(kind, event_id, value, frames[1].decode(errors="replace"))
