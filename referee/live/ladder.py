"""A ladder's live page: the games in play (as a tournament's: the same hub, the same
withholding of cards), its leaderboard as an event and as ``/leaderboard.json``.

No leak: a pair's deal is sealed from the moment its games are added (or resumed) until the
pair is rated (both games recorded), so no hand's cards are shown while a game still to be
played deals from them; the leaderboard holds names, lineage (a fingerprint, never a command
line or a token), ratings and counts. It is recomputed in a worker thread after each rated
pair, as a tournament's standings are (:class:`~referee.live.feed.TournamentFeed`: a
computation at a time, then a rest).

Behind by ``lag`` seconds (:class:`~referee.live.lag.Lag`): the games' events, the unsealing of
a pair's deal and each leaderboard (computed when its pair closed, published ``lag`` later)
reach the page ``lag`` seconds after they happen, in order; a deal is sealed at once. The page
(``/``, ``/events``, ``/snapshot``, ``/leaderboard.json``) is the ladder as it was then: it does
not say who plays now, nor who is about to be free.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.live.feed import TournamentFeed
from referee.live.hub import LiveConfig, LiveHub
from referee.live.lag import Lag, Timer
from referee.live.spectate import Spectating
from referee.match import Observer
from referee.tournament.games import GameOutcome
from referee.tournament.ladder import Pair

__all__ = ["LadderFeed", "LadderSpectating"]


class LadderFeed(TournamentFeed):
    """Seals the deals of the pairs in play; publishes the leaderboard ``board()`` computes,
    ``lag`` behind (the first, the leaderboard at the start, at once)."""

    def __init__(self, hub: LiveHub, board: Callable[[], dict[str, Any]], lag: Lag) -> None:
        super().__init__(hub, Path("/nonexistent"), [])
        self.board = board
        self.lag = lag
        self._first = True

    def start(self) -> None:
        """Publish the leaderboard so far."""
        self.refresh()

    @property
    def complete(self) -> bool:
        """Never: a ladder has no last game."""
        return False

    def on_game(self, outcome: GameOutcome) -> None:
        """A game was recorded: its deal stays sealed until its pair is rated."""

    def on_scheduled(self, pair: Pair) -> None:
        """A pair's games were added (or resumed)."""
        self.hub.seal([pair.deal_id])

    def on_pair(self, pair: Pair) -> None:
        """A pair was closed (rated, unrated or voided): its cards may be shown (once the page
        has caught up with its games); the leaderboard changed."""
        self.lag.call(lambda: self.hub.unseal(pair.deal_id))
        self.refresh()

    def _computation(self) -> dict[str, Any] | None:
        return self.board()

    def _publish(self, computed: dict[str, Any]) -> None:
        if self._first:
            self._first = False
            self.hub.set_leaderboard(computed)
        else:
            self.lag.call(lambda: self.hub.set_leaderboard(computed))


class LadderSpectating(Spectating):
    """Hub, ladder feed and HTTP server of one ladder run (an async context manager)."""

    def __init__(
        self,
        host: str,
        port: int,
        config: LiveConfig,
        board: Callable[[], dict[str, Any]],
        *,
        lag: float = 0.0,
        timer: Timer | None = None,
    ) -> None:
        """``board`` computes the leaderboard (in a worker thread); the page runs ``lag``
        seconds behind the ladder (on ``timer``: the running loop unless injected)."""
        self.lag = Lag(lag, timer)
        super().__init__(host, port, config, Path("/nonexistent"), [],
                         feed=lambda hub: LadderFeed(hub, board, self.lag))  # fmt: skip
        assert isinstance(self.feed, LadderFeed)
        self.ladder = self.feed

    def observe(self, match_id: str) -> Observer:
        """The observer of one game's record: its events reach the page ``lag`` later."""
        observe = self.hub.observer(match_id)
        return lambda event: self.lag.call(lambda: observe(event))

    async def __aexit__(self, *exc: Any) -> None:
        self.lag.close()
        await super().__aexit__(*exc)

    def on_scheduled(self, pair: Pair) -> None:
        """A pair's games were added (or resumed)."""
        self.ladder.on_scheduled(pair)

    def on_pair(self, pair: Pair) -> None:
        """A pair was rated."""
        self.ladder.on_pair(pair)
