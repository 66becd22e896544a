"""The referee's bot-facing endpoint: a ZMTP server on the asyncio loop, behaving as a ROUTER.

Design: bots connect with ordinary ZeroMQ sockets (a DEALER) to ``tcp://`` or ``ipc://``; the
referee does not use libzmq for this side but speaks ZMTP 3 itself (:mod:`referee.net.zmtp`,
with CURVE from :mod:`referee.net.curve`) over asyncio streams, one
:class:`~referee.net.peer.PeerProtocol` per connection.  Every byte a peer sends is parsed by
our code, which is what makes the limits below hold against a hostile peer; libzmq's ROUTER
held unfinished multipart messages without bound, asserted on a routing id chosen by a peer,
and aborted on descriptor exhaustion (docs/security.md, "Network boundary").

Each connection that completes its handshake gets an id (5 bytes, like a ROUTER's routing ids;
a peer's own ``ZMQ_ROUTING_ID`` is ignored) and from then on every message it sends is
delivered, synchronously, to the handler as :class:`Incoming`.  ``send(peer, payload)`` writes
one message; it returns False (never raises for peer problems) when the peer is gone or its
send buffer is full.  The match layer learns that a connection ended from the lost handler
(``set_lost_handler``), with the reason: closed by the peer, heartbeat silence, a protocol
error, or closed by the referee.  ``admit(peer)`` marks a connection the match layer accepted
(a valid hello); one not admitted within ``admit_timeout_ms`` is closed.  While a message is
delivered, :attr:`RouterTransport.arrived` says when its bytes reached the referee, leaving out
the loop's own busy time before it read them (:mod:`referee.net.turns`): the match layer
charges bots from it.

Limits (all in :class:`TransportConfig`): connections in all and per address, counted apart for
TCP and for ipc (this machine's bots), each kind held below half of what the descriptor limit
leaves (:mod:`referee.net.budget`): no flood of TCP connections can take the descriptors the
referee's own bots and files need; the handshake and admission deadlines; one live
connection per CURVE client key (a second is refused during its handshake: the first keeps its
seat); message size (a multipart message is dropped frame by frame and reported once); frames
parsed per second per connection; new connections per source address, a burst and then a
rate, refused at accept beyond them (those admitted give theirs back:
:mod:`referee.net.ratelimit`), so a storm of handshakes from one address costs the loop little
more than an ``accept`` each; bytes queued per peer, every byte written counted (a peer over
``send_buffer_bytes`` is aborted and ``send`` fails; a PONG is written only to a peer that has
read what was queued before it; a close, ours or the peer's end of its stream, that does not
drain within ``close_drain_ms`` is aborted, so a peer that never reads cannot pin its slot,
descriptor or key: :mod:`referee.net.peer`).

The referee's own stalls (:mod:`referee.net.stalls`: the loop's ``select`` timing, with a tick
every 0.1 s while the transport is open) are left out of a peer's heartbeat silence: a frozen
referee drops nobody. The ``heartbeat_ttl_ms`` its PINGs carry is how long the peer should
wait for it; the match layer sets it long (docs/protocol.md), so that a referee stalled that
long loses no link either.

Known limits: ZMTP 3.0 peers (libzmq 4.0/4.1) get no
PING, so their silence is noticed by the match layer's own heartbeat instead.

Threading: use a ``RouterTransport`` only from the thread running its event loop.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
from collections.abc import Callable

from referee.net.budget import ConnectionCaps, descriptor_budget
from referee.net.ipc import PrivateIpc
from referee.net.listeners import Listener, listen, serve_private
from referee.net.peer import READ_BUFFER, PeerProtocol
from referee.net.ratelimit import ConnectRate
from referee.net.turns import LoopTurns, turns_of
from referee.net.types import (
    CurveServerKeys,
    Incoming,
    TransportClosed,
    TransportConfig,
    TransportError,
    TransportStats,
)
from referee.net.zmtp import NULL, Mechanism

__all__ = [
    "CurveServerKeys",
    "Incoming",
    "RouterTransport",
    "TransportClosed",
    "TransportConfig",
    "TransportError",
    "TransportStats",
]

logger = logging.getLogger(__name__)

LostHandler = Callable[[bytes, str], None]


class RouterTransport:
    """Listens on the configured endpoint (and a private ipc one); see the module docstring.

    Usage::

        async with RouterTransport(TransportConfig()) as t:   # listens
            t.set_handler(on_message)
            t.send(peer, payload)
    """

    def __init__(self, config: TransportConfig, private_ipc: PrivateIpc | None = None) -> None:
        """``private_ipc``: the local bots' endpoint already bound (the transport owns it from
        here on, and serves it if ``config.local_ipc`` asks for one, or alone when it is
        ``config.endpoint``); else ``start`` binds one."""
        self.config = config
        self.stats = TransportStats()
        self.read_buffer = memoryview(bytearray(READ_BUFFER))
        """Where every connection's reads land (see :mod:`.peer`)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._servers: list[Listener] = []
        self._serving: set[asyncio.Task[object]] = set()
        self._endpoint = self._local_endpoint = ""
        self._ipc = private_ipc
        self._started = False
        self._closed = False
        self._handler: Callable[[Incoming], None] | None = None
        self._lost_handler: LostHandler | None = None
        self._conns: set[PeerProtocol] = set()
        self._peers: dict[bytes, PeerProtocol] = {}
        self._live_keys: dict[bytes, bytes] = {}
        self._next_id = secrets.randbits(32)
        self._heartbeat: asyncio.TimerHandle | None = None
        self._caps = ConnectionCaps(config.max_connections, config.max_per_address)
        self._rate = ConnectRate(config.connect_rate, config.connect_burst)
        self._turns: LoopTurns | None = None
        self.arrived = 0.0
        """When the message being delivered reached the referee, at the earliest (loop time):
        the loop's own busy time before it read the bytes is left out (:mod:`.turns`)."""

    # -- life cycle ----------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the transport runs on (set by ``start``)."""
        if self._loop is None:
            raise TransportClosed("not started")
        return self._loop

    async def start(self) -> str:
        """Listen on the endpoint(s); return the actual endpoint (with the real port)."""
        if self._closed:
            raise TransportClosed("transport is closed")
        if self._started:
            raise RuntimeError("transport already started")
        self._loop = asyncio.get_running_loop()
        self._turns = turns_of(self._loop)
        self._turns.watch(self._loop)
        self._caps.lower_to(descriptor_budget())
        cfg = self.config
        try:
            if self._ipc is not None and cfg.endpoint == self._ipc.endpoint:  # it alone
                server = serve_private(self._loop, self._ipc, self._accept_ipc)
                self._endpoint = cfg.endpoint
            else:
                ipc = cfg.endpoint.startswith("ipc://")
                server, self._endpoint = listen(
                    self._loop, cfg.endpoint, self._accept_ipc if ipc else self._accept_tcp
                )
            self._servers.append(server)
        except TransportError:
            await self.close()
            raise
        self._local_endpoint = self._endpoint
        if cfg.local_ipc and cfg.endpoint.startswith("tcp://"):
            await self._listen_private_ipc()
        self._started = True
        if cfg.heartbeat_ivl_ms:
            self._heartbeat = self._loop.call_later(cfg.heartbeat_ivl_ms / 1000, self._beat)
        logger.debug("transport listening on %s", self._endpoint)
        return self._endpoint

    async def _listen_private_ipc(self) -> None:
        """Serve the ``ipc://`` endpoint for local bots (:class:`PrivateIpc`: a fresh
        directory, mode 0700), the one given to the constructor or a new one."""
        if self._ipc is None:
            self._ipc = PrivateIpc.open()
            if self._ipc is None:  # it said why: local bots use TCP
                return
        self._servers.append(serve_private(self.loop, self._ipc, self._accept_ipc))
        self._local_endpoint = self._ipc.endpoint

    def _accept_ipc(self, sock: socket.socket, address: str) -> None:
        if self._within_rate(sock, address):
            self._serve(sock, PeerProtocol(self, NULL, address))

    def _accept_tcp(self, sock: socket.socket, address: str) -> None:
        """A TCP connection: CURVE when the transport has keys (``TransportConfig.curve``)."""
        if not self._within_rate(sock, address):
            return
        mechanism: Mechanism = NULL
        curve = self.config.curve
        if curve is not None:
            from referee.net.curve import CurveMechanism  # libsodium: only CURVE endpoints

            mechanism = CurveMechanism(curve.public, curve.secret, self._authorize)
        self._serve(sock, PeerProtocol(self, mechanism, address))

    def _within_rate(self, sock: socket.socket, address: str) -> bool:
        """Close ``sock`` at once, unread, if ``address`` has no new connection left."""
        if not self._closed and self._rate.take(address, self.loop.time()):
            return True
        sock.close()
        if self._closed:
            return False
        stats = self.stats
        stats.rate_limited += 1
        if stats.rate_limited & (stats.rate_limited - 1) == 0:  # the 1st, 2nd, 4th...
            logger.warning(
                "refused a connection from %s: more than %d new connections at once and "
                "%g/s after (%d refused so far)",
                address,
                self._rate.burst,
                self._rate.rate,
                stats.rate_limited,
            )
        return False

    def _serve(self, sock: socket.socket, conn: PeerProtocol) -> None:
        """Make ``sock``'s asyncio transport, with ``conn`` as its protocol."""
        task = self.loop.create_task(self.loop.connect_accepted_socket(lambda: conn, sock))
        self._serving.add(task)
        task.add_done_callback(self._served)

    def _served(self, task: asyncio.Task[object]) -> None:
        self._serving.discard(task)
        if not task.cancelled() and task.exception() is not None:  # gone before it was served
            logger.debug("an accepted connection was lost: %s", task.exception())

    @property
    def endpoint(self) -> str:
        """The bound endpoint with the real port (empty before ``start``)."""
        return self._endpoint

    @property
    def local_endpoint(self) -> str:
        """The endpoint for bots on this machine: the private ``ipc://`` one when
        ``TransportConfig.local_ipc`` made it, else :attr:`endpoint`."""
        return self._local_endpoint

    @property
    def closed(self) -> bool:
        """True once ``close`` has been called (or ``start`` failed)."""
        return self._closed

    @property
    def connections(self) -> int:
        """Open connections (handshaking or ready)."""
        return len(self._conns)

    async def close(self) -> None:
        """Stop listening and drop every connection at once (nothing more is sent).

        Idempotent.  Later ``send`` calls raise ``TransportClosed``.
        """
        if self._closed:
            return
        self._closed = True
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        if self._turns is not None:
            self._turns.unwatch()
        for server in self._servers:
            server.close()
        for task in self._serving:
            task.cancel()
        for conn in list(self._conns):
            conn.lost_reason = conn.lost_reason or "the referee closed"
            if conn.transport is not None:
                conn.transport.abort()
        if self._serving:
            await asyncio.gather(*self._serving, return_exceptions=True)
        self._servers.clear()
        if self._ipc is not None:
            self._ipc.close()
            self._ipc = None
        logger.debug("transport %s closed", self._endpoint or "(unbound)")

    async def __aenter__(self) -> RouterTransport:
        """Start the transport and return it."""
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.close()

    # -- used by the match layer ---------------------------------------------------------

    def send(self, peer: bytes, payload: bytes) -> bool:
        """Queue ``payload`` for ``peer`` without blocking; False (logged at DEBUG) if the peer
        is unknown, gone or not reading.  Raises ``TransportClosed`` once closed."""
        if self._closed or not self._started:
            raise TransportClosed("transport is closed" if self._closed else "not started")
        conn = self._peers.get(peer)
        reason = "peer unreachable" if conn is None else conn.send(payload)
        if not reason:
            self.stats.sent += 1
            return True
        self.stats.send_failures += 1
        logger.debug("send to peer %s failed: %s", peer.hex(), reason)
        return False

    def set_handler(self, handler: Callable[[Incoming], None] | None) -> None:
        """Call ``handler(incoming)`` synchronously for every message (None drops them).

        Exceptions from the handler are logged and counted, never propagated.
        """
        self._handler = handler

    def set_lost_handler(self, handler: LostHandler | None) -> None:
        """Call ``handler(peer, reason)`` when a connection that had an id ends."""
        self._lost_handler = handler

    def admit(self, peer: bytes) -> None:
        """The match layer accepted ``peer`` (a valid hello): lift its admission deadline."""
        conn = self._peers.get(peer)
        if conn is not None and not conn.admitted:
            self._rate.refund(conn.address)  # a bot: its connection does not count
            conn.admit()

    def disconnect(self, peer: bytes, reason: str = "closed by the referee") -> None:
        """Close ``peer``'s connection after what is queued for it is written."""
        conn = self._peers.get(peer)
        if conn is not None:
            conn.close(reason, False)

    def peer_key(self, peer: bytes) -> bytes | None:
        """The CURVE public key ``peer`` authenticated with (None: NULL mechanism or gone)."""
        conn = self._peers.get(peer)
        return None if conn is None else conn.conn.mechanism.client_key

    def peer_address(self, peer: bytes) -> str:
        """Where ``peer`` connects from (an IP address, ``pid:N`` on ipc), or empty."""
        conn = self._peers.get(peer)
        return "" if conn is None else conn.address

    def drain_now(self) -> None:
        """Deliver every message the kernel already holds, synchronously.

        The seat layer calls it before declaring a timeout, so that a reply which arrived in
        time is never lost to the referee's own scheduling delay.
        """
        turns = self._turns
        if turns is not None:
            turns.draining(True)
        try:
            for conn in list(self._peers.values()):
                conn.drain_now()
        finally:
            if turns is not None:
                turns.draining(False)

    def arrival(self) -> float:
        """The receive stamp for bytes a connection reads now (see :attr:`arrived`)."""
        turns = self._turns
        return self.loop.time() if turns is None else turns.arrival()

    # -- called by the connections -------------------------------------------------------

    def deliver(self, inc: Incoming) -> None:
        """Hand one message to the handler (from a connection's parser)."""
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
            logger.exception("transport message handler failed for peer %s", inc.peer.hex())

    def on_connect(self, conn: PeerProtocol) -> str:
        """Count a new connection against the caps; a non-empty reason refuses it."""
        if self._closed:
            return "closing"
        reason = self._caps.take(conn.address)
        if not reason:
            self._conns.add(conn)
            self.stats.accepted += 1
            return ""
        self.stats.refused += 1
        logger.debug("refused a connection from %s: %s", conn.address, reason)
        return reason

    def on_ready(self, conn: PeerProtocol) -> None:
        """A handshake completed: give the connection its id."""
        self._next_id = (self._next_id + 1) & 0xFFFFFFFF
        conn.peer = b"\x00" + self._next_id.to_bytes(4, "big")
        self._peers[conn.peer] = conn
        key = conn.conn.mechanism.client_key
        if key is not None:
            self._live_keys[key] = conn.peer

    def old_zmtp(self) -> tuple[int, str]:
        """Connections refused for an old ZMTP greeting, and the latest such version."""
        return self.stats.old_zmtp, self.stats.old_zmtp_version

    def without_curve(self) -> int:
        """Connections to this CURVE endpoint that never completed the handshake: those gone
        (``stats.without_curve``) and those still in the middle of their greeting (a libzmq
        client without CURVE may wait there for the handshake deadline)."""
        if self.config.curve is None:
            return 0
        stuck = sum(1 for conn in self._conns if conn.conn.mid_greeting)
        return self.stats.without_curve + stuck

    def on_protocol_error(self, conn: PeerProtocol, reason: str) -> None:
        """Count a protocol violation (logged at DEBUG: a hostile peer controls the rate)."""
        if not conn.conn.ready:
            self.stats.handshake_failed += 1
        logger.debug("peer %s (%s): %s", conn.peer.hex() or "-", conn.address, reason)

    def on_lost(self, conn: PeerProtocol, reason: str) -> None:
        """A connection ended: forget it and tell the match layer if it had an id."""
        if conn not in self._conns:
            return
        self._conns.discard(conn)
        self._caps.release(conn.address)
        self.stats.disconnected += 1
        if self.config.curve is not None and not conn.conn.ready:
            self.stats.without_curve += 1  # as a libzmq client without CURVE does
        key = conn.conn.mechanism.client_key
        if key is not None and self._live_keys.get(key) == conn.peer:
            del self._live_keys[key]
        if conn.peer and self._peers.pop(conn.peer, None) is not None:
            handler = self._lost_handler
            if handler is not None and not self._closed:
                try:
                    handler(conn.peer, reason)
                except Exception:
                    self.stats.handler_errors += 1
                    logger.exception("transport lost handler failed for %s", conn.peer.hex())

    def _authorize(self, key: bytes) -> str | None:
        curve = self.config.curve
        if curve is None:  # pragma: no cover - only CURVE connections ask
            return "no CURVE keys"
        refusal = curve.authorize(key)
        if refusal is None and key in self._live_keys:
            refusal = "this key already has a live connection"
        return refusal

    def _beat(self) -> None:
        """Ping every ready connection; drop those silent for the heartbeat timeout."""
        cfg = self.config
        loop = self.loop
        now = loop.time()
        silence = cfg.heartbeat_timeout_ms / 1000
        ttl = min(0xFFFF, cfg.heartbeat_ttl_ms // 100)
        stalls = None if self._turns is None else self._turns.stalls
        for conn in list(self._peers.values()):
            # ZMTP 3.0 peers get no PING, so their silence proves nothing here.
            heard = conn.last_heard
            if silence and conn.conn.peer_minor >= 1 and now - heard > silence:
                # The referee's own stalls are not the peer's silence (:mod:`.stalls`).
                excused = 0.0 if stalls is None else stalls.stalled(heard, now)
                if now - heard - excused > silence:
                    conn.close(f"silent for {silence:g} s (heartbeat timeout)", True)
                    continue
            conn.ping(ttl)
        self._heartbeat = loop.call_later(cfg.heartbeat_ivl_ms / 1000, self._beat)
