"""The ``eaai`` preset against the EAAI Gin Rummy framework's documented game: gin 25 plus
the defender's deadwood, a knock scores the difference, an undercut (a tie included) 25 plus
the difference, a knock needs deadwood of 10 or less, no big gin, a game is hand points to 100
with nothing added, the starting player alternates after each scored hand and a cancelled
hand (two cards left in the stock) is dealt again by the same."""

from __future__ import annotations

import random

from referee.rules import (
    EAAI,
    BigGin,
    HandResult,
    Phase,
    RuleSet,
    Termination,
    apply,
    deal,
    final_score,
    legal_actions,
    new_game,
    record_hand,
    score_hand,
    shuffled_deck,
)


def test_hand_scores_are_the_frameworks() -> None:
    gin = score_hand(EAAI, knocker_deadwood=0, defender_deadwood=17, gin=True)
    assert (gin.termination, gin.points) == (Termination.GIN, 25 + 17)
    knock = score_hand(EAAI, knocker_deadwood=4, defender_deadwood=19)
    assert (knock.termination, knock.knocker_wins, knock.points) == (Termination.KNOCK, True, 15)
    under = score_hand(EAAI, knocker_deadwood=9, defender_deadwood=5)
    assert (under.termination, under.knocker_wins) == (Termination.UNDERCUT, False)
    assert under.points == 25 + 4
    tie = score_hand(EAAI, knocker_deadwood=7, defender_deadwood=7)
    assert (tie.termination, tie.points) == (Termination.UNDERCUT, 25)
    assert EAAI.knock_limit == 10 and EAAI.target == 100


def test_no_big_gin_is_ever_offered() -> None:
    """Eleven melded cards after a draw: the framework asks for a discard, so does the preset."""
    rng = random.Random(4)
    offered = 0
    for _ in range(300):
        state = deal(EAAI, shuffled_deck(rng), dealer=0)
        while not state.is_over:
            actions = legal_actions(state)
            assert not any(isinstance(a, BigGin) for a in actions)
            offered += state.phase is Phase.DISCARD
            state = apply(state, rng.choice(actions))
    assert offered > 1000


def test_a_game_is_hand_points_to_100_with_nothing_added() -> None:
    game = new_game(EAAI, first_dealer=0)
    for points in (40, 35, 30):
        game = record_hand(game, HandResult(Termination.KNOCK, 1, points, knocker=1))
    assert game.is_over and game.winner == 1
    score = final_score(game)
    assert score.totals == (0, 105) and score.margin == 105  # no game, box or shutout bonus


def test_the_starting_player_alternates_after_scored_hands_only() -> None:
    game = new_game(EAAI, first_dealer=1)  # seat 0 starts (the non-dealer plays first)
    dealers = [game.dealer]
    for result in (
        HandResult(Termination.KNOCK, 0, 10, knocker=0),  # scored: the other starts
        HandResult(Termination.WALL, None, 0),  # cancelled: the same deal again
        HandResult(Termination.UNDERCUT, 0, 25, knocker=1),  # scored, whoever won
        HandResult(Termination.GIN, 0, 30, knocker=0),
    ):
        game = record_hand(game, result)
        dealers.append(game.dealer)
    assert dealers == [1, 0, 0, 1, 0]


def test_a_table_names_any_other_variant() -> None:
    rules = RuleSet.from_table({"preset": "eaai", "target": 50, "undercut_bonus": 10})
    assert (rules.name, rules.target, rules.undercut_bonus, rules.big_gin_bonus) == (
        "eaai-custom",
        50,
        10,
        None,
    )
