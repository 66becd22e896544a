"""Tests of the rating list (referee.tournament.stats.ratings) and how report.py shows it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.tournament.report import compute_standings, estimate_text, render
from referee.tournament.stats import (
    Z95,
    estimate_games,
    estimate_pairs,
    fit_ratings,
    logistic,
    perfect_units_needed,
)
from referee.tournament.stats.elo import Pentanomial, Trinomial
from referee.tournament.store import GameRow, GameSpec
from tests.tournament.search import argmax

ELO = 400 / math.log(10)


def loglik(data: dict[tuple[int, int], tuple[float, int]], r: list[float]) -> float:
    """Log-likelihood of the ratings r (draws as half wins), written out independently."""
    total = 0.0
    for (i, j), (score, games) in data.items():
        p = logistic(r[i] - r[j])
        total += score * math.log(p) + (games - score) * math.log(1 - p)
    return total


def brute_force_three(data: dict[tuple[int, int], tuple[float, int]]) -> list[float]:
    """Maximum likelihood over (r0, r1) with r2 = 0 by nested 1-D searches (the likelihood is
    concave, so the inner maximiser is unimodal in the outer variable), then mean 0."""

    def inner(r0: float) -> float:
        return argmax(lambda r1: loglik(data, [r0, r1, 0.0]), -3000, 3000)

    r0 = argmax(lambda r0: loglik(data, [r0, inner(r0), 0.0]), -3000, 3000)
    r = [r0, inner(r0), 0.0]
    mean = sum(r) / 3
    return [x - mean for x in r]


# --- known answers -----------------------------------------------------------------------------


def test_two_bots_split_the_head_to_head_elo() -> None:
    # 15 / 20: the difference is elo(0.75) = 400 log10(3), half each side of the mean.
    fit = fit_ratings(["a", "b"], {("a", "b"): (15.0, 20)})
    a, b = fit.ratings
    assert fit.status == "ok" and fit.iterations < 20
    assert a.elo == pytest.approx(200 * math.log10(3), abs=1e-7)
    assert b.elo == pytest.approx(-200 * math.log10(3), abs=1e-7)
    # Fisher information of the difference: n p (1 - p) per natural unit squared.
    se_diff = ELO / math.sqrt(20 * 0.75 * 0.25)
    assert a.upper - a.elo == pytest.approx(Z95 * se_diff / 2)  # type: ignore[operator]
    assert (a.games, b.games) == (20, 20)


def test_the_fixed_point_of_a_transitive_triangle() -> None:
    # a-b 75%, b-c 75%, a-c 90%: exactly +-400 log10(3) apart (elo(0.9) = 2 elo(0.75)).
    data = {("a", "b"): (45.0, 60), ("b", "c"): (45.0, 60), ("a", "c"): (54.0, 60)}
    fit = fit_ratings(["a", "b", "c"], data)
    step = 400 * math.log10(3)
    assert [r.elo for r in fit.ratings] == pytest.approx([step, 0.0, -step], abs=1e-6)


def test_lopsided_data_match_a_brute_force_maximisation() -> None:
    # A beat B 19-1 and C 20-0, B beat C 18-2 (20 games each). The maximum-likelihood rating of
    # A is +484; a fixed 500-step gradient loop stopped at +383 on these games.
    data = {(0, 1): (19.0, 20), (0, 2): (20.0, 20), (1, 2): (18.0, 20)}
    fit = fit_ratings(["A", "B", "C"], {("ABC"[i], "ABC"[j]): v for (i, j), v in data.items()})
    expected = brute_force_three(data)
    assert [r.elo for r in fit.ratings] == pytest.approx(expected, abs=0.05)
    assert round(fit.ratings[0].elo or 0) == 484


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=3, max_size=3), st.integers(10, 10))
def test_random_connected_data_match_brute_force(scores: list[int], games: int) -> None:
    data = {(0, 1): (float(scores[0]), games), (1, 2): (float(scores[1]), games),
            (0, 2): (float(scores[2]), games)}  # fmt: skip
    fit = fit_ratings(["x", "y", "z"], {("xyz"[i], "xyz"[j]): v for (i, j), v in data.items()})
    assert [r.elo for r in fit.ratings] == pytest.approx(brute_force_three(data), abs=0.05)
    # the score equations hold: each bot's expected score equals its actual score
    r = [x.elo or 0.0 for x in fit.ratings]
    for k in range(3):
        actual = sum(s if i == k else g - s for (i, j), (s, g) in data.items() if k in (i, j))
        expected = sum(g * logistic(r[i] - r[j]) if i == k else g * logistic(r[j] - r[i])
                       for (i, j), (s, g) in data.items() if k in (i, j))  # fmt: skip
        assert expected == pytest.approx(actual, abs=1e-6)


def test_draws_count_as_half_wins_and_orders_add_up() -> None:
    one = fit_ratings(["a", "b"], {("a", "b"): (6.5, 10)})
    two = fit_ratings(["a", "b"], {("a", "b"): (4.0, 5), ("b", "a"): (2.5, 5)})
    assert [r.elo for r in one.ratings] == pytest.approx([r.elo for r in two.ratings])


# --- what has no finite estimate ---------------------------------------------------------------


def test_a_perfect_record_has_no_finite_rating() -> None:
    fit = fit_ratings(["a", "b", "c"], {("a", "b"): (10.0, 10), ("b", "c"): (6.0, 10)})
    assert fit.status == "no finite estimate"
    assert all(r.elo is None and r.lower is None and r.upper is None for r in fit.ratings)
    assert fit.note == "no finite maximum-likelihood ratings: {a} took every point against {b, c}"


def test_groups_that_never_met_have_no_common_scale() -> None:
    fit = fit_ratings(list("abcd"), {("a", "b"): (5.0, 10), ("c", "d"): (6.0, 10)})
    assert fit.status == "no finite estimate"
    assert "never played each other" in fit.note and "{a, b}" in fit.note


def test_a_bot_without_games_is_unrated_and_no_games_is_empty() -> None:
    fit = fit_ratings(["a", "b", "idle"], {("a", "b"): (5.0, 10)})
    assert fit.status == "ok" and fit.ratings[2].elo is None and fit.ratings[2].games == 0
    assert fit.ratings[0].elo == pytest.approx(0.0, abs=1e-9)
    assert fit_ratings(["a", "b"], {}).status == "empty"


def test_prior_draws_make_separated_data_finite_and_only_when_asked() -> None:
    data = {("a", "b"): (10.0, 10)}
    fit = fit_ratings(["a", "b"], data, prior_draws=2.0)
    # 2 virtual draws: 11 / 12, so the difference is elo(11/12) exactly.
    assert fit.status == "ok"
    diff = (fit.ratings[0].elo or 0) - (fit.ratings[1].elo or 0)
    assert diff == pytest.approx(-400 * math.log10(12 / 11 - 1), abs=1e-6)
    assert fit.prior_draws == 2.0
    with pytest.raises(ValueError, match="prior_draws"):
        fit_ratings(["a", "b"], data, prior_draws=-1.0)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="impossible"):
        fit_ratings(["a", "b"], {("a", "b"): (11.0, 10)})
    with pytest.raises(ValueError, match="unknown"):
        fit_ratings(["a", "b"], {("a", "zz"): (1.0, 2)})


# --- the report --------------------------------------------------------------------------------


def rows(pairs: list[tuple[str, str, int, list[str | None]]]) -> list[GameRow]:
    """Game rows: for each (first, second, pair count, winners in order), duplicate games
    with the seats swapped inside each pair; a winner None is a draw, "" a game not played."""
    out: list[GameRow] = []
    for first, second, _count, winners in pairs:
        for k, winner in enumerate(winners):
            seats = (first, second) if k % 2 == 0 else (second, first)
            spec = GameSpec(len(out), f"{first}-vs-{second}", *seats, f"s/{k // 2}", k // 2)
            if winner == "":
                out.append(GameRow(spec, "pending", None, 0, None))
                continue
            result = {"winner": winner, "totals": [100, 50], "faults": []}
            out.append(GameRow(spec, "done", result, 1, 0.0))
    return out


def test_report_shows_no_estimate_rather_than_a_fake_interval() -> None:
    # greedy won both pairs; random-random2 only finished one game of their first pair.
    standings = compute_standings(rows([
        ("greedy", "random", 2, ["greedy"] * 4),
        ("random", "random2", 1, ["random", ""]),
    ]))  # fmt: skip
    text = render(standings)
    # Two won pairs only exclude much weaker: P(two won pairs) <= s^2, so s >= 0.158.
    assert (
        "greedy vs random: 4 games, score 1.000, won every pair (2 of 2), too few to say it is"
        " stronger at 95% (6 of 6 would; the bound is Elo > -291)"
    ) in text
    assert "random vs random2: 1 games, score 1.000, no complete duplicate pair yet" in text
    assert "LOS 50" not in text and "[-0, -0]" not in text and "[+0, +0]" not in text
    assert "no finite maximum-likelihood ratings" in text
    regularised = render(compute_standings(rows([("greedy", "random", 2, ["greedy"] * 4)]),
                                           prior_draws=2.0))  # fmt: skip
    assert "regularised by 2 virtual draws" in regularised and "n/a" not in regularised


def test_report_intervals_are_the_plain_estimates_without_a_prior() -> None:
    winners: list[str | None] = [*["a", "b"] * 10, *["a", "a"] * 3, *["b", "b"] * 2, None, "a"]
    standings = compute_standings(rows([("a", "b", 16, winners)]))
    (pairing,) = standings.pairings
    expected = estimate_pairs(Pentanomial((2, 0, 10, 1, 3)))
    assert pairing.elo == expected
    assert estimate_text(expected) in render(standings)
    json_text = render(standings, "json")
    assert '"status": "ok"' in json_text and "Infinity" not in json_text


def test_a_perfect_record_is_told_in_words_with_the_right_sign() -> None:
    """A bound above 0 says "at least"; one that is not (5 pairs: Elo > -15, which a bot equal
    to its opponent reaches with probability 1/32) says the record is too short, and how many
    perfect pairs would do: 6, the first whose bound is above 0 (a loss is the mirror)."""
    assert perfect_units_needed() == 6
    for n in (5, 6):
        lower = estimate_pairs(Pentanomial((0, 0, 0, 0, n))).lower
        assert (lower > 0) == (n >= perfect_units_needed())
    assert estimate_text(estimate_pairs(Pentanomial((0, 0, 0, 0, 50)))) == (
        "won every pair (50 of 50): at least +446 Elo (95%)"
    )
    assert estimate_text(estimate_games(Trinomial(0, 0, 50)), paired=False) == (
        "lost every game (50 of 50): at most -446 Elo (95%)"
    )
    assert estimate_text(estimate_pairs(Pentanomial((0, 0, 0, 0, 5)))) == (
        "won every pair (5 of 5), too few to say it is stronger at 95% (6 of 6 would; the "
        "bound is Elo > -15)"
    )
    assert estimate_text(estimate_pairs(Pentanomial((5, 0, 0, 0, 0)))) == (
        "lost every pair (5 of 5), too few to say it is weaker at 95% (6 of 6 would; the "
        "bound is Elo < +15)"
    )
