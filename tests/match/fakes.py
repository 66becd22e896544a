"""An in-memory transport for driving the hub and seats without sockets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack

from protocol.codec import decode, encode
from protocol.schema import Hello, Message
from referee.net.transport import Incoming


class FakeTransport:
    """Records what the referee sends; ``deliver`` plays a bot's frame into the hub."""

    endpoint = local_endpoint = "inproc://fake"

    def __init__(self) -> None:
        self.sent: list[tuple[bytes, bytes]] = []
        self.handler: Callable[[Incoming], None] | None = None
        self.reachable = True
        self.on_drain: Callable[[], None] | None = None
        """Runs when the seat drains the transport before declaring a timeout."""

    def send(self, peer: bytes, payload: bytes) -> bool:
        if not self.reachable:
            return False
        self.sent.append((peer, payload))
        return True

    def set_handler(self, handler: Callable[[Incoming], None] | None) -> None:
        self.handler = handler

    def drain_now(self) -> None:
        if self.on_drain is not None:
            self.on_drain()

    def deliver(self, peer: bytes, payload: bytes | Message, *, malformed: bool = False) -> None:
        """A frame from ``peer`` (a message is encoded first)."""
        assert self.handler is not None
        data = payload if isinstance(payload, bytes) else encode(payload)
        self.handler(Incoming(peer, data, malformed))

    def deliver_raw(self, peer: bytes, obj: Any) -> None:
        """Any msgpack value from ``peer``."""
        self.deliver(peer, msgpack.packb(obj))

    def messages(self, peer: bytes) -> list[Message]:
        """Decoded messages sent to ``peer``."""
        return [decode(p) for who, p in self.sent if who == peer]

    def hello(
        self, peer: bytes, token: str, version: int = 1, *, inline_events: bool = False
    ) -> None:
        """Say hello as a bot."""
        name = f"bot-{peer.hex()}"
        self.deliver(peer, Hello(version, name, token, inline_events=inline_events))
