"""The ``sprt`` command's running test: pairs counted as they complete, one decision."""

from __future__ import annotations

import argparse
import asyncio

from referee.cli.sprt import _SprtTracker
from referee.tournament.games import GameOutcome
from referee.tournament.stats import Pentanomial, sprt_pairs
from referee.tournament.store import GameSpec

ARGS = argparse.Namespace(elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05, min_pairs=1,
                          elo_model="logistic")  # fmt: skip


def _game(pair: int, seat: int, winner: str | None) -> GameOutcome:
    seats = ("candidate", "baseline") if seat == 0 else ("baseline", "candidate")
    spec = GameSpec(2 * pair + seat, "candidate-vs-baseline", *seats, f"p{pair}", pair)
    return GameOutcome(spec, {"seats": list(seats), "winner": winner})


def test_the_test_decides_once_and_later_games_do_not_take_the_decision_back() -> None:
    tracker = _SprtTracker(ARGS, asyncio.Event())
    pair = 0
    while tracker.result is None or tracker.result.verdict == "continue":
        for seat in (0, 1):  # the candidate wins both games of every pair
            tracker.on_game(_game(pair, seat, "candidate"))
        pair += 1
        assert pair < 1000
    decided = tracker.result
    assert decided.verdict == "accept" and tracker.stop.is_set()
    assert tracker.pairs == Pentanomial((0, 0, 0, 0, pair))
    assert decided == sprt_pairs(tracker.pairs, elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05,
                                 min_pairs=1, elo_model="logistic")  # fmt: skip
    for later in range(pair, pair + 50):  # games that end after the decision: all lost
        for seat in (0, 1):
            tracker.on_game(_game(later, seat, "baseline"))
    assert tracker.result == decided
    assert tracker.pairs == Pentanomial((0, 0, 0, 0, pair))
