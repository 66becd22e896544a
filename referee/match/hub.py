"""The hub: one ROUTER transport shared by any number of seats, routing frames to them.

Tokens are issued per seat. A frame from an unknown peer must be a ``hello`` carrying a valid,
unused token and a supported protocol version; then that routing id is bound to the seat
(:meth:`~referee.match.seat.SeatLink.bind`, once, and only then). Everything else from unknown
peers is answered with ``reject`` (and the connection closed) or ``error`` (a few times per
connection, :mod:`referee.match.rejects`) and otherwise ignored: nobody can play someone else's
seat. Refusals are counted and logged at a bounded rate. A token given with a public key (a
remote bot's, or a local bot's connecting over TCP) is accepted only from a connection that
authenticated with that CURVE key, and a token given without one only from a connection
without a key (``ipc://``, or ``--insecure``): a stolen token is useless without its key.
Frames from bound peers go straight to their :class:`~referee.match.seat.SeatLink`, stamped
with their arrival time by the hub's timer.

One live connection per token: a hello with a token that a seat in play or a lobby connection
already holds is refused (``token_in_use``); the first connection keeps its place, so a second
one can never take over a seat. After :meth:`Hub.shutdown` every hello is refused with
``shutdown``.
"""

from __future__ import annotations

import asyncio
import logging

from protocol.codec import decode_bot_message, encode
from protocol.errors import ErrorCode, ProtocolError
from protocol.schema import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Bye,
    Hello,
    Message,
    Ping,
    Pong,
    Reject,
    Welcome,
)
from referee.match.clock import TimeControl, Timer
from referee.match.endpoint import Transport
from referee.match.outbox import error_bytes
from referee.match.rejects import REJECT_LOG_INTERVAL, RejectLog, ReplyQuota
from referee.match.seat import SeatLink
from referee.match.tokens import new_token
from referee.net.keys import KeyRing
from referee.net.transport import Incoming
from referee.net.zmtp import SUPPORTED_VERSIONS as ZMTP_VERSIONS

__all__ = ["REFEREE_NAME", "Hub", "Transport"]

LOGGER = logging.getLogger(__name__)
REFEREE_NAME = "gin-referee/0.1"


