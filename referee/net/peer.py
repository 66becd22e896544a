"""One bot connection on the loop: an asyncio protocol around a ZMTP :class:`ServerConnection`.

Reading is bounded three ways, so no peer can make the referee hold more than about one read
chunk plus one frame for it, nor take more than its share of the loop:

* bytes are parsed as they arrive (:mod:`referee.net.zmtp` never keeps more than one frame);
* at most :data:`BATCH` frames are parsed per turn of the loop; past that, reading pauses and
  parsing resumes on the next turn (other connections' replies are not kept waiting);
* a token bucket admits ``frames_per_s`` frames per second (a burst of as many); a connection
  that exceeds it has its reading paused until it is back in credit, so the kernel's socket
  buffer fills and TCP pushes back on the sender.

Reads go into one buffer that the transport keeps for all its connections
(:class:`asyncio.BufferedProtocol`, :data:`READ_BUFFER` bytes), from which each read is copied
at once into its connection's frame buffer: a plain protocol's transport allocates 256 KiB for
every read, which the C library maps and unmaps (``mmap``, ``mremap``, ``munmap`` and a fresh
zeroed page at every decision), and a buffer per connection would hold 16 KiB for each of
thousands of connections.

Writing is bounded too, for every byte written (messages, handshake replies, PINGs and
PONGs), so that a peer that never reads cannot make the referee hold its bytes:

* writes go straight to the socket (asyncio writes at once when nothing is queued); a peer
  with more than ``send_buffer_bytes`` queued is aborted (not closed: a graceful close waits
  for a drain that never comes), and every resource it held is released on the next turn of
  the loop (its descriptor, its connection-cap slot, its CURVE key's live connection);
* one PONG is owed at most (:attr:`ServerConnection.pong`, as in libzmq), and it is written
  only when nothing is queued: a peer that PINGs and does not read gets no PONGs (it would
  not read them), and our own PINGs are skipped likewise;
* a graceful close (a reject, ``disconnect``, a deadline, or the peer's own end of its
  stream) that has not drained within ``close_drain_ms`` is aborted: a peer that half-closes
  (``shutdown(SHUT_WR)``) with bytes still queued towards it, and then never reads, would
  otherwise hold its connection for as long as it keeps its socket, as asyncio closes such
  a transport only once it has drained.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
from typing import Protocol

from referee.net.types import Incoming, TransportConfig, TransportStats
from referee.net.zmtp import (
    MALFORMED,
    MESSAGE,
    READY,
    Mechanism,
    ServerConnection,
    ZmtpError,
    ZmtpVersionError,
)

__all__ = ["BATCH", "Owner", "PeerProtocol"]

logger = logging.getLogger(__name__)

BATCH = 256  # frames parsed per connection per turn of the loop
_READ_CHUNK = 262144
_RESET = struct.pack("ii", 1, 0)
"""``SO_LINGER`` on with no time: closing the socket resets the connection."""
READ_BUFFER = 16384
"""Bytes one read of the loop takes at most (a larger frame arrives over several reads)."""


class Owner(Protocol):
    """What a connection needs of its transport (``RouterTransport``)."""

    config: TransportConfig
    stats: TransportStats
    read_buffer: memoryview
    """Where every connection's reads land (:data:`READ_BUFFER` bytes, one per transport):
    each read is copied into its connection's frame buffer at once."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop."""
        ...

    def on_connect(self, conn: PeerProtocol) -> str:
        """Count a new connection; a non-empty reason refuses it."""
        ...

    def on_ready(self, conn: PeerProtocol) -> None:
        """The handshake completed: give the connection its id."""
        ...

    def on_protocol_error(self, conn: PeerProtocol, reason: str) -> None:
        """Count a protocol violation."""
        ...

    def on_lost(self, conn: PeerProtocol, reason: str) -> None:
        """The connection ended."""
        ...

    def deliver(self, inc: Incoming) -> None:
        """Hand a message to the match layer."""
        ...

    arrived: float
    """The receive stamp of the messages being delivered (set before each batch)."""

    def arrival(self) -> float:
        """The receive stamp for bytes read now (:meth:`referee.net.turns.LoopTurns.arrival`)."""
        ...


