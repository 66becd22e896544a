"""The bot keeper's memory of deals: a kept process never plays a deal twice, over a long run.

The end-to-end proof with real processes is in ``test_tournament_deals.py``; here the keeper
alone plays many games with stand-ins for the hub, seats and processes, which lets a test go
to thousands of games.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import pytest

from referee.match import Hub, MatchResult, SeatLink
from referee.match.result import SeatSummary
from referee.net.process import BotProcess
from referee.tournament.bots import BotKeeper

pytestmark = pytest.mark.timeout(60)


@dataclass
class _Link:
    token: str
    seat: int


@dataclass
class _Process:
    returncode: int | None = None


class _Hub:
    """Keeps every seat it is asked to retain; every kept token is in the lobby."""

    def retain(self, link: object) -> bool:
        return True

    def is_available(self, token: str) -> bool:
        return True


def _result() -> MatchResult:
    seats = (SeatSummary("a"), SeatSummary("b"))
    return MatchResult(match_id="m", winner=0, reason="normal", games_played=1, seats=seats)


async def _play(keeper: BotKeeper, deal_id: str, tokens: list[str]) -> list[str]:
    """One game of bots a and b on ``deal_id``: take, then settle as a clean game does;
    the tokens of the processes that played it."""
    taken = await keeper.take(["a", "b"], deal_id)
    links = []
    processes = []
    for seat, bot in enumerate(taken):
        if bot is None:  # a new process, with a new token
            tokens.append(f"t{len(tokens)}")
            links.append(_Link(tokens[-1], seat))
            processes.append(_Process())
        else:
            links.append(_Link(bot.token, seat))
            processes.append(cast(Any, bot.process))
    await keeper.settle(
        cast(list[SeatLink], links),
        cast(list[BotProcess], processes),
        ["a", "b"],
        _result(),
        taken,
        deal_id,
    )
    return [link.token for link in links]


def test_kept_processes_alternate_and_never_replay_a_deal_over_thousands_of_games() -> None:
    async def run() -> None:
        keeper = BotKeeper(cast(Hub, _Hub()), enabled=True)
        tokens: list[str] = []
        played: dict[str, set[str]] = {}
        pairs = 3000
        for pair in range(pairs):
            for _twin in range(2):  # the two games of a duplicate pair share their deal
                deal_id = f"d{pair}"
                for token in await _play(keeper, deal_id, tokens):
                    assert deal_id not in played.setdefault(token, set())
                    played[token].add(deal_id)
        # Two processes per bot (one per game of a pair) played every game: none was started
        # after the first pair, and each saw each deal once.
        assert len(tokens) == 4
        assert keeper.reused == 2 * (2 * pairs) - 4
        for name in ("a", "b"):
            assert [len(kept.seen) for kept in keeper.kept[name]] == [pairs, pairs]
            assert all(kept.seen == played[kept.token] for kept in keeper.kept[name])

    asyncio.run(run())


def test_a_kept_process_keeps_one_record_of_its_deals_for_its_whole_life() -> None:
    """The deals a process played are added to, never copied per game: a copy per game cost
    each game time in proportion to the games before it (1 ms per seat at 50,000 games)."""

    async def run() -> None:
        keeper = BotKeeper(cast(Hub, _Hub()), enabled=True)
        tokens: list[str] = []
        await _play(keeper, "d0", tokens)
        first = keeper.kept["a"][0]
        for number in range(1, 50):
            await _play(keeper, f"d{number}", tokens)
        same = [kept for kept in keeper.kept["a"] if kept.token == first.token]
        assert len(same) == 1
        assert same[0].seen is first.seen
        assert "d0" in same[0].seen

    asyncio.run(run())
