"""The live page of one tournament run: its hub, feed and server, started and closed together.

The command line's ``--spectate HOST:PORT`` makes one :class:`Spectating` around a
:class:`~referee.tournament.runner.TournamentRun`: give the run :attr:`observe` and call
:meth:`on_game` for every recorded game.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    ) -> None:
        self.hub = LiveHub(config)
        self.feed = TournamentFeed(self.hub, store_path, games)
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

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.server.close()
        await self.feed.close()
