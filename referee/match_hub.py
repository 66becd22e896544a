"""The hub: one ROUTER transport shared by any number of seats, routing frames to them.

Tokens are issued per seat. A frame from an unknown peer must be a ``hello`` carrying a valid,
unused token and a supported protocol version; then that routing id is bound to the seat
(and only then). Everything else from unknown peers is answered with ``reject``/``error`` and
otherwise ignored: nobody can play someone else's seat. Frames from bound peers go straight
to their :class:`~referee.match_seat.SeatLink`, stamped with their arrival time.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from typing import Protocol

from protocol.codec import decode_bot_message, encode
from protocol.errors import ErrorCode, ProtocolError
from protocol.schema import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Error,
    Hello,
    Message,
    Reject,
    Welcome,
)
from referee.match_seat import SeatLink, TimeControl
from referee.transport import Incoming

__all__ = ["REFEREE_NAME", "Hub", "Transport"]

LOGGER = logging.getLogger(__name__)
REFEREE_NAME = "gin-referee/0.1"


class Transport(Protocol):
    """What the hub needs of a transport (``RouterTransport``, or a fake in tests)."""

    @property
    def endpoint(self) -> str:
        """The bound endpoint."""
        ...

    def send(self, peer: bytes, payload: bytes) -> bool:
        """Send one frame to a peer; False if it cannot be delivered."""
        ...

    def set_handler(self, handler: Callable[[Incoming], None] | None) -> None:
        """Deliver every incoming frame to ``handler``."""
        ...

    def drain_now(self) -> None:
        """Deliver what has already arrived."""
        ...


class Hub:
    """Routes one transport's traffic; issue a seat with :meth:`open_seat`."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._by_token: dict[str, SeatLink] = {}
        self._by_peer: dict[bytes, SeatLink] = {}
        self._used: set[str] = set()
        self.rejected = 0
        transport.set_handler(self._on_incoming)

    @property
    def endpoint(self) -> str:
        """The endpoint bots connect to."""
        return self.transport.endpoint

    def open_seat(
        self, seat: int, control: TimeControl, token: str | None = None, *, reusable: bool = False
    ) -> SeatLink:
        """A new seat waiting for a bot to say hello with its (fresh or given) token.

        A ``reusable`` token (a registered remote bot's) is accepted again for a later seat once
        this seat is closed; it still binds to one connection at a time.
        """
        token = token or secrets.token_urlsafe(18)
        if token in self._by_token or (token in self._used and not reusable):
            raise ValueError("token already issued")
        self._used.discard(token)
        link = SeatLink(
            seat=seat,
            token=token,
            send_bytes=self.transport.send,
            control=control,
            poll=self.transport.drain_now,
        )
        self._by_token[token] = link
        return link

    def close_seat(self, link: SeatLink) -> None:
        """Forget a seat: its token and routing id stop being accepted."""
        link.finished = True
        self._by_token.pop(link.token, None)
        if link.peer is not None:
            self._by_peer.pop(link.peer, None)

    def _send(self, peer: bytes, msg: Message) -> None:
        self.transport.send(peer, encode(msg))

    def _on_incoming(self, inc: Incoming) -> None:
        arrived = asyncio.get_running_loop().time()
        link = self._by_peer.get(inc.peer)
        if link is not None:
            link.on_payload(inc.payload, inc.malformed, arrived)
            return
        self._on_stranger(inc, arrived)

    def _reject(self, peer: bytes, code: str, message: str) -> None:
        self.rejected += 1
        LOGGER.info("rejected peer %s: %s", peer.hex(), message)
        self._send(peer, Reject(code, message, SUPPORTED_VERSIONS))

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
            self._send(
                inc.peer,
                Error(ErrorCode.UNEXPECTED_MESSAGE, "say hello with your token first"),
            )
            return
        if msg.protocol_version not in SUPPORTED_VERSIONS:
            versions = ", ".join(map(str, SUPPORTED_VERSIONS))
            self._reject(
                inc.peer,
                ErrorCode.VERSION_UNSUPPORTED,
                f"protocol version {msg.protocol_version} is not supported (supported: {versions})",
            )
            return
        link = self._by_token.get(msg.token)
        if link is None:
            code = ErrorCode.TOKEN_IN_USE if msg.token in self._used else ErrorCode.BAD_TOKEN
            text = "token already used" if msg.token in self._used else "unknown token"
            self._reject(inc.peer, code, text)
            return
        del self._by_token[msg.token]
        self._used.add(msg.token)
        link.peer = inc.peer
        link.name = msg.name
        link.last_heard = arrived
        self._by_peer[inc.peer] = link
        self._send(
            inc.peer,
            Welcome(PROTOCOL_VERSION, REFEREE_NAME, round(link.control.heartbeat * 1000)),
        )
        if not link.connected.done():
            link.connected.set_result(None)
        LOGGER.info("seat %d bound to %r (peer %s)", link.seat, msg.name, inc.peer.hex())
