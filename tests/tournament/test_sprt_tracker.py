"""The ``sprt`` command's running test: pairs counted as they complete, one decision."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from referee.cli.sprt import _SprtTracker
from referee.match import TimeControl
from referee.rules import RuleSet
from referee.tournament.config import BotEntry, TournamentConfig
from referee.tournament.games import GameOutcome, schedule
from referee.tournament.stats import Pentanomial, sprt_pairs
from referee.tournament.store import GameSpec, SqliteStore

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


def _llr_crossing(score: float) -> int:
    """Pairs all scoring ``score`` after which the test (ARGS) decides."""
    pairs = Pentanomial((0, 0, 0, 0, 0))
    for number in range(1, 1000):
        pairs = pairs.add(score)
        verdict = sprt_pairs(pairs, elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05, min_pairs=1,
                             elo_model="logistic").verdict  # fmt: skip
        if verdict != "continue":
            return number
    raise AssertionError("no decision")


def test_a_resumed_test_follows_the_order_the_games_were_recorded_in(tmp_path: Path) -> None:
    """The stored pairs are replayed in the order they were recorded, not by game number: the
    first pairs by number were all lost but recorded last, so the test decides as the run did,
    on the pairs won first."""
    lost, won = _llr_crossing(0.0), _llr_crossing(2.0)
    config = TournamentConfig(
        name="sprt",
        bots=(BotEntry("candidate", "x"), BotEntry("baseline", "y")),
        format="gauntlet",
        games_per_pairing=2 * (lost + won),
        duplicate=True,
        seed=1,
        rules=RuleSet.preset("standard"),
        time=TimeControl(),
    )
    store = SqliteStore.open(tmp_path / "tournament.sqlite")
    store.init_tournament(config=config.to_dict(), config_hash=config.config_hash,
                          games=schedule(config), now=0.0)  # fmt: skip
    claims = []
    while (claim := store.claim(owner="t", lease_seconds=60.0, now=1.0)) is not None:
        claims.append(claim)
    for claim in claims:
        spec = claim.game
        assert spec.pair_index is not None
        first_pairs_lost = spec.pair_index < lost
        winner = "baseline" if first_pairs_lost else "candidate"
        when = 1000.0 + spec.game_id if first_pairs_lost else 10.0 + spec.game_id
        result = {"seats": [spec.seat0, spec.seat1], "winner": winner}
        assert store.record(claim, result=result, faults=[], timings=None, now=when)
    store.close()
    tracker = _SprtTracker(ARGS, asyncio.Event())
    tracker.resume_from(tmp_path)
    assert tracker.result is not None and tracker.result.verdict == "accept"
    assert tracker.pairs == Pentanomial((0, 0, 0, 0, won))
    assert tracker.stop.is_set()
