"""Bot processes a tournament worker keeps between games (``multi_match`` connections).

Starting a process costs more than many decisions, and a worker usually plays the same
pairing again (``Store.claim`` prefers it). So when ``tournament.reuse_bots`` is on, a bot
granted ``multi_match`` that ended its game cleanly (no fault, still running) stays connected
in the hub's lobby, and the worker's next game seats that connection again instead of starting
a new process. Everything else is torn down as before: a seat with any fault, a bot that
exited, an interrupted game, and every kept bot that the next game does not need (``bye``,
then SIGTERM and SIGKILL of its process group).

A kept bot gets each game's ``seed`` in ``match_start``, so a bot that reseeds from it plays
a game the same way whichever games its process played before: results, and a resumed
tournament's results, do not depend on which processes were kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from referee.match.hub import Hub
from referee.match.result import MatchResult
from referee.match.runner import release_seats
from referee.match.seat import SeatLink
from referee.net.process import BotProcess

__all__ = ["BotKeeper", "KeptBot"]


@dataclass(frozen=True, slots=True)
class KeptBot:
    """A running bot whose connection waits in the hub's lobby under ``token``."""

    token: str
    process: BotProcess


class BotKeeper:
    """One worker's kept bots, by configured bot name (see the module docstring)."""

    def __init__(self, hub: Hub, *, enabled: bool, grace: float = 1.0) -> None:
        self.hub = hub
        self.enabled = enabled
        self.grace = grace
        self.kept: dict[str, KeptBot] = {}
        self.reused = 0
        """Games seated on a kept process (one per seat)."""

    async def take(self, names: Sequence[str]) -> list[KeptBot | None]:
        """The kept bots for a game's seats (None where a new process is needed).

        Kept bots the game does not use are released first, and so is one that exited or
        left the lobby meanwhile.
        """
        await self.release(set(self.kept) - set(names))
        taken: list[KeptBot | None] = []
        for name in names:
            bot = self.kept.pop(name, None)
            usable = (
                bot is not None
                and bot.process.returncode is None
                and self.hub.is_available(bot.token)
            )
            if bot is not None and not usable:
                await self._drop(bot)
                bot = None
            if bot is not None:
                self.reused += 1
            taken.append(bot)
        return taken

    async def settle(
        self, links: Sequence[SeatLink], names: Sequence[str], result: MatchResult | None
    ) -> None:
        """After a game: keep what may be kept, tear the rest down with ``release_seats``."""
        ending: list[SeatLink] = []
        for link, name in zip(links, names, strict=True):
            if self._may_keep(link, result) and self.hub.retain(link):
                if link.process is not None:
                    self.kept[name] = KeptBot(link.token, link.process)
                continue  # a remote bot: it waits in the lobby under its registered token
            ending.append(link)
        await release_seats(self.hub, ending, grace=self.grace)

    def _may_keep(self, link: SeatLink, result: MatchResult | None) -> bool:
        if not self.enabled or result is None or result.interrupted:
            return False
        if result.seats[link.seat].faults:
            return False
        return link.process is None or link.process.returncode is None

    async def release(self, names: set[str] | None = None) -> None:
        """Release the kept bots named (all by default): ``bye``, then terminate."""
        chosen = list(self.kept) if names is None else [n for n in names if n in self.kept]
        bots = [self.kept.pop(name) for name in chosen]
        if bots:
            await asyncio.gather(*(self._drop(bot) for bot in bots))

    async def _drop(self, bot: KeptBot) -> None:
        self.hub.dismiss(bot.token)
        await bot.process.terminate(grace=self.grace)
