"""The live page of one tournament run: its hub, feed and server, started and closed together.

The command line's ``--spectate HOST:PORT`` makes one :class:`Spectating` around a
:class:`~referee.tournament.runner.TournamentRun`: give the run :attr:`observe` and call
:meth:`on_game` for every recorded game. Leaving the context normally ends the event on the page
(:meth:`Spectating.finish`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

from referee.live.feed import TournamentFeed
from referee.live.hub import LiveConfig, LiveHub
from referee.live.server import LiveServer
from referee.match import Observer
from referee.tournament.runner import GameOutcome
from referee.tournament.store import GameSpec

__all__ = ["Spectating"]


class Spectating:
    """Hub, tournament feed and HTTP server of one run (an async context manager)."""

    def __init__(
        self,
        host: str,
        port: int,
        config: LiveConfig,
        store_path: Path,
        games: Sequence[GameSpec],
        *,
        feed: Callable[[LiveHub], TournamentFeed] | None = None,
    ) -> None:
        """``feed`` makes the run's feed around the hub (default: the tournament's)."""
        self.hub = LiveHub(config)
        self.feed = TournamentFeed(self.hub, store_path, games) if feed is None else feed(self.hub)
        self.server = LiveServer(self.hub, host, port)
        self.url = ""

    def observe(self, match_id: str) -> Observer:
        """The observer of one game's record (``TournamentRun(observe=...)``)."""
        return self.hub.observer(match_id)

    def on_game(self, outcome: GameOutcome) -> None:
        """A game was recorded."""
        self.feed.on_game(outcome)

    async def __aenter__(self) -> Spectating:
        self.url = await self.server.start()
        try:
            self.feed.start()
        except BaseException:
            await self.server.close()
            raise
        return self

    async def finish(self) -> None:
        """The run has ended: publish the final standings and, once every game is played and
        spectators are watching, wait (at most the card delay) for the last hands' cards; then
        tell the page the event is over (it stops reconnecting)."""
        await self.feed.final()
        complete = self.feed.complete
        if complete and self.hub.spectators:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.hub.config.delay + 5.0):
                    await self.hub.released()
        self.hub.finish(complete=complete)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and not self.hub.closed and not self.hub.over:
            await self.finish()
        await self.server.close()
        await self.feed.close()
