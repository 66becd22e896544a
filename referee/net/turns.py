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
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from typing import Any

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
        select = getattr(selector, "select", None)
        if selector is not None and select is not None:
            selector.select = self._timed(select)
            self.timed = True

    def _timed(self, select: Callable[[float | None], Any]) -> Callable[[float | None], Any]:
        clock = self._clock

        def timed_select(timeout: float | None = None) -> Any:
            try:
                events = select(0)
                self.waited = not events and timeout != 0
                if self.waited:
                    events = select(timeout)
                return events
            finally:
                self.previous = self.returned
                self.returned = clock()

        return timed_select

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
