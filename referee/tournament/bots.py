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

A process never plays a deal it has seen: the two games of a duplicate pair share their decks
(``deal_id``), so the mirrored game is played by another process, which cannot remember the
opponent's cards from the first. A worker keeps up to :data:`KEPT_PER_BOT` processes per bot
and seats one that has not played the game's ``deal_id`` (starting a new one if none), so two
kept processes per bot alternate between the games of each pair.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from referee.match import BOT_EXIT_GRACE, Hub, MatchResult, SeatLink, release_seats
from referee.net.process import BotProcess

__all__ = ["KEPT_PER_BOT", "BotKeeper", "KeptBot"]

KEPT_PER_BOT = 2
"""Processes a worker keeps per bot: enough for the two games of a duplicate pair."""


@dataclass(frozen=True, slots=True, eq=False)
class KeptBot:
    """A running bot whose connection waits in the hub's lobby under ``token`` (compared by
    identity: it stands for one process)."""

    token: str
    process: BotProcess
    seen: set[str] = field(default_factory=set)
    """The ``deal_id`` of every game this process played. One set for the process's life,
    added to after each game: a copy per game made every game of a long pairing cost time in
    proportion to the games before it (1 ms per seat at 50,000 games, on the loop)."""


class BotKeeper:
    """One worker's kept bots, by configured bot name (see the module docstring)."""

    def __init__(self, hub: Hub, *, enabled: bool, grace: float = 1.0) -> None:
        self.hub = hub
        self.enabled = enabled
        self.grace = grace
        self.kept: dict[str, list[KeptBot]] = {}
        """Kept processes by bot name, oldest first."""
        self.reused = 0
        """Games seated on a kept process (one per seat)."""

    async def take(self, names: Sequence[str], deal_id: str) -> list[KeptBot | None]:
        """The kept bots for a game's seats (None where a new process is needed): for each
        name, a kept process that has not played ``deal_id``.

        Kept bots of names the game does not use are released first, and so is one that exited
        or left the lobby meanwhile.
        """
        await self.release(set(self.kept) - set(names))
        taken: list[KeptBot | None] = []
        for name in names:
            bots = self.kept.get(name, [])
            bot = next((b for b in bots if deal_id not in b.seen), None)
            if bot is not None:
                bots.remove(bot)
                if not bots:
                    del self.kept[name]
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

    def give_back(self, names: Sequence[str], taken: Sequence[KeptBot | None]) -> None:
        """Undo :meth:`take` for a game that could not start after all (kept again as they
        were)."""
        for name, bot in zip(names, taken, strict=True):
            if bot is not None:
                self.kept.setdefault(name, []).insert(0, bot)
                self.reused -= 1

    async def settle(
        self,
        links: Sequence[SeatLink],
        processes: Sequence[BotProcess | None],
        names: Sequence[str],
        result: MatchResult | None,
        played: Sequence[KeptBot | None],
        deal_id: str,
    ) -> None:
        """After a game: keep what may be kept (remembering that it played ``deal_id``), tear
        the rest down with ``release_seats``. ``processes[seat]`` is the seat's bot process
        (None for a remote bot); ``played`` is what :meth:`take` returned."""
        ending: list[SeatLink] = []
        ending_processes: list[BotProcess | None] = []
        surplus: list[KeptBot] = []
        for link, process, name, before in zip(links, processes, names, played, strict=True):
            if self._may_keep(link, process, result) and self.hub.retain(link):
                if process is not None:
                    seen = set() if before is None else before.seen
                    seen.add(deal_id)
                    bots = self.kept.setdefault(name, [])
                    bots.append(KeptBot(link.token, process, seen))
                    while len(bots) > KEPT_PER_BOT:
                        surplus.append(bots.pop(0))
                continue  # a remote bot: it waits in the lobby under its registered token
            ending.append(link)
            ending_processes.append(process)
        await release_seats(
            self.hub,
            ending,
            ending_processes,
            grace=self.grace,
            result=result,
            exit_grace=BOT_EXIT_GRACE,
        )
        if surplus:
            await asyncio.gather(*(self._drop(bot) for bot in surplus))

    def _may_keep(
        self, link: SeatLink, process: BotProcess | None, result: MatchResult | None
    ) -> bool:
        if not self.enabled or result is None or result.interrupted or result.error is not None:
            return False
        if result.seats[link.seat].faults:
            return False
        return process is None or process.returncode is None

    async def release(self, names: set[str] | None = None) -> None:
        """Release the kept bots named (all by default): ``bye``, then terminate."""
        chosen = list(self.kept) if names is None else [n for n in names if n in self.kept]
        bots = [bot for name in chosen for bot in self.kept.pop(name)]
        if bots:
            await asyncio.gather(*(self._drop(bot) for bot in bots))

    async def _drop(self, bot: KeptBot) -> None:
        self.hub.dismiss(bot.token)
        await bot.process.terminate(grace=self.grace)
