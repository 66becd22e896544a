"""A tournament's side of the live page: which deals stay sealed, and the standings.

Every game of a tournament deals from its ``deal_id`` (docs/tournaments.md): the two games of a
duplicate pair share one, and a game interrupted before it is recorded is played again from
the same one. So the cards of a hand may be shown only once no game still to be played deals
from its ``deal_id``: :class:`TournamentFeed` seals every deal with a game not yet recorded,
and unseals it when its last game is. Standings are recomputed from the store after each game,
in a worker thread (the referee's loop never waits on SQLite or the rating fit); a game ending
while they are computed asks for one more computation, not one per game, and that one starts
only after a rest of :data:`REST` times the last computation's length. Recomputing takes time
in proportion to the games recorded (0.7 s at 20,000 games here), and the thread shares the
interpreter with the games: back to back, a long tournament would have it running beside them
all the time; with the rest it runs at most a fifth of the time, and the page's standings lag
behind by about one computation.

The standings list every bot of the schedule from the start (a bot yet to play shows 0 games and
no score), and :meth:`TournamentFeed.final` computes them once more after the last game, so
the page ends on the final table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from referee.live.hub import LiveHub
from referee.tournament.report import compute_standings, render
from referee.tournament.runner import GameOutcome
from referee.tournament.store import GameSpec, SqliteStore

__all__ = ["REST", "TournamentFeed"]

LOGGER = logging.getLogger(__name__)
REST = 4.0
"""Between two computations of the standings, this many times the last one's length."""


def with_every_bot(
    standings: dict[str, Any] | None, bots: Sequence[str], total: int
) -> dict[str, Any]:
    """``standings`` (or none yet) with a row of 0 games for each bot that has played none, and
    the schedule's number of games."""
    data: dict[str, Any] = dict(standings or {"games_done": 0, "bots": [], "pairings": []})
    rows = list(data.get("bots", []))
    have = {row["name"] for row in rows}
    empty = {"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0, "faults": 0,
             "rating": None, "rating_low": None, "rating_high": None, "score": None,
             "points_per_game": None}  # fmt: skip
    rows += [{"name": name, **empty} for name in bots if name not in have]
    data["bots"] = rows
    data["games_total"] = max(int(data.get("games_total") or 0), total)
    return data


def standings_of(path: Path) -> dict[str, Any] | None:
    """The ``results --format json`` standings of a store (None if it does not exist yet)."""
    if not path.exists():
        return None
    store = SqliteStore.open(path)
    try:
        data: dict[str, Any] = json.loads(render(compute_standings(store.games()), "json"))
        return data
    finally:
        store.close()


class TournamentFeed:
    """Seals the deals of unplayed games and publishes standings (see the module)."""

    def __init__(
        self,
        hub: LiveHub,
        store_path: Path,
        games: Sequence[GameSpec],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """``clock`` and ``sleep`` time the rest between computations (injected by tests)."""
        self.hub = hub
        self.store_path = store_path
        self._clock = clock
        self._sleep = sleep
        self.deal_of = {spec.game_id: spec.deal_id for spec in games}
        self.bots = list(dict.fromkeys(name for spec in games for name in (spec.seat0, spec.seat1)))
        self.total = len(games)
        self.left: Counter[str] = Counter(spec.deal_id for spec in games)
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._resting = False

    def start(self) -> None:
        """Seal every deal with a game not yet recorded; publish the standings so far."""
        if self.store_path.exists():
            store = SqliteStore.open(self.store_path)
            try:
                done = [row.spec.game_id for row in store.games() if row.status == "done"]
            finally:
                store.close()
            for game_id in done:
                deal_id = self.deal_of.get(game_id)
                if deal_id is not None:
                    self.left[deal_id] -= 1
        self.hub.seal(deal for deal, n in self.left.items() if n > 0)
        self.hub.set_standings(with_every_bot(None, self.bots, self.total))
        self.refresh()

    @property
    def complete(self) -> bool:
        """Every scheduled game is recorded."""
        return all(n <= 0 for n in self.left.values())

    def on_game(self, outcome: GameOutcome) -> None:
        """A game is recorded: unseal its deal if it was the last to deal from it."""
        deal_id = outcome.spec.deal_id
        self.left[deal_id] -= 1
        if self.left[deal_id] <= 0:
            self.hub.unseal(deal_id)
        self.refresh()

    def refresh(self) -> None:
        """Recompute the standings in a thread (once more if a computation is running)."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._compute())

    def _computation(self) -> dict[str, Any] | None:
        """What :meth:`refresh` computes (in a worker thread): the standings."""
        return standings_of(self.store_path)

    def _publish(self, computed: dict[str, Any]) -> None:
        """Publish what :meth:`_computation` returned (on the loop)."""
        self.hub.set_standings(with_every_bot(computed, self.bots, self.total))

    async def _compute(self) -> None:
        while True:
            self._again = False
            started = self._clock()
            try:
                computed = await asyncio.to_thread(self._computation)
            except asyncio.CancelledError:
                raise
            except Exception:  # the page goes without fresh standings; the games go on
                LOGGER.exception("live standings not computed")
                computed = None
            if computed is not None:
                self._publish(computed)
            if not self._again:
                return
            self._resting = True
            try:
                await self._sleep(REST * (self._clock() - started))  # see the module docstring
            finally:
                self._resting = False

    async def final(self) -> None:
        """The standings once more, after the last game: wait for a computation in progress
        (and its rest), then compute them."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = asyncio.ensure_future(self._compute())
        await self._task

    async def close(self) -> None:
        """Wait for a computation in progress (its thread cannot be interrupted); one waiting
        for its rest is dropped."""
        if self._task is not None:
            if self._resting:
                self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