class Hub:
    """Routes one transport's traffic; issue a seat with :meth:`open_seat`."""

    def __init__(
        self,
        transport: Transport,
        *,
        multi_match: bool = False,
        timer: Timer | None = None,
        reject_log_interval: float = REJECT_LOG_INTERVAL,
        keys: KeyRing | None = None,
    ) -> None:
        self.transport = transport
        self.keys = keys
        """The transport's CURVE authorizer, kept in step with the tokens' keys (if any)."""
        self.timer: Timer = asyncio.get_running_loop() if timer is None else timer
        """Arrival stamps and the seats' deadlines (the running loop unless injected)."""
        self.multi_match = multi_match
        """Grant ``multi_match`` to bots that ask (the caller then keeps them with
        :meth:`retain` between matches)."""
        self._by_token: dict[str, SeatLink] = {}
        self._by_peer: dict[bytes, SeatLink] = {}
        self._used: set[str] = set()
        self._registered: dict[str, str] = {}
        self._token_keys: dict[str, bytes] = {}
        self._lobby: dict[str, list[tuple[bytes, Hello]]] = {}
        self._parked: dict[bytes, str] = {}
        self._seated: set[str] = set()
        self._bound: dict[str, SeatLink] = {}
        self._change = asyncio.Event()
        self._closing = False
        self.rejects = RejectLog(LOGGER, self.timer, reject_log_interval)
        """Refused hellos and strangers' messages, counted by kind."""
        self._quota = ReplyQuota()
        self.rejections: list[str] = []
        """Why each refused hello was refused (``code: message``), the first 100."""
        transport.set_handler(self._on_incoming)
        transport.set_lost_handler(self._on_lost)

    @property
    def rejected(self) -> int:
        """Refusals of every kind so far."""
        return self.rejects.total

    @property
    def lobby_size(self) -> int:
        """Connections waiting in the lobby (at most one per token)."""
        return len(self._parked)

    @property
    def endpoint(self) -> str:
        """The endpoint remote bots connect to."""
        return self.transport.endpoint

    @property
    def local_endpoint(self) -> str:
        """The endpoint for the bots the referee starts itself (ipc:// where bound)."""
        return self.transport.local_endpoint

    def open_seat(
        self,
        seat: int,
        control: TimeControl,
        token: str | None = None,
        *,
        name: str | None = None,
        seed: str | None = None,
        reusable: bool = False,
        link_type: type[SeatLink] = SeatLink,
        public_key: bytes | None = None,
    ) -> SeatLink:
        """A new seat waiting for a bot to say hello with its (fresh or given) token.

        ``name`` is the seat's name until the hello names the bot; ``seed`` is offered in
        ``match_start``. A ``reusable`` token (a registered remote bot's) is accepted again
        for a later seat once this seat is closed; it still binds to one connection at a time.
        ``link_type`` is the seat's class (a :class:`SeatLink` subclass that watches the bot,
        as ``gin-referee check`` does).
        ``public_key``: the token is accepted only from a connection authenticated with it
        (a registered token keeps the key it was registered with).
        """
        token = token or new_token()
        if token in self._by_token or (token in self._used and not reusable):
            raise ValueError("token already issued")
        self._used.discard(token)
        if public_key is not None and token not in self._registered:
            self._add_key(token, public_key, name or f"seat {seat}")
        link = link_type(
            seat=seat,
            token=token,
            send_bytes=self.transport.send,
            control=control,
            name=name,
            seed=seed,
            timer=self.timer,
            poll=self.transport.drain_now,
        )
        link.no_hello_hint = self._no_hello_hint
        waiting = self._lobby.get(token)
        if waiting:
            peer, hello = waiting.pop(0)
            del self._parked[peer]
            self._bind(link, peer, hello, self.timer.time(), welcome=False)
        else:
            self._by_token[token] = link
        return link

    def _no_hello_hint(self) -> str:
        """Why a bot may have said no hello, where the transport saw a likely reason."""
        old, version = self.transport.old_zmtp()
        if old:
            return (
                f" ({old} connection(s) greeted with {version}: the"
                f" referee speaks {ZMTP_VERSIONS} only (libzmq 4.x, pyzmq, zeromq.js,"
                " JeroMQ 0.4 and later; Debian's libjeromq-java 0.3.6 speaks ZMTP 2.0);"
                ' docs/protocol.md, "The socket")'
            )
        refused = self.transport.without_curve()
        if not refused:
            return ""
        return (
            f" ({refused} connection(s) did not complete the CURVE handshake: over tcp:// a bot"
            " must use CURVE with"
            " the referee's key from GIN_REFEREE_SERVER_KEY; docs/protocol.md, \"Connecting"
            ' over the network (CURVE)")'
        )

    # ------------------------------------------------------------------ the lobby

    def register_remote(self, token: str, name: str, public_key: bytes | None = None) -> None:
        """Accept ``token`` at any time: a bot saying hello with it while no seat is open
        waits in the lobby (welcomed, pinged) until a game seats it. With ``public_key``, only
        from a connection authenticated with that CURVE key."""
        self._registered[token] = name
        if public_key is not None:
            self._add_key(token, public_key, name)

    def _add_key(self, token: str, key: bytes, name: str) -> None:
        self._token_keys[token] = key
        if self.keys is not None:
            self.keys.add(key, name)

    def _drop_key(self, token: str) -> None:
        key = self._token_keys.pop(token, None)
        if key is not None and self.keys is not None:
            self.keys.discard(key)

    def _key_matches(self, peer: bytes, token: str) -> bool:
        """Whether ``peer`` authenticated with the key ``token`` was given (or, for a token
        without a key, with none)."""
        return self.transport.peer_key(peer) == self._token_keys.get(token)

    def is_available(self, token: str) -> bool:
        """Whether a registered bot waits in the lobby and is not seated in another game."""
        return bool(self._lobby.get(token)) and token not in self._seated

    async def wait_available(self, token: str) -> None:
        """Wait until :meth:`is_available` holds for ``token``."""
        while not self.is_available(token):
            await self._change.wait()

    async def changed(self) -> None:
        """Wait for the lobby's next change (a bot arrives, leaves or is seated)."""
        await self._change.wait()

    def _changed(self) -> None:
        self._change.set()
        self._change = asyncio.Event()

    def _park(self, peer: bytes, hello: Hello, *, welcome: bool = True) -> None:
        """Put a connection in the lobby under its hello's token (welcomed if it is new)."""
        self.transport.admit(peer)
        self._parked[peer] = hello.token
        self._lobby.setdefault(hello.token, []).append((peer, hello))
        if welcome:
            granted = Welcome(
                PROTOCOL_VERSION,
                REFEREE_NAME,
                1000,
                inline_events=hello.inline_events,
                multi_match=hello.multi_match and self.multi_match,
                declare_melds=hello.declare_melds,
            )
            self._send(peer, granted)
        LOGGER.info("bot %r waits in the lobby (peer %s)", hello.name, peer.hex())
        self._changed()

    def _unpark(self, peer: bytes) -> None:
        token = self._parked.pop(peer, None)
        if token is not None:
            self._lobby[token] = [(p, n) for p, n in self._lobby.get(token, []) if p != peer]
            self._changed()

    async def lobby_heartbeat(self, interval: float = 1.0) -> None:
        """Ping every bot waiting in the lobby; one that cannot be reached leaves it."""
        nonce = 0
        while True:
            await asyncio.sleep(interval)
            self.rejects.flush()
            nonce += 1
            for peer in list(self._parked):
                if not self.transport.send(peer, encode(Ping(nonce))):
                    self._unpark(peer)

    def retain(self, link: SeatLink) -> bool:
        """After a match: keep the seat's connection in the lobby under its token, pinged,
        for :meth:`open_seat` (``token, reusable=True``) to seat again without a new hello.

        Only a connection granted ``multi_match`` with no fault recorded is kept; otherwise
        nothing happens and False is returned (the caller closes the seat and its process).
        The seat itself is closed either way when True.
        """
        peer, hello = link.peer, link.hello
        if not link.multi_match or peer is None or hello is None or link.fault is not None:
            return False
        self._registered.setdefault(link.token, link.name)
        self.close_seat(link, kept=True)
        self._park(peer, hello, welcome=False)
        return True

    def dismiss(self, token: str) -> None:
        """Stop keeping a retained (or registered) token: its connections in the lobby get
        ``bye`` and leave it, and the token is no longer accepted."""
        self._send_away(token, "no more matches")
        self._registered.pop(token, None)
        self._drop_key(token)
        self._used.add(token)

    def farewell(self, reason: str) -> int:
        """Say ``bye`` to every connection waiting in the lobby and empty it; returns how many
        were told."""
        told = len(self._parked)
        for token in list(self._lobby):
            self._send_away(token, reason)
        self.rejects.close()
        return told

    def shutdown(self, message: str = "the referee is shutting down") -> int:
        """The referee is going away: every connection in the lobby gets an ``error`` with code
        ``shutdown`` and ``bye`` and leaves it, and from now on every hello is refused with
        ``shutdown``. Returns how many lobby connections were told. (Seated bots are told by
        their match, which the same stop aborts.)"""
        if self._closing:
            return 0
        self._closing = True
        told = len(self._parked)
        for token in list(self._lobby):
            self._send_away(token, "shutting down", error=message)
        self.rejects.close()
        LOGGER.info("shutdown: %d bot(s) in the lobby told", told)
        return told

    async def shutdown_when(self, stop: asyncio.Event) -> None:
        """:meth:`shutdown` as soon as ``stop`` is set (run it as a task beside the games)."""
        await stop.wait()
        self.shutdown()

    def _send_away(self, token: str, reason: str, *, error: str | None = None) -> None:
        """``bye`` (after an ``error`` ``shutdown`` when ``error`` is given) to the lobby's
        connections with ``token``; they leave the lobby."""
        for peer, _ in self._lobby.pop(token, []):
            self._parked.pop(peer, None)
            if error is not None:
                self.transport.send(peer, error_bytes(ErrorCode.SHUTDOWN, error))
            self._send(peer, Bye(reason))
        self._changed()

    def close_seat(self, link: SeatLink, *, kept: bool = False) -> None:
        """Forget a seat: its token and routing id stop being accepted. A connection granted
        ``multi_match`` waits for another match after ``match_end``: unless it is ``kept``
        (:meth:`retain`), it is told ``bye``, so that it leaves rather than wait in vain."""
        link.close()
        if not kept and link.multi_match and link.peer is not None:
            self._send(link.peer, Bye("connection not kept"))
        self._by_token.pop(link.token, None)
        if link.token not in self._registered:
            self._drop_key(link.token)
        if link.token in self._seated:
            self._seated.discard(link.token)
            self._changed()
        if link.peer is not None:
            self._by_peer.pop(link.peer, None)
        if self._bound.get(link.token) is link:
            del self._bound[link.token]

    def _send(self, peer: bytes, msg: Message) -> None:
        self.transport.send(peer, encode(msg))

    def _on_incoming(self, inc: Incoming) -> None:
        arrived = self.timer.time()
        stamp: float | None = getattr(self.transport, "arrived", None)
        if stamp is not None and stamp < arrived:
            arrived = stamp  # when the bytes reached the referee, not when the loop got to them
        link = self._by_peer.get(inc.peer)
        if link is not None:
            malformed = (inc.reason or "multipart") if inc.malformed else ""
            try:
                link.on_payload(inc.payload, malformed, arrived)
            except Exception as err:  # a referee bug: that seat's match ends, others go on
                link.fail(err)
            return
        if inc.peer in self._parked:
            self._on_parked(inc)
            return
        self._on_stranger(inc, arrived)

    def _on_parked(self, inc: Incoming) -> None:
        """A lobby bot may only answer pings or leave; anything else makes it leave."""
        try:
            msg = decode_bot_message(inc.payload)
        except ProtocolError:
            self._unpark(inc.peer)
            return
        if not isinstance(msg, Pong):
            self._unpark(inc.peer)

    def _on_lost(self, peer: bytes, reason: str) -> None:
        """A connection ended: a seated bot's is a stall fault, a lobby bot leaves the lobby."""
        link = self._by_peer.get(peer)
        if link is not None:
            try:
                link.on_connection_lost(reason)
            except Exception as err:  # a referee bug: that seat's match ends, others go on
                link.fail(err)
        elif peer in self._parked:
            self._unpark(peer)

    def _reject(self, peer: bytes, code: str, message: str) -> None:
        """Refuse a stranger's hello and close its connection (a reject is final); counted
        and logged at a bounded rate (:class:`~referee.match.rejects.RejectLog`)."""
        self.rejects.note(f"hello ({code})", f"{message} (peer {peer.hex()})")
        if len(self.rejections) < 100:
            self.rejections.append(f"{code}: {message}")
        if self._quota.take(peer):
            self._send(peer, Reject(code, message, SUPPORTED_VERSIONS))
        self.transport.disconnect(peer, f"rejected: {message}")

    def _holder(self, token: str) -> str | None:
        """Why ``token`` cannot be said hello with now (None if it can)."""
        link = self._bound.get(token)
        if link is not None and not link.finished:
            return "this token's connection is playing a game"
        if self._lobby.get(token):
            return "this token's connection is waiting in the lobby"
        return None

    def _on_stranger(self, inc: Incoming, arrived: float) -> None:
        if inc.malformed:
            self._reject(inc.peer, ErrorCode.MALFORMED, "a message must be exactly one frame")
            return
        try:
            msg = decode_bot_message(inc.payload)
        except ProtocolError as err:
            self._reject(inc.peer, str(err.code), str(err))
            return
        if not isinstance(msg, Hello):
            message = "say hello with your token first"
            self.rejects.note("message before hello", f"{msg.TYPE} (peer {inc.peer.hex()})")
            if self._quota.take(inc.peer):
                self.transport.send(inc.peer, error_bytes(ErrorCode.UNEXPECTED_MESSAGE, message))
            return
        if self._closing:
            self._reject(inc.peer, ErrorCode.SHUTDOWN, "the referee is shutting down")
            return
        if msg.protocol_version not in SUPPORTED_VERSIONS:
            versions = ", ".join(map(str, SUPPORTED_VERSIONS))
            self._reject(
                inc.peer,
                ErrorCode.VERSION_UNSUPPORTED,
                f"protocol version {msg.protocol_version} is not supported (supported: {versions})",
            )
            return
        # The key before the token's use: a thief with another key must not learn whether
        # the token's owner is connected (token_in_use would tell it).
        link = self._by_token.get(msg.token)
        known = link is not None or msg.token in self._registered or msg.token in self._bound
        if known and not self._key_matches(inc.peer, msg.token):
            message = "token not valid with this connection's key"
            self._reject(inc.peer, ErrorCode.BAD_TOKEN, message)
            return
        held = self._holder(msg.token)
        if held is not None:
            self._reject(
                inc.peer,
                ErrorCode.TOKEN_IN_USE,
                f"token already in use: {held} (one connection per token; the first keeps it)",
            )
            return
        if link is None and msg.token in self._registered:
            self._park(inc.peer, msg)
            return
        if link is None:
            code = ErrorCode.TOKEN_IN_USE if msg.token in self._used else ErrorCode.BAD_TOKEN
            text = "token already used" if msg.token in self._used else "unknown token"
            self._reject(inc.peer, code, text)
            return
        del self._by_token[msg.token]
        self._bind(link, inc.peer, msg, arrived, welcome=True)

    def _bind(
        self, link: SeatLink, peer: bytes, hello: Hello, arrived: float, *, welcome: bool
    ) -> None:
        """Bind a routing id to a seat (only ever after a valid token)."""
        if link.token in self._registered:
            self._seated.add(link.token)
        else:
            self._used.add(link.token)
        link.bind(peer, hello, multi_match=hello.multi_match and self.multi_match, arrived=arrived)
        self._by_peer[peer] = link
        self.transport.admit(peer)
        self._bound[link.token] = link
        if welcome:
            heartbeat_ms = round(link.control.heartbeat * 1000)
            granted = Welcome(
                PROTOCOL_VERSION,
                REFEREE_NAME,
                heartbeat_ms,
                inline_events=hello.inline_events,
                multi_match=link.multi_match,
                declare_melds=hello.declare_melds,
            )
            self._send(peer, granted)
        LOGGER.info("seat %d bound to %r (peer %s)", link.seat, hello.name, peer.hex())
