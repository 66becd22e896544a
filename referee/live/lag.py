"""A broadcast delay: what a ladder's live page shows runs ``lag`` seconds behind the ladder.

Every change the page would show (a game's events, a pair's deal unsealed, a new leaderboard)
is handed to :meth:`Lag.call`, which makes it ``lag`` seconds later, in the order the changes
came: the page is the ladder as it was ``lag`` seconds ago, whole and consistent (a pair's cards
are still released only after its last game, which came first). So it does not tell who is
playing now, nor who is about to be free (docs/ladder.md, "What the live page shows").
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Protocol

__all__ = ["Alarm", "Lag", "Timer"]

LOGGER = logging.getLogger(__name__)


class Alarm(Protocol):
    """A callback set with :meth:`Timer.call_at` (an :class:`asyncio.TimerHandle` is one)."""

    def cancel(self) -> None:
        """The callback will not run."""
        ...


class Timer(Protocol):
    """A monotonic clock with alarms (an asyncio event loop is one)."""

    def time(self) -> float:
        """Now, in seconds."""
        ...

    def call_at(self, when: float, callback: Callable[[], object], /) -> Alarm:
        """Run ``callback`` at ``when``."""
        ...


class Lag:
    """Runs calls ``lag`` seconds after they are made, in order (at once with ``lag`` 0)."""

    def __init__(self, lag: float, timer: Timer | None = None) -> None:
        if not 0.0 <= lag < 1e6:
            raise ValueError(f"the live page's lag must be 0 or more seconds, got {lag}")
        self.lag = lag
        self._timer = timer
        self._due: deque[tuple[float, Callable[[], object]]] = deque()
        self._alarm: Alarm | None = None
        self.closed = False

    @property
    def timer(self) -> Timer:
        """The clock (the running loop unless injected)."""
        if self._timer is None:
            self._timer = asyncio.get_running_loop()
        return self._timer

    @property
    def pending(self) -> int:
        """Calls not made yet."""
        return len(self._due)

    def call(self, fn: Callable[[], object]) -> None:
        """Make ``fn()`` in ``lag`` seconds, after the calls handed over before it."""
        if self.closed:
            return
        if self.lag <= 0.0 and not self._due:
            self._run_one(fn)
            return
        self._due.append((self.timer.time() + self.lag, fn))
        if self._alarm is None:
            self._alarm = self.timer.call_at(self._due[0][0], self._fire)

    def _fire(self) -> None:
        self._alarm = None
        now = self.timer.time()
        while self._due and self._due[0][0] <= now and not self.closed:
            self._run_one(self._due.popleft()[1])
        if self._due and not self.closed:
            self._alarm = self.timer.call_at(self._due[0][0], self._fire)

    @staticmethod
    def _run_one(fn: Callable[[], object]) -> None:
        try:
            fn()
        except Exception:  # the page misses one change; the ladder goes on
            LOGGER.exception("live: a delayed change of the page failed")

    def close(self) -> None:
        """Drop what is not made yet."""
        self.closed = True
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm = None
        self._due.clear()
