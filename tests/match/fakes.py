"""An in-memory transport and a virtual timer for driving the hub and seats without sockets
or real waiting."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import msgpack

from protocol.codec import decode, encode
from protocol.schema import Hello, Message
from referee.match.clock import TimeControl
from referee.match.hub import Hub
from referee.match.seat import SeatLink
from referee.net.stalls import StallLog
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
        self.on_send: Callable[[], None] | None = None
        """Runs after each successful send (a write that takes time: advance a timer)."""
        self.arrived: float | None = None
        """The receive stamp of the frame being delivered (None: the hub's timer stamps it)."""
        self.lost_handler: Callable[[bytes, str], None] | None = None
        self.admitted: set[bytes] = set()
        self.disconnected: dict[bytes, str] = {}
        self.keys: dict[bytes, bytes] = {}
        """The CURVE key each peer authenticated with (absent: none)."""

    def send(self, peer: bytes, payload: bytes) -> bool:
        if not self.reachable:
            return False
        self.sent.append((peer, payload))
        if self.on_send is not None:
            self.on_send()
        return True

    def set_handler(self, handler: Callable[[Incoming], None] | None) -> None:
        self.handler = handler

    def drain_now(self) -> None:
        if self.on_drain is not None:
            self.on_drain()

    def set_lost_handler(self, handler: Callable[[bytes, str], None] | None) -> None:
        self.lost_handler = handler

    def old_zmtp(self) -> tuple[int, str]:
        return 0, ""

    def without_curve(self) -> int:
        """No CURVE here: never a connection without it."""
        return 0

    def admit(self, peer: bytes) -> None:
        self.admitted.add(peer)

    def disconnect(self, peer: bytes, reason: str = "closed by the referee") -> None:
        self.disconnected[peer] = reason

    def peer_key(self, peer: bytes) -> bytes | None:
        return self.keys.get(peer)

    def lose(self, peer: bytes, reason: str = "connection closed by the peer") -> None:
        """The connection of ``peer`` ends (as the real transport reports it)."""
        assert self.lost_handler is not None
        self.lost_handler(peer, reason)

    def deliver(
        self,
        peer: bytes,
        payload: bytes | Message,
        *,
        malformed: str = "",
        arrived: float | None = None,
    ) -> None:
        """A frame from ``peer`` (a message is encoded first); ``malformed`` names what the
        transport refused instead (``multipart``, ``too_large``); ``arrived`` is the receive
        stamp the transport gives it (as the real one does), None for none."""
        assert self.handler is not None
        data = payload if isinstance(payload, bytes) else encode(payload)
        self.arrived = arrived
        try:
            self.handler(Incoming(peer, b"" if malformed else data, bool(malformed), malformed))
        finally:
            self.arrived = None

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


class VirtualAlarm:
    """A callback set on a :class:`VirtualTimer`."""

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self._when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def when(self) -> float:
        return self._when


class VirtualTimer:
    """A :class:`~referee.match.clock.Timer` whose time moves only in :meth:`advance`."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self._alarms: list[tuple[float, int, VirtualAlarm]] = []
        self._set = 0
        self.stalls = StallLog()
        """The referee's stalls on this timer (made by :meth:`stall`)."""

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], object], /) -> VirtualAlarm:
        alarm = VirtualAlarm(when, callback)
        self._set += 1
        heapq.heappush(self._alarms, (when, self._set, alarm))
        return alarm

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, running every alarm due meanwhile at its own time."""
        end = self.now + seconds
        while self._alarms and self._alarms[0][0] <= end:
            when, _, alarm = heapq.heappop(self._alarms)
            if not alarm.cancelled:
                self.now = max(self.now, when)
                alarm.callback()
        self.now = end

    def stall(self, seconds: float) -> None:
        """The referee freezes for ``seconds``: the stall is recorded, and every alarm due
        meanwhile runs late, at its end (as a resumed loop runs them)."""
        self.stalls.add(self.now, self.now + seconds)
        self.now += seconds
        self.advance(0.0)

    @property
    def pending(self) -> int:
        """Alarms set and neither run nor cancelled."""
        return sum(not alarm.cancelled for _, _, alarm in self._alarms)


FAST = TimeControl(move=0.05, bank=0.05, grace=0.01, heartbeat=0.02, flood_limit=5)
PEER = b"\x00peer"


async def bound(
    fake: FakeTransport, control: TimeControl = FAST
) -> tuple[Hub, SeatLink, VirtualTimer]:
    """A hub on ``fake`` with a virtual timer, and a seat bound to :data:`PEER`."""
    timer = VirtualTimer()
    hub = Hub(fake, timer=timer)
    link = hub.open_seat(0, control)
    fake.hello(PEER, link.token)
    await link.connected
    return hub, link, timer
