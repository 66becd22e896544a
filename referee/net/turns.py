"""When did bytes reach the referee? Receive stamps that leave out the loop's own busy time.

An asyncio loop reads a socket only between turns: bytes that arrive while it runs a callback
(a match's rules, a spawn's ``fork_exec``, a long log write) wait in the kernel until the next
``select``. Stamping them when the loop finally reads them would charge that wait to the bot.
:class:`LoopTurns` times each ``select`` of the running loop and gives the earliest moment the
bytes read in the current turn can have arrived:

* the ``select`` waited (nothing was ready when it began, and these bytes woke the idle
  loop): they arrived when it returned;
* the bytes were already there when it began: they arrived after the previous ``select``
  returned, which is the stamp, a lower bound that leaves the whole busy turn out;
* bytes read outside the loop's own reading (:meth:`LoopTurns.draining`, the transport's
  ``drain_now`` before a timeout is declared) arrived after this turn's ``select`` returned
  (the loop runs its readers before its timers).

The error is at most one turn of the loop, always in the bot's favour. Loops without a Python
selector (uvloop) get the time of reading instead (``loop.time()``).

The same timing finds the referee's own freezes, before any callback of the turn after one
runs: :attr:`LoopTurns.stalls` (:mod:`referee.net.stalls`) records each gap of the clock
longer than its threshold, and :meth:`LoopTurns.watch` keeps every ``select`` short enough
for a freeze of an idle loop to show.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import Callable
from typing import Any

from referee.net.stalls import STALL_THRESHOLD, TICK, StallLog

__all__ = ["LoopTurns", "turns_of"]

_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopTurns] = (
    weakref.WeakKeyDictionary()
)


class LoopTurns:
    """The ``select`` times of one loop (see the module docstring); made by :func:`turns_of`.

    ``clock`` must be the loop's (``loop.time()`` is ``time.monotonic()``). Each ``select`` is
    split in two: a poll (timeout 0), which tells whether bytes were already waiting, then,
    only if nothing was and the loop means to wait, the loop's own ``select``.
    """

    def __init__(self, selector: Any | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.returned = self.previous = clock()
        """When the last ``select`` returned, and when the one before it did."""
        self.waited = False
        """Whether the last ``select`` waited for its events (nothing was ready at its poll)."""
        self.timed = False
        """Whether the loop's ``select`` is being timed (False: stamps are the time of reading)."""
        self._draining = False
        self.stalls = StallLog()
        """The loop's stalls (:mod:`referee.net.stalls`)."""
        self._watchers = 0
        self._tick: asyncio.TimerHandle | None = None
        self._started = False
        """A ``select`` returned already (before, :attr:`returned` is only when this was made,
        and the time since then is no busy gap)."""
        select = getattr(selector, "select", None)
        if selector is not None and select is not None:
            selector.select = self._timed(select)
            self.timed = True

    def _timed(self, select: Callable[[float | None], Any]) -> Callable[[float | None], Any]:
        clock = self._clock

        def timed_select(timeout: float | None = None) -> Any:
            began = clock()
            try:
                events = select(0)
                self.waited = not events and timeout != 0
                if self.waited:
                    events = select(timeout)
                return events
            finally:
                previous = self.previous = self.returned
                now = self.returned = clock()
                if not self._started:
                    self._started, previous = True, began
                if began - previous > STALL_THRESHOLD or now - began > STALL_THRESHOLD:
                    self._stalled(previous, began, now, timeout)

        return timed_select

    def _stalled(self, previous: float, began: float, now: float, timeout: float | None) -> None:
        """Record the stall a ``select`` begun at ``began`` and returned at ``now`` shows, if
        any (see :mod:`referee.net.stalls`): a busy gap since ``previous``, a late wake-up."""
        start = previous if began - previous > STALL_THRESHOLD else began
        allowed = 0.0 if not self.waited else math.inf if timeout is None else timeout
        end = now if now - began - allowed > STALL_THRESHOLD else began
        self.stalls.add(start, end)

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Tick every :data:`~referee.net.stalls.TICK` seconds until as many :meth:`unwatch`
        calls: no ``select`` then waits longer (a stalled idle loop shows as a late wake-up),
        and each tick's lateness is the loop's lag (:meth:`StallLog.note_lag`)."""
        self._watchers += 1
        if self._tick is None:
            self._tick = loop.call_later(TICK, self._on_tick, loop, loop.time() + TICK)

    def unwatch(self) -> None:
        """One watcher fewer; the ticks stop with the last."""
        self._watchers -= 1
        if self._watchers <= 0 and self._tick is not None:
            self._watchers = 0
            self._tick.cancel()
            self._tick = None

    def _on_tick(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        now = loop.time()
        self.stalls.note_lag(max(0.0, now - due))
        self._tick = loop.call_later(TICK, self._on_tick, loop, now + TICK)

    def arrival(self) -> float:
        """The earliest moment the bytes being read now can have reached the referee."""
        if not self.timed:
            return self._clock()
        if self._draining or self.waited:
            return self.returned
        return self.previous

    def draining(self, on: bool) -> None:
        """Reads from now on (until ``draining(False)``) are outside the loop's own reading."""
        self._draining = on


def turns_of(loop: asyncio.AbstractEventLoop) -> LoopTurns:
    """The loop's :class:`LoopTurns`, made (and its ``select`` timed) on first use."""
    turns = _TURNS.get(loop)
    if turns is None:
        turns = _TURNS[loop] = LoopTurns(getattr(loop, "_selector", None))
    return turns
