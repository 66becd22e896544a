"""The referee's own freezes ("stalls"), kept so that no bot is charged for them.

Design: a stall is time in which the referee's process did not run its loop: it was stopped
(SIGSTOP, Ctrl-Z, a frozen VM or container), swapping, in a long garbage collection, or busy in
one long callback. :class:`~referee.net.turns.LoopTurns`, which already times every ``select``
of the loop for the receive stamps, sees each one before any callback of the turn after it
runs, as one of two gaps of the monotonic clock:

* a **busy gap**: the loop began its ``select`` more than :data:`STALL_THRESHOLD` after the
  previous one returned (a callback, or the process between callbacks, was frozen); the span
  runs from that return to this ``select``;
* a **late wake-up**: the ``select`` returned more than :data:`STALL_THRESHOLD` after the
  timeout it was given (or, for a poll, after it began); the span runs from when the
  ``select`` began, because the process may have been stopped at any moment of its wait and
  bytes that woke it may have come at any moment after it began.

While a transport is open the loop also ticks every :data:`TICK` seconds (:meth:`LoopTurns.watch
<referee.net.turns.LoopTurns.watch>`), so no ``select`` waits longer than that: a freeze of an
idle loop is never mistaken for idle waiting, and a span excuses at most one tick of real
idle time besides the freeze (in the bot's favour). A stopped process sees its whole pause as
one late wake-up when it resumes, which is logged once, at WARNING, with its length.

Every place that measures a bot's time asks :meth:`StallLog.stalled` how much of an interval
was a stall and leaves it out: reply times and deadlines (:mod:`referee.match.seat`), the
idle heartbeat (:mod:`referee.match.heartbeat`), the ZMTP heartbeat silence
(:mod:`referee.net.transport`), the start-up limit and the grace after a lost connection. The
common case costs one comparison (:attr:`StallLog.last_end`). A :class:`LagWindow` gathers the
loop's lag (how late its tick ran) and the stalls over one game, for that game's record.

Known limits: the last :data:`KEEP` stalls are kept, so a deadline spanning more of them is
excused only the newest; a loop without a Python selector (uvloop) is not timed and records no
stall; a freeze shorter than the threshold is not a stall (the receive stamps still leave the
loop's busy time out of reply times, :mod:`referee.net.turns`); time the process was runnable
but waiting for a core is a stall only beyond the threshold.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from typing import Any

__all__ = ["KEEP", "STALL_THRESHOLD", "TICK", "LagWindow", "StallLog"]

LOGGER = logging.getLogger(__name__)

STALL_THRESHOLD = 0.25
"""Seconds: a gap of the loop's clock longer than this is a stall (see the module docstring)."""
TICK = 0.1
"""Seconds between the stall watch's ticks while a transport is open (the longest ``select``)."""
KEEP = 256
"""Stalls remembered (the newest)."""


class LagWindow:
    """The loop's lag and the stalls over one interval (a game): open it with
    :meth:`StallLog.window`, read :meth:`summary` when the interval ends."""

    def __init__(self, log: StallLog, start: float) -> None:
        self._log = log
        self.start = start
        """When the window opened (loop time)."""
        self.lag_max = 0.0
        """The most the loop's tick ran late while the window was open (seconds)."""

    def close(self, end: float) -> dict[str, Any]:
        """Stop gathering; the window's ``lag_max`` and its ``stalls`` (``[offset from the
        start, length]`` each, seconds, rounded to milliseconds) as stored with a game."""
        self._log.windows.discard(self)
        spans = self._log.spans_between(self.start, end)
        lag = max([self.lag_max, *(e - s for s, e in spans)])
        return {
            "lag_max": round(lag, 4),
            "stalls": [[round(s - self.start, 3), round(e - s, 3)] for s, e in spans],
        }


class StallLog:
    """The spans (start, end) of the referee's stalls, in loop time, oldest first."""

    def __init__(self) -> None:
        self._spans: deque[tuple[float, float]] = deque(maxlen=KEEP)
        self.last_end = -math.inf
        """When the newest stall ended (-inf: none yet): nothing since is a stall."""
        self.windows: set[LagWindow] = set()
        """The open :class:`LagWindow` s (the tick updates their lag)."""

    def add(self, start: float, end: float) -> None:
        """Record a stall from ``start`` to ``end`` (found by the loop's ``select`` timing), and
        log it once with its length."""
        if end <= start:
            return
        spans = self._spans
        if spans and start <= spans[-1][1]:  # (never overlaps in practice: merge to be sure)
            start = spans.pop()[0]
        spans.append((start, end))
        self.last_end = max(self.last_end, end)
        LOGGER.warning(
            "the referee's loop stalled for %.2f s (process stopped, swapping or busy): "
            "deadlines, heartbeats and start-up limits running across it are extended by it",
            end - start,
        )

    def stalled(self, since: float, until: float = math.inf) -> float:
        """Seconds of stall between ``since`` and ``until`` (loop time)."""
        if self.last_end <= since:
            return 0.0
        total = 0.0
        for start, end in reversed(self._spans):
            if end <= since:
                break
            overlap = min(end, until) - max(start, since)
            if overlap > 0:
                total += overlap
        return total

    def spans_between(self, since: float, until: float) -> list[tuple[float, float]]:
        """The stalls overlapping ``since`` .. ``until``, clipped to it, oldest first."""
        found = []
        for start, end in reversed(self._spans):
            if end <= since:
                break
            if start < until:
                found.append((max(start, since), min(end, until)))
        return found[::-1]

    def window(self, start: float) -> LagWindow:
        """A :class:`LagWindow` gathering from ``start`` until it is closed."""
        window = LagWindow(self, start)
        self.windows.add(window)
        return window

    def note_lag(self, lag: float) -> None:
        """The tick ran ``lag`` seconds late: keep it in every open window."""
        for window in self.windows:
            if lag > window.lag_max:
                window.lag_max = lag
