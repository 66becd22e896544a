"""What the match layer needs of the bot-facing endpoint: the :class:`Transport` protocol that
:class:`referee.net.transport.RouterTransport` implements (and the tests' fakes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from referee.net.transport import Incoming

__all__ = ["Transport"]


class Transport(Protocol):
    """What the hub needs of a transport (``RouterTransport``, or a fake in tests)."""

    @property
    def endpoint(self) -> str:
        """The bound endpoint."""
        ...

    @property
    def local_endpoint(self) -> str:
        """The endpoint for bots started on this machine (may equal ``endpoint``)."""
        ...

    def old_zmtp(self) -> tuple[int, str]:
        """Connections refused for greeting with a ZMTP version before 3.0, and the latest
        such version (``ZMTP 2.0``)."""
        ...

    def without_curve(self) -> int:
        """Connections that came without CURVE to a CURVE endpoint, gone or still stuck in the
        greeting (why a bot may never have said hello)."""
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

    def set_lost_handler(self, handler: Callable[[bytes, str], None] | None) -> None:
        """Call ``handler(peer, reason)`` when a peer's connection ends."""
        ...

    def admit(self, peer: bytes) -> None:
        """The hub accepted ``peer`` (a valid hello): the transport stops timing it out."""
        ...

    def disconnect(self, peer: bytes, reason: str = ...) -> None:
        """Close ``peer``'s connection once what is queued for it is written."""
        ...

    def peer_key(self, peer: bytes) -> bytes | None:
        """The CURVE public key ``peer`` authenticated with (None: no CURVE)."""
        ...
