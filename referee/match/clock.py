"""Time controls, the per-game clock a seat's decisions are charged to, and the timer.

A :class:`TimeControl` is configuration (seconds, validated); a :class:`Clock` is one seat's
running account for a game: ``move`` per decision, overtime drawn from ``bank``, floor 0. A
:class:`Timer` is where seats read the time and set their alarms (deadlines, heartbeats): the
running asyncio loop in the referee, a virtual timer in tests, so no test waits in real time.
A timer's :class:`Stalls` (:func:`stalls_of`) are the referee's own freezes, which every
deadline, silence and limit leaves out (:mod:`referee.net.stalls`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "CHECK_TIME",
    "NO_STALLS",
    "Alarm",
    "Clock",
    "Stalls",
    "TimeControl",
    "Timer",
    "stalls_of",
]


class Alarm(Protocol):
    """A callback set with :meth:`Timer.call_at` (an :class:`asyncio.TimerHandle` is one)."""

    def cancel(self) -> None:
        """The callback will not run."""
        ...

    def when(self) -> float:
        """When it runs, in :meth:`Timer.time` seconds."""
        ...


class Timer(Protocol):
    """A monotonic time source with alarms; an asyncio event loop is one."""

    def time(self) -> float:
        """Now, in seconds (monotonic)."""
        ...

    def call_at(self, when: float, callback: Callable[[], object], /) -> Alarm:
        """Run ``callback`` at ``when`` (or as soon after as the timer can)."""
        ...


class Stalls(Protocol):
    """The referee's stalls on a timer's clock (:class:`referee.net.stalls.StallLog` is one)."""

    @property
    def last_end(self) -> float:
        """When the newest stall ended (-inf: none): nothing after it is a stall."""
        ...

    def stalled(self, since: float, until: float = math.inf, /) -> float:
        """Seconds of stall between ``since`` and ``until``."""
        ...


class _NoStalls:
    """A timer that never stalls (a virtual one)."""

    last_end = -math.inf

    def stalled(self, since: float, until: float = math.inf, /) -> float:
        return 0.0


NO_STALLS: Stalls = _NoStalls()
"""The stalls of a timer that has none."""


def stalls_of(timer: Timer) -> Stalls:
    """The stalls ``timer`` knows of: a running loop's (found by its ``select`` timing), a
    virtual timer's ``stalls`` attribute (tests), else none."""
    found: Stalls | None = getattr(timer, "stalls", None)
    if found is not None:
        return found
    import asyncio  # only once a match runs: its bots start before asyncio is imported

    if isinstance(timer, asyncio.AbstractEventLoop):
        from referee.net.turns import turns_of

        return turns_of(timer).stalls
    return NO_STALLS


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeControl:
    """Clock settings, in seconds."""

    move: float = 1.0
    """Time per decision before the bank is drawn on."""
    bank: float = 30.0
    """Per-game bank: time over ``move`` is drawn from it."""
    grace: float = 0.05
    """Network grace added to every deadline (not given to the bot)."""
    startup: float = 10.0
    """Time to start, connect and say hello."""
    heartbeat: float = 1.0
    """Idle ping interval; a bot silent for 5 intervals while idle stalls."""
    flood_limit: int = 1000
    """Unsolicited messages per game before flooding is a protocol fault."""

    def __post_init__(self) -> None:
        for name in ("move", "bank", "grace", "startup", "heartbeat"):
            value = getattr(self, name)
            if not 0 <= value <= 86_400:
                raise ValueError(f"time control {name} must be between 0 and 86400 s")
        if self.move <= 0 or self.startup <= 0 or self.heartbeat <= 0:
            raise ValueError("move, startup and heartbeat times must be positive")

    def to_wire(self) -> dict[str, int]:
        """Milliseconds, as sent in ``match_start``."""
        return {
            "move_ms": round(self.move * 1000),
            "bank_ms": round(self.bank * 1000),
            "grace_ms": round(self.grace * 1000),
            "startup_ms": round(self.startup * 1000),
        }


REMOTE_STARTUP = 300.0
"""``match``'s start-up limit for a remote seat, seconds (``BotSpec.startup``): a person starts
that bot by hand, after reading the printed endpoint and token (``serve`` waits for its remote
bots without limit)."""

CHECK_TIME = TimeControl(move=1.0, bank=30.0, grace=0.05, startup=10.0, heartbeat=0.5)
"""The clocks of ``gin-referee check``'s battery: a match's defaults, with pings every 0.5 s
while idle."""


class Clock:
    """A seat's per-game clock: ``move`` per decision, overtime drawn from ``bank``."""

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.bank = control.bank
        self.used = 0.0
        self.decisions = 0

    def new_game(self) -> None:
        """Refill the bank for a new game."""
        self.bank = self.control.bank

    @property
    def time_left(self) -> float:
        """Time the bot may spend on the next decision (not counting grace)."""
        return self.control.move + self.bank

    def charge(self, elapsed: float) -> None:
        """Account a decision's elapsed time; overtime comes out of the bank (floor 0)."""
        self.used += elapsed
        self.decisions += 1
        over = elapsed - self.control.move
        if over > 0:
            self.bank = max(0.0, self.bank - over)