class PeerProtocol(asyncio.BufferedProtocol):
    """The protocol instance of one accepted connection (created by the transport)."""

    def __init__(self, owner: Owner, mechanism: Mechanism, address: str) -> None:
        self.owner = owner
        self.address = address
        """Where the connection comes from: ``ip`` for TCP, ``pid:N`` (or ``ipc``) for ipc."""
        self.conn = ServerConnection(mechanism, max_message_bytes=owner.config.max_message_bytes)
        self.peer = b""
        """The id the transport gave this connection once its handshake completed."""
        self.transport: asyncio.Transport | None = None
        self.last_heard = 0.0
        self.arrived = 0.0
        """The receive stamp of the bytes read last (:meth:`Owner.arrival`)."""
        self.admitted = False
        self.lost_reason = ""
        self._paused = False
        self._closing = False
        """True once the close has begun (:meth:`close`, which sets its drain deadline) or
        the connection is gone: a later close changes nothing."""
        self._aborted = False
        self._parse_pending = False
        self._credit = float(owner.config.frames_per_s)
        self._credit_time = 0.0
        self._timer: asyncio.TimerHandle | None = None
        """The handshake or admission deadline, then the close's drain deadline."""

    # -- asyncio callbacks ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Admit (or refuse) the connection, send our greeting, start the handshake clock."""
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        owner = self.owner
        refusal = owner.on_connect(self)
        if refusal:
            transport.abort()
            return
        loop = owner.loop
        self.last_heard = self._credit_time = loop.time()
        self._write(self.conn.greeting())
        self._timer = loop.call_later(
            owner.config.handshake_timeout_ms / 1000, self.close, "no handshake in time", True
        )

    def get_buffer(self, sizehint: int) -> memoryview:
        """Where the loop reads the next bytes into: the transport's one read buffer."""
        return self.owner.read_buffer

    def buffer_updated(self, nbytes: int) -> None:
        """The loop read ``nbytes`` into the buffer: :meth:`data_received` them."""
        self.data_received(self.owner.read_buffer[:nbytes])  # copied out by ``feed``

    def data_received(self, data: bytes | memoryview) -> None:
        """Buffer the bytes and parse what credit allows."""
        self.last_heard = self.owner.loop.time()
        self.arrived = self.owner.arrival()
        self.conn.feed(data)
        if not self._paused:
            self._parse()

    def eof_received(self) -> bool:
        """The peer closed its side: we close ours, within the drain deadline (asyncio alone
        would wait for a drain that a peer which never reads never allows)."""
        self.close("connection closed by the peer", False)
        return True  # closed here: asyncio need not close the transport itself

    def connection_lost(self, exc: Exception | None) -> None:
        """Tell the transport (and through it the match layer) the connection is gone."""
        self._closing = True  # nothing left to close
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.lost_reason:
            reason = self.lost_reason
        elif isinstance(exc, ConnectionResetError | BrokenPipeError):  # written to after it left
            reason = "connection reset by the peer"
        else:
            reason = f"connection error: {exc}" if exc else "connection closed by the peer"
        self.owner.on_lost(self, reason)

    # -- parsing -----------------------------------------------------------------------

    def _parse(self) -> None:
        """Parse up to one batch within credit; pause reading when more must wait."""
        self._parse_pending = False
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        now = self.owner.loop.time()
        rate = self.owner.config.frames_per_s
        self._credit = min(float(rate), self._credit + (now - self._credit_time) * rate)
        self._credit_time = now
        budget = min(BATCH, int(self._credit))
        if budget <= 0:
            self._pause(delay=(1 - self._credit) / rate)
            return
        self.owner.arrived = self.arrived
        try:
            used = self.conn.events(budget, self._on_event)
        except ZmtpError as err:
            self._flush()
            if err.reply:
                self._write(err.reply)
            self.owner.on_protocol_error(self, str(err))
            if isinstance(err, ZmtpVersionError):
                self.owner.stats.old_zmtp += 1
                self.owner.stats.old_zmtp_version = err.version
            self.close(f"protocol error: {err}", False)
            return
        self._credit -= used
        if self.conn.outgoing or self.conn.pong is not None:  # a handshake reply, a PONG
            self._flush()
        if used >= budget and self.conn.buffered:
            self._pause(delay=0.0 if used == BATCH and self._credit >= 1 else 1 / rate)
        elif self._paused:
            self._paused = False
            if self.transport is not None and not self.transport.is_closing():
                self.transport.resume_reading()

    def _pause(self, delay: float) -> None:
        """Stop reading; parse again after ``delay`` (next turn of the loop when 0)."""
        if not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        if not self._parse_pending:
            self._parse_pending = True
            loop = self.owner.loop
            if delay <= 0:
                loop.call_soon(self._parse)
            else:
                loop.call_later(delay, self._parse)

    def _on_event(self, kind: int, data: bytes) -> None:
        if self.lost_reason:
            return  # closing: what is still buffered is not delivered
        if kind == MESSAGE:
            self.owner.deliver(Incoming(self.peer, data))
        elif kind == MALFORMED:
            self.owner.deliver(Incoming(self.peer, b"", True, data.decode()))
            if data != b"multipart":
                return  # too_large: the ZmtpError that follows closes the connection
            self.close("sent a multipart message", True)
        elif kind == READY:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.owner.loop.call_later(
                self.owner.config.admit_timeout_ms / 1000, self._admit_expired
            )
            self.owner.on_ready(self)

    def _flush(self) -> None:
        """Write the handshake replies and the PONG owed, if any (the PONG only when nothing
        is queued: a peer not reading would never read it)."""
        conn = self.conn
        out = conn.outgoing
        if out:
            self._write(bytes(out))
            out.clear()
        if conn.pong is not None:
            transport = self.transport
            if transport is not None and transport.get_write_buffer_size() == 0:
                self._write(conn.take_pong())
            else:
                conn.pong = None
                self.owner.stats.pongs_dropped += 1

    def _write(self, data: bytes) -> str:
        """Write ``data`` (every byte to the peer goes through here); an empty string, or why
        not.  A peer left with more than ``send_buffer_bytes`` queued is aborted."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return "peer unreachable"
        transport.write(data)
        queued = transport.get_write_buffer_size()
        if queued > self.owner.config.send_buffer_bytes:
            self.abort(f"not reading ({queued} bytes queued)")
            return "send queue full"
        return ""

    def _admit_expired(self) -> None:
        self._timer = None
        if not self.admitted:
            self.close("no valid hello in time", True)

    # -- used by the transport ---------------------------------------------------------

    def admit(self) -> None:
        """The match layer accepted this connection (a valid hello): no admission deadline."""
        self.admitted = True
        if self._timer is not None and not self._closing:  # a drain deadline stays
            self._timer.cancel()
            self._timer = None

    def send(self, payload: bytes) -> str:
        """Queue one message; an empty string, or why it could not be sent."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return "peer unreachable"
        # A PONG owed from a parse (the handler may send from inside one) goes first: under
        # CURVE each box takes the next nonce, and the peer drops any out of order.
        conn = self.conn
        if conn.outgoing or conn.pong is not None:
            self._flush()
        return self._write(conn.wrap(payload))

    def ping(self, ttl_deciseconds: int) -> None:
        """A ZMTP heartbeat (only to peers that speak ZMTP 3.1)."""
        transport = self.transport
        speaks_ping = self.conn.ready and self.conn.peer_minor >= 1
        if not speaks_ping or transport is None or transport.get_write_buffer_size():
            return  # a peer that has not read what is queued would not read a PING either
        self._flush()  # boxes leave in nonce order (see ``send``)
        self._write(self.conn.ping(ttl_deciseconds))

    def drain_now(self) -> None:
        """Read what the kernel already holds for us and parse it, synchronously."""
        transport = self.transport
        if transport is None or transport.is_closing() or self._paused:
            return
        sock = transport.get_extra_info("socket")
        if sock is None:  # pragma: no cover - every transport here has a socket
            return
        try:
            data = os.read(sock.fileno(), _READ_CHUNK)  # non-blocking: asyncio set O_NONBLOCK
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # the loop's own read reports the error
        if data:
            self.data_received(data)

    def close(self, reason: str, timed_out: bool) -> None:
        """Close the connection, naming why: what is queued is still written, within
        ``close_drain_ms`` (then the connection is aborted)."""
        if not self.lost_reason:
            self.lost_reason = reason
            if timed_out:
                self.owner.stats.timed_out += 1
        transport = self.transport
        if transport is None or self._closing or self._aborted:
            return
        self._closing = True
        transport.close()  # a no-op if asyncio is closing it already: the deadline still holds
        if self._timer is not None:
            self._timer.cancel()
        drain = self.owner.config.close_drain_ms / 1000
        self._timer = self.owner.loop.call_later(drain, self.abort, "close did not drain")

    def abort(self, reason: str) -> None:
        """Drop the connection at once, and what is queued for it (a peer that does not read),
        in the kernel too: a TCP connection is reset (``SO_LINGER`` 0), not left to the kernel
        to deliver what it holds to a peer whose window stays shut.  The transport forgets it,
        and frees its slot and key, on the next turn of the loop."""
        self.lost_reason = self.lost_reason or reason
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        transport = self.transport
        if transport is not None and not self._aborted:
            self._aborted = True
            self.owner.stats.aborted += 1
            logger.debug("aborting peer %s (%s): %s", self.peer.hex() or "-", self.address, reason)
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family != socket.AF_UNIX:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
            transport.abort()
