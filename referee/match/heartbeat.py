"""Heartbeats: ping an idle bot every interval; five silent intervals make a stall fault.

One :class:`Heartbeat` per seat, started by the match once both bots said hello and stopped
when the seat closes. It runs on the seat's :class:`~referee.match.clock.Timer` (one alarm
per interval, no task), and looks at the seat only through :class:`Beating`. The referee's own
stalls (:mod:`referee.net.stalls`) are not the bot's silence: they are left out of it.
"""

from __future__ import annotations

from typing import Protocol

from protocol.schema import Ping
from referee.match.clock import NO_STALLS, Alarm, Stalls, Timer
from referee.match.faults import FaultKind

__all__ = ["Beating", "Heartbeat"]


class Beating(Protocol):
    """What a heartbeat needs of its seat."""

    @property
    def last_heard(self) -> float:
        """When the bot's latest message arrived (timer seconds)."""
        ...

    @property
    def is_idle(self) -> bool:
        """No request outstanding and no fault recorded."""
        ...

    @property
    def finished(self) -> bool:
        """The seat is done."""
        ...

    def send(self, msg: Ping, /) -> bool:
        """Send a message to the bot."""
        ...

    def record_fault(self, kind: FaultKind, detail: str, /) -> object:
        """Record a fault on the seat."""
        ...

    def fail(self, error: Exception, /) -> None:
        """A referee bug surfaced on the seat (the match ends as an infrastructure error)."""
        ...


class Heartbeat:
    """Pings an idle bot every ``interval`` seconds; silence for five intervals stalls it."""

    def __init__(
        self, seat: Beating, timer: Timer, interval: float, stalls: Stalls = NO_STALLS
    ) -> None:
        self._seat = seat
        self._timer = timer
        self._stalls = stalls
        self.interval = interval
        self._nonce = 0
        self._alarm: Alarm | None = None

    def start(self) -> None:
        """Beat every interval from now on (until :meth:`stop`)."""
        if self._alarm is None:
            self._alarm = self._timer.call_at(self._timer.time() + self.interval, self._beat)

    def stop(self) -> None:
        """No more beats."""
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm = None

    def _beat(self) -> None:
        try:
            self._beat_once()
        except Exception as err:  # a referee bug in a timer: end the match, do not hang it
            self._seat.fail(err)

    def _beat_once(self) -> None:
        self._alarm = None
        seat, interval = self._seat, self.interval
        if seat.finished:
            return
        now = self._timer.time()
        if seat.is_idle:
            heard = seat.last_heard
            silent = now - heard
            if silent > 5 * interval:
                silent -= self._stalls.stalled(heard, now)
            if silent > 5 * interval:
                seat.record_fault(FaultKind.STALL, f"no answer to heartbeats for {silent:.1f} s")
                return
            if silent > interval:
                self._nonce += 1
                seat.send(Ping(self._nonce))
        self._alarm = self._timer.call_at(now + interval, self._beat)
