"""Asyncio transport over ONE ZeroMQ ROUTER socket (with transport_socket, the only zmq users).

Design: ``zmq.asyncio`` is avoided (it tops out near 5k msgs/s here); a plain ``zmq.Socket`` is
driven by ``loop.add_reader(sock.FD)``.  That FD is *edge*-triggered, so on readiness the socket
is drained with ``recv(NOBLOCK)`` until ``zmq.Again``; a send also processes libzmq commands and
may consume an edge, so a send outside a drain schedules one with ``loop.call_soon``.  A drain
handles at most ``_BATCH`` messages, then reschedules itself (a flooder cannot starve the loop).

Wire unit: ONE frame per message.  Anything else from a peer (several frames, or a REQ-style
empty delimiter + payload) becomes ``Incoming(peer, b"", malformed=True)`` for the match layer
to fault.  Every message is delivered to the handler (``set_handler``), called synchronously by
the reader; nothing is queued (a message arriving while no handler is set is counted in
``stats.unhandled`` and dropped).

Socket options, the side ``ipc://`` endpoint for local bots and the monitor's frames are set up
in :mod:`referee.net.router_socket`.

Peer loss, honestly: a ROUTER does not say which routing id a lost connection had, and monitor
events (ACCEPTED / DISCONNECTED / HANDSHAKE_FAILED_*) carry only an fd and the endpoint.  They are
exposed as ``MonitorEvent`` via ``set_monitor_handler`` (best effort: logging and statistics).
The reliable per-peer signals are (a) ``send`` returning False (ROUTER_MANDATORY: EHOSTUNREACH
once libzmq has torn the peer's pipe down, e.g. after a heartbeat timeout or an oversized
message) and (b) the match layer's own deadlines for each request.

Known gap: MAXMSGSIZE limits each frame, not the frame count; a peer may send a huge multi-frame
message (delivered as malformed) before the match layer faults it.

Threading: use a ``RouterTransport`` only from the thread running its event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import cast

import zmq

from referee.net.router_socket import monitor_event, open_router, remove_ipc_dir
from referee.net.types import (
    Incoming,
    MonitorEvent,
    TransportClosed,
    TransportConfig,
    TransportError,
    TransportStats,
)

__all__ = [
    "Incoming",
    "MonitorEvent",
    "RouterTransport",
    "TransportClosed",
    "TransportConfig",
    "TransportError",
    "TransportStats",
]

logger = logging.getLogger(__name__)

_BATCH = 512  # max messages handled per reader callback before yielding to the loop
_raw_send = zmq.backend.Socket.send
_raw_recv = zmq.backend.Socket.recv
_raw_get = zmq.backend.Socket.get
_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE | zmq.NOBLOCK)
_RCVMORE = int(zmq.RCVMORE)
_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)


class RouterTransport:
    """Asyncio wrapper around one bound ROUTER socket; see the module docstring.

    Usage::

        async with RouterTransport(TransportConfig()) as t:   # binds
            t.set_handler(on_message)
            t.send(peer, payload)
    """

    def __init__(
        self,
        config: TransportConfig,
        *,
        context: zmq.Context[zmq.Socket[bytes]] | None = None,
    ) -> None:
        self._config = config
        self._own_context = context is None
        self._context: zmq.Context[zmq.Socket[bytes]] = (
            zmq.Context() if context is None else context
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sock: zmq.Socket[bytes] | None = None
        self._monitor: zmq.Socket[bytes] | None = None
        self._fd = -1
        self._monitor_fd = -1
        self._endpoint = self._local_endpoint = ""
        self._ipc_dir: str | None = None
        self._started = False
        self._closed = False
        self._drain_pending = False
        self._in_drain = False
        self._handler: Callable[[Incoming], None] | None = None
        self._monitor_handler: Callable[[MonitorEvent], None] | None = None
        self.stats = TransportStats()

    async def start(self) -> str:
        """Create, configure and bind the socket; return the actual endpoint (real port)."""
        if self._closed:
            raise TransportClosed("transport is closed")
        if self._started:
            raise RuntimeError("transport already started")
        self._loop = asyncio.get_running_loop()
        try:
            bound = open_router(self._context, self._config)
        except TransportError:
            self._term_context()
            self._closed = True
            raise
        sock, monitor = bound.sock, bound.monitor
        self._sock, self._monitor = sock, monitor
        self._endpoint, self._local_endpoint = bound.endpoint, bound.local_endpoint
        self._ipc_dir = bound.ipc_dir
        self._fd, self._monitor_fd = sock.FD, monitor.FD
        self._loop.add_reader(self._fd, self._drain)
        self._loop.add_reader(self._monitor_fd, self._drain_monitor)
        self._started = True
        # Connections may have raced the add_reader; the edge may be gone already.
        self._schedule_drain()
        self._loop.call_soon(self._drain_monitor)
        logger.debug("transport bound to %s", self._endpoint)
        return self._endpoint

    @property
    def endpoint(self) -> str:
        """The bound endpoint with the real port (empty before ``start``)."""
        return self._endpoint

    @property
    def local_endpoint(self) -> str:
        """The endpoint for bots on this machine: the private ``ipc://`` one when
        ``TransportConfig.local_ipc`` bound it, else :attr:`endpoint`."""
        return self._local_endpoint

    @property
    def closed(self) -> bool:
        """True once ``close`` has been called (or ``start`` failed)."""
        return self._closed

    @property
    def context(self) -> zmq.Context[zmq.Socket[bytes]]:
        """The ZeroMQ context in use (owned and terminated by ``close`` if none was passed)."""
        return self._context

    async def close(self) -> None:
        """Stop reading, close the socket and monitor (linger 0), term an owned context.

        Idempotent.  Later ``send`` calls raise ``TransportClosed``.
        """
        if self._closed:
            return
        self._closed = True
        loop, sock, monitor = self._loop, self._sock, self._monitor
        self._sock = self._monitor = None
        if loop is not None and sock is not None and monitor is not None:
            loop.remove_reader(self._fd)
            loop.remove_reader(self._monitor_fd)
            try:
                sock.disable_monitor()
            except zmq.ZMQError as exc:  # pragma: no cover - libzmq refusing is harmless
                logger.debug("disable_monitor failed: %s", exc)
            monitor.close(linger=0)
            sock.close(linger=0)
        if self._ipc_dir is not None:
            remove_ipc_dir(self._ipc_dir)
            self._ipc_dir = None
        self._term_context()
        logger.debug("transport %s closed", self._endpoint or "(unbound)")

    def _term_context(self) -> None:
        if self._own_context and not self._context.closed:
            self._context.term()  # all our sockets are closed with linger 0: returns at once

    async def __aenter__(self) -> RouterTransport:
        """Start the transport (bind) and return it."""
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.close()

    def send(self, peer: bytes, payload: bytes) -> bool:
        """Queue ``payload`` for ``peer`` without blocking.

        Returns False (and logs at INFO) when the peer is unknown or gone (EHOSTUNREACH) or its
        send queue is full (EAGAIN); never raises for peer problems.  Raises
        ``TransportClosed`` if the transport is closed or not started.
        """
        sock = self._sock
        if sock is None:
            raise TransportClosed("transport is closed" if self._closed else "not started")
        reason = ""
        try:
            # The Cython method with plain-int flags: pyzmq's Python wrapper and its enum
            # arithmetic cost more than the send itself on this hot path.
            _raw_send(sock, peer, _SNDMORE_NOBLOCK)
            _raw_send(sock, payload, _NOBLOCK)
        except zmq.Again:
            reason = "send queue full (HWM)"
        except zmq.ZMQError as exc:
            if exc.errno in (zmq.ENOTSOCK, zmq.ETERM):
                raise TransportClosed(f"socket unusable: {exc}") from exc
            reason = "peer unreachable" if exc.errno == zmq.EHOSTUNREACH else str(exc)
        if not self._in_drain:
            self._schedule_drain()
        if not reason:
            self.stats.sent += 1
            return True
        self.stats.send_failures += 1
        logger.info("send to peer %r failed: %s", peer, reason)
        return False

    def drain_now(self) -> None:
        """Deliver every message already received, synchronously.

        The seat layer calls it before declaring a timeout, so that a reply which arrived in
        time is never lost to the referee's own scheduling delay.
        """
        if self._sock is not None and not self._in_drain:
            self._drain()

    def set_handler(self, handler: Callable[[Incoming], None] | None) -> None:
        """Call ``handler(incoming)`` synchronously from the reader for every message.

        ``None`` drops what arrives (counted in ``stats.unhandled``).  Exceptions from the
        handler are logged and counted, never propagated.  The handler may call ``send`` (and
        schedule ``close``).
        """
        self._handler = handler

    def set_monitor_handler(self, handler: Callable[[MonitorEvent], None] | None) -> None:
        """Call ``handler(event)`` for each socket-monitor event (best effort; no routing id)."""
        self._monitor_handler = handler

    def _schedule_drain(self) -> None:
        if not self._drain_pending and self._loop is not None:
            self._drain_pending = True
            self._loop.call_soon(self._drain)

    def _drain(self) -> None:
        """Reader callback: receive until EAGAIN (or the batch limit, then reschedule)."""
        self._drain_pending = False
        sock = self._sock
        if sock is None:
            return
        noblock, rcvmore = _NOBLOCK, _RCVMORE
        recv, get = partial(_raw_recv, sock), partial(_raw_get, sock)
        events, pollin = _EVENTS, _POLLIN
        self._in_drain = True
        try:
            for _ in range(_BATCH):
                try:
                    # Checking EVENTS first avoids raising zmq.Again (an exception costs more
                    # than the whole getsockopt) on the common empty drain after a send.
                    if not cast(int, get(events)) & pollin:
                        return
                    peer = recv(noblock)  # a ROUTER always prefixes the routing id frame
                    payload = recv(noblock)
                    extra = 0
                    while get(rcvmore):
                        recv(noblock)
                        extra += 1
                except zmq.Again:
                    return
                except zmq.ZMQError as exc:
                    logger.debug("recv failed, stopping reader: %s", exc)
                    return
                if extra:
                    logger.debug("peer %r sent %d frames", peer, extra + 1)
                    self._deliver(Incoming(peer, b"", True))
                else:
                    self._deliver(Incoming(peer, payload, False))
                if self._sock is None:  # closed by the handler
                    return
            # Batch exhausted: the edge is consumed, so nobody would wake us. Continue later.
            self._drain_pending = True
            if self._loop is not None:
                self._loop.call_soon(self._drain)
        finally:
            self._in_drain = False

    def _deliver(self, inc: Incoming) -> None:
        stats = self.stats
        stats.received += 1
        if inc.malformed:
            stats.malformed += 1
        handler = self._handler
        if handler is None:
            stats.unhandled += 1
            return
        try:
            handler(inc)
        except Exception:
            stats.handler_errors += 1
            logger.exception("transport message handler failed for peer %r", inc.peer)

    def _drain_monitor(self) -> None:
        """Reader callback for the monitor PAIR socket (same edge-triggered pattern)."""
        monitor = self._monitor
        if monitor is None:
            return
        while True:
            try:
                frames = monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            except zmq.ZMQError as exc:
                logger.debug("monitor recv failed: %s", exc)
                return
            event = monitor_event(frames)
            if event is None:
                continue
            setattr(self.stats, event.kind, getattr(self.stats, event.kind) + 1)
            logger.debug(
                "transport monitor: %s fd/value=%d on %s", event.kind, event.value, event.endpoint
            )
            handler = self._monitor_handler
            if handler is not None:
                try:
                    handler(event)
                except Exception:
                    logger.exception("transport monitor handler failed")
            if self._monitor is None:
                return
