"""What the live page may not show yet, and its release (:mod:`referee.live.hub`, "What is
withheld"; docs/security.md).

A game's hand is held from its end until ``delay`` seconds have passed **and** its deal is not
sealed (a game still to be played deals from it: a duplicate twin, a game to be replayed); a
game's fault details are held the same way from its end. :class:`Withheld` keeps the timers,
the sealed deals and the releases in flight; it shares the hub's ``matches`` and hands what it
releases back to the hub (``on_hand``: a hand replayed in full; ``on_meta``: a game's header
data, its fault details filled in). A released hand is replayed through the rules in a worker
thread, off the referee's loop (an unsealed deal releases every hand of two games at once).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.live.game import LiveGame
from referee.view.replay_data import recorded_hand

__all__ = ["Withheld"]

LOGGER = logging.getLogger(__name__)


class Withheld:
    """The held hands and fault details of the hub's games (see the module)."""

    def __init__(
        self,
        matches: dict[str, LiveGame],
        delay: float,
        *,
        on_hand: Callable[[LiveGame, dict[str, Any]], None],
        on_meta: Callable[[LiveGame], None],
    ) -> None:
        self.matches = matches
        """The hub's games (the same dict): a game no longer in it is released no more."""
        self.delay = delay
        self.sealed: set[str] = set()
        """Deals a game still to be played deals from: nothing of them is released."""
        self._on_hand, self._on_meta = on_hand, on_meta
        self._timers: set[asyncio.TimerHandle] = set()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-release")
        self._inflight: set[asyncio.Future[dict[str, Any]]] = set()
        self.closed = False

    def seal(self, deal_ids: Iterable[str]) -> None:
        """Withhold the cards of every hand dealt from these deals until :meth:`unseal`."""
        self.sealed.update(deal_ids)

    def unseal(self, deal_id: str) -> None:
        """No game still to be played deals from ``deal_id``: release what is due."""
        self.sealed.discard(deal_id)
        for match in list(self.matches.values()):
            if match.deal_id == deal_id:
                for key in [k for k, item in match.withheld.items() if item["due"]]:
                    self._release(match, key)

    def pending(self) -> bool:
        """Whether a hand's cards (or a game's fault details) are still to be released, other
        than those of a sealed deal (which stay withheld)."""
        return any(m.withheld and m.deal_id not in self.sealed for m in self.matches.values())

    async def released(self) -> None:
        """Wait until everything withheld that is not sealed has been released and handed
        back (at most the card delay, once the games are over)."""
        while self.pending() or self._inflight:
            await asyncio.sleep(0.05)
            await self.settled()

    async def settled(self) -> None:
        """Wait until every hand being released has been handed back."""
        while self._inflight:
            await asyncio.gather(*list(self._inflight), return_exceptions=True)
            await asyncio.sleep(0)  # let their callbacks run

    def hold(self, match: LiveGame, key: str, rec: dict[str, Any]) -> None:
        """Hold ``match``'s hand ``key`` (its ``hand`` line ``rec``), or its fault details
        (``key`` ``"match"``), until it is due and its deal is not sealed."""
        match.withheld[key] = {"due": False, "rec": rec}
        loop = asyncio.get_running_loop()
        timer: asyncio.TimerHandle

        def due() -> None:
            self._timers.discard(timer)
            item = match.withheld.get(key)
            if item is None or self.matches.get(match.id) is not match:
                return
            item["due"] = True
            if match.deal_id not in self.sealed:
                self._release(match, key)

        timer = loop.call_later(self.delay, due)
        self._timers.add(timer)

    def _release(self, match: LiveGame, key: str) -> None:
        item = match.withheld.pop(key)
        if key == "match":
            for fault, detail in zip(match.meta["faults"], match.details, strict=True):
                fault["detail"] = detail
            self._on_meta(match)
            return
        assert match.rules is not None
        clocks = match.start_clocks.pop(key)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._worker, recorded_hand, match.rules, item["rec"], clocks)
        self._inflight.add(future)

        def done(future: asyncio.Future[dict[str, Any]]) -> None:
            self._inflight.discard(future)
            if future.cancelled() or self.closed or self.matches.get(match.id) is not match:
                return
            error = future.exception()
            if error is not None:
                LOGGER.error("live feed of %s stopped: %r", match.id, error)
                match.broken = True
                return
            self._on_hand(match, future.result())

        future.add_done_callback(done)

    def close(self) -> None:
        """Stop: cancel the timers and the releases not started."""
        self.closed = True
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        self._worker.shutdown(wait=False, cancel_futures=True)
