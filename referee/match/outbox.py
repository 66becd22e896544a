"""Everything the referee sends to one bot goes through its seat's outbox, in order.

Events about the opponent's moves are *held* here (:meth:`Outbox.hold`): a bot granted
``inline_events`` gets them inside its next request (:meth:`Outbox.take_held`), and any other
message sent first flushes them as ``event`` messages, so a connection's messages always stay
in order. Error replies to bots are written here only (:func:`error_bytes`, which the hub uses
for strangers too), and replies to unsolicited input have a quota (:meth:`Outbox.refuse`: a
flooding bot gets no amplification).
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.codec import encode
from protocol.schema import Error

__all__ = ["MAX_ERROR_REPLIES", "Outbox", "error_bytes"]

MAX_ERROR_REPLIES = 8
"""Error replies to unsolicited input (stale replies, garbage) before a seat goes quiet."""


def error_bytes(code: str, message: str, request_id: int | None = None) -> bytes:
    """An encoded ``error`` message (its text cut to 400 characters)."""
    return encode(Error(code, message[:400], request_id))


class Outbox:
    """One seat's messages to its bot; ``peer`` is set when the seat is bound."""

    def __init__(self, send_bytes: Callable[[bytes, bytes], bool]) -> None:
        self._send_bytes = send_bytes
        self.peer: bytes | None = None
        """The routing id of the bound bot (None until the hello)."""
        self._held: list[bytes] = []
        self._refused = 0

    def hold(self, event: bytes) -> None:
        """Keep an encoded ``event`` until the next request or message to this bot."""
        self._held.append(event)

    def take_held(self) -> list[bytes]:
        """The held events, oldest first, now to be sent inside a request."""
        held, self._held = self._held, []
        return held

    def send(self, data: bytes) -> bool:
        """Send ``data`` after any held events; False if anything could not be delivered."""
        peer = self.peer
        if peer is None:
            return False
        if self._held and not self.flush():
            return False
        return self._send_bytes(peer, data)

    def flush(self) -> bool:
        """Send the held events now, as ``event`` messages; False if one was not delivered."""
        peer = self.peer
        if peer is None:
            return False
        held, self._held = self._held, []
        send_bytes = self._send_bytes
        return all(send_bytes(peer, event) for event in held)  # stops at the first failure

    def refuse(self, code: str, message: str, request_id: int | None = None) -> None:
        """Answer unsolicited input with an ``error``, up to :data:`MAX_ERROR_REPLIES` times.

        A reply that cannot be delivered is not a fault here (the input was the bot's doing).
        """
        if self._refused < MAX_ERROR_REPLIES and self.peer is not None:
            self._refused += 1
            self.flush()
            self._send_bytes(self.peer, error_bytes(code, message, request_id))
