"""Tests of referee.tournament.stats: Elo, pentanomial counting, intervals, LOS and the SPRT."""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.tournament.stats import (
    MAX_ELO,
    MIN_SPRT_UNITS,
    REGULARIZATION,
    Z95,
    Pentanomial,
    Trinomial,
    elo_from_score,
    estimate_games,
    estimate_pairs,
    logistic,
    pair_scores,
    pentanomial_probabilities,
    simulate_sprt,
    sprt_games,
    sprt_pairs,
)

S0, S1 = 0.5, 1.0 / (1.0 + 10.0 ** (-20.0 / 400.0))  # logistic(0), logistic(20) by hand
BOUND = math.log(19.0)  # ln((1 - 0.05) / 0.05); the lower bound is its negative

counts5 = st.tuples(*[st.integers(0, 500)] * 5).filter(lambda c: sum(c) > 0)
game_score = st.sampled_from([0.0, 0.5, 1.0])


def phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


# --- Elo ---------------------------------------------------------------------------------------


def test_logistic_known_values() -> None:
    assert logistic(0.0) == 0.5
    assert logistic(400.0 * math.log10(3.0)) == pytest.approx(0.75, abs=1e-12)
    assert logistic(-400.0 * math.log10(3.0)) == pytest.approx(0.25, abs=1e-12)
    assert logistic(400.0) == pytest.approx(10.0 / 11.0)
    assert logistic(1e6) == 1.0
    assert logistic(-1e6) == 0.0  # no OverflowError


@given(st.floats(-1500.0, 1500.0))
def test_elo_from_score_inverts_logistic(elo: float) -> None:
    assert elo_from_score(logistic(elo)) == pytest.approx(elo, abs=1e-6)
    assert logistic(-elo) == pytest.approx(1.0 - logistic(elo), abs=1e-12)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_elo_from_score_is_monotone_and_finite(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert -MAX_ELO <= elo_from_score(lo) <= elo_from_score(hi) <= MAX_ELO


def test_elo_from_score_clamps() -> None:
    assert elo_from_score(1.0) == MAX_ELO == -elo_from_score(0.0)
    assert 2399.0 < MAX_ELO < 2401.0
    assert elo_from_score(1.7) == MAX_ELO and elo_from_score(-0.2) == -MAX_ELO
    assert elo_from_score(0.75) == pytest.approx(400.0 * math.log10(3.0))
    with pytest.raises(ValueError, match="NaN"):
        elo_from_score(math.nan)


# --- counting ----------------------------------------------------------------------------------


def test_pentanomial_counts_pairs() -> None:
    p = Pentanomial.from_pair_scores([2, 1.5, 1.0, 1, 0.5, 0, 2.0, 1])
    assert p.counts == (1, 1, 3, 1, 2)
    assert (p.pairs, p.games) == (8, 16)


@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), max_size=60))
def test_pentanomial_counts_match_counter(scores: list[float]) -> None:
    p = Pentanomial.from_pair_scores(scores)
    tally = Counter(scores)
    assert p.counts == tuple(tally[v] for v in (0.0, 0.5, 1.0, 1.5, 2.0))
    assert p.pairs == len(scores) and p.games == 2 * len(scores)
    if scores:
        assert p.mean == pytest.approx(sum(scores) / (2 * len(scores)))


@pytest.mark.parametrize("bad", [0.25, 2.5, -0.5, 3, math.nan, "1", True])
def test_pentanomial_rejects_bad_pair_scores(bad: object) -> None:
    with pytest.raises(ValueError, match=r"pair score .* got " + re.escape(repr(bad))):
        Pentanomial.from_pair_scores([1.0, bad])  # type: ignore[list-item]


def test_count_classes_validate() -> None:
    with pytest.raises(ValueError, match="5 counts"):
        Pentanomial((1, 2, 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="-1"):
        Pentanomial((1, 2, -1, 0, 0))
    with pytest.raises(ValueError, match="Trinomial"):
        Trinomial(1, -2, 0)
    with pytest.raises(ValueError, match=r"0\.25"):
        Trinomial.from_scores([1, 0.25])


def test_pair_scores() -> None:
    assert pair_scores([(1, 0), (0.5, 1), (0, 0), (1, 1)]) == [1.0, 1.5, 0.0, 2.0]
    with pytest.raises(ValueError, match="2"):
        pair_scores([(1, 2)])


def test_pentanomial_mean_and_variance_by_hand() -> None:
    p = Pentanomial((1, 0, 2, 0, 1))  # pair averages 0, 0.5, 0.5, 1
    assert p.mean == 0.5
    assert p.variance_per_pair == pytest.approx(0.125)
    q = Pentanomial((5, 10, 40, 30, 15))  # averages 0, .25, .5, .75, 1
    assert q.mean == pytest.approx(0.6)
    assert q.variance_per_pair == pytest.approx(0.425 - 0.36)
    empty = Pentanomial((0, 0, 0, 0, 0))
    assert (empty.mean, empty.variance_per_pair, empty.pairs) == (0.5, 0.0, 0)


def test_trinomial_mean_and_variance_by_hand() -> None:
    t = Trinomial(wins=6, draws=2, losses=2)
    assert (t.games, t.counts) == (10, (6, 2, 2))
    assert t.mean == pytest.approx(0.7)
    assert t.variance == pytest.approx((6 * 0.09 + 2 * 0.04 + 2 * 0.49) / 10)
    assert Trinomial.from_scores([1, 0.5, 0, 1.0]) == Trinomial(2, 1, 1)


@given(st.lists(st.tuples(game_score, game_score), min_size=1, max_size=40))
def test_pairs_and_games_agree_on_the_mean(games: list[tuple[float, float]]) -> None:
    p = Pentanomial.from_pair_scores(pair_scores(games))
    t = Trinomial.from_scores([s for pair in games for s in pair])
    assert p.games == t.games
    assert p.mean == pytest.approx(t.mean)
    # Pairing only moves variance between and within pairs: the pair average never varies more.
    assert p.variance_per_pair <= t.variance + 1e-12


# --- estimates ---------------------------------------------------------------------------------


def test_estimate_pairs_by_hand() -> None:
    e = estimate_pairs(Pentanomial((5, 10, 40, 30, 15)))
    se = math.sqrt(0.065 / 100)
    assert e.score == pytest.approx(0.6)
    assert e.elo == pytest.approx(-400.0 * math.log10(1 / 0.6 - 1))
    assert e.lower == pytest.approx(elo_from_score(0.6 - Z95 * se))
    assert e.upper == pytest.approx(elo_from_score(0.6 + Z95 * se))
    assert e.los == pytest.approx(phi(0.1 / se))
    assert (e.pairs, e.games) == (100, 200)


def test_estimate_games_by_hand() -> None:
    e = estimate_games(Trinomial(6, 2, 2))
    se = math.sqrt(0.16 / 10)
    assert e.elo == pytest.approx(elo_from_score(0.7))
    assert (e.lower, e.upper) == pytest.approx(
        (elo_from_score(0.7 - Z95 * se), elo_from_score(0.7 + Z95 * se))
    )
    assert e.los == pytest.approx(phi(0.2 / se))
    assert (e.pairs, e.games) == (0, 10)


@given(counts5)
def test_interval_contains_point_and_los_is_symmetric(c: tuple[int, int, int, int, int]) -> None:
    e = estimate_pairs(Pentanomial(c))
    assert e.lower <= e.elo <= e.upper
    assert 0.0 <= e.los <= 1.0
    if e.score > 0.5:
        assert e.los > 0.5 and e.elo > 0
    mirror = estimate_pairs(Pentanomial((c[4], c[3], c[2], c[1], c[0])))
    assert mirror.elo == pytest.approx(-e.elo, abs=1e-6)
    assert (mirror.lower, mirror.upper) == pytest.approx((-e.upper, -e.lower), abs=1e-6)
    assert mirror.los == pytest.approx(1.0 - e.los, abs=1e-9)


@pytest.mark.parametrize("c", [(5, 10, 40, 30, 15), (30, 3, 40, 2, 25), (10, 10, 10, 10, 10)])
def test_interval_narrows_as_one_over_sqrt_n(c: tuple[int, int, int, int, int]) -> None:
    small = estimate_pairs(Pentanomial(c))
    large = estimate_pairs(Pentanomial((c[0] * 4, c[1] * 4, c[2] * 4, c[3] * 4, c[4] * 4)))
    assert large.elo == pytest.approx(small.elo)
    ratio = (large.upper - large.lower) / (small.upper - small.lower)
    assert ratio == pytest.approx(0.5, rel=0.05)


def test_pairing_tightens_the_interval_when_pairs_split() -> None:
    # 100 pairs: 85 split 1-1 (the deals decided them), 10 won twice, 5 lost twice; the same
    # 200 games counted unpaired. Splits are what pairing removes from the variance.
    paired = estimate_pairs(Pentanomial((5, 0, 85, 0, 10)))
    unpaired = estimate_games(Trinomial(wins=105, draws=0, losses=95))
    assert paired.score == unpaired.score == 0.525
    assert paired.upper - paired.lower < 0.6 * (unpaired.upper - unpaired.lower)


# --- degenerate inputs -------------------------------------------------------------------------


def test_degenerate_estimates() -> None:
    nothing = estimate_pairs(Pentanomial((0, 0, 0, 0, 0)))
    assert (nothing.elo, nothing.lower, nothing.upper) == (0.0, -MAX_ELO, MAX_ELO)
    assert (nothing.los, nothing.score, nothing.pairs, nothing.games) == (0.5, 0.5, 0, 0)
    assert estimate_games(Trinomial(0, 0, 0)) == nothing
    draws = estimate_pairs(Pentanomial((0, 0, 7, 0, 0)))
    assert (draws.elo, draws.lower, draws.upper, draws.los) == (0.0, 0.0, 0.0, 0.5)
    wins = estimate_pairs(Pentanomial((0, 0, 0, 0, 9)))
    assert (wins.elo, wins.lower, wins.upper, wins.los) == (MAX_ELO, MAX_ELO, MAX_ELO, 1.0)
    losses = estimate_games(Trinomial(0, 0, 9))
    assert (losses.elo, losses.lower, losses.upper, losses.los) == (-MAX_ELO,) * 3 + (0.0,)
    steady = estimate_pairs(Pentanomial((0, 0, 0, 4, 0)))  # always 1.5: score 0.75, no spread
    assert steady.elo == steady.lower == steady.upper == pytest.approx(400 * math.log10(3))
    assert steady.los == 1.0
    assert estimate_games(Trinomial(0, 5, 0)).los == 0.5


def test_degenerate_sprt() -> None:
    empty = sprt_pairs(Pentanomial((0, 0, 0, 0, 0)))
    assert (empty.llr, empty.verdict, empty.pairs, empty.games) == (0.0, "continue", 0, 0)
    assert sprt_games(Trinomial(0, 0, 0)).llr == 0.0
    n = MIN_SPRT_UNITS
    wins = sprt_pairs(Pentanomial((0, 0, 0, 0, n)))
    assert math.isfinite(wins.llr) and wins.verdict == "accept"
    assert sprt_pairs(Pentanomial((0, 0, 0, 0, n - 1))).verdict == "continue"  # too few yet
    draws = sprt_pairs(Pentanomial((0, 0, n, 0, 0)))  # dead even: not 20 Elo better
    assert math.isfinite(draws.llr) and draws.verdict == "reject"
    assert sprt_games(Trinomial(0, 0, n)).verdict == "reject"
    assert sprt_games(Trinomial(n, 0, 0)).verdict == "accept"


# --- SPRT --------------------------------------------------------------------------------------


def test_sprt_bounds_and_llr_by_hand() -> None:
    r = sprt_pairs(Pentanomial((5, 10, 40, 30, 15)))  # m = 0.6, v = 0.065, N = 100
    assert r.lower_bound == pytest.approx(-BOUND) and r.upper_bound == pytest.approx(BOUND)
    assert r.llr == pytest.approx(100 * (S1 - S0) * (2 * 0.6 - S0 - S1) / (2 * 0.065))
    assert r.verdict == "accept"
    assert (r.elo0, r.elo1, r.alpha, r.beta, r.pairs, r.games) == (0.0, 20.0, 0.05, 0.05, 100, 200)
    g = sprt_games(Trinomial(6, 2, 2), min_games=0)  # m = 0.7, v = 0.16, N = 10
    assert g.llr == pytest.approx(10 * (S1 - S0) * (2 * 0.7 - S0 - S1) / (2 * 0.16))
    assert (g.verdict, g.pairs, g.games) == ("continue", 0, 10)


def test_sprt_regularises_empty_classes_like_fishtest() -> None:
    # fishtest replaces a zero count by 1e-3 and uses the regularised total as N.
    w = [REGULARIZATION, REGULARIZATION, 60.0, REGULARIZATION, 40.0]
    x = [0.0, 0.25, 0.5, 0.75, 1.0]
    n = sum(w)
    m = sum(a * b for a, b in zip(w, x, strict=True)) / n
    v = sum(a * (b - m) ** 2 for a, b in zip(w, x, strict=True)) / n
    r = sprt_pairs(Pentanomial((0, 0, 60, 0, 40)))
    assert r.llr == pytest.approx(n * (S1 - S0) * (2 * m - S0 - S1) / (2 * v))


@given(counts5.filter(lambda c: min(c) > 0), st.integers(2, 5))
def test_llr_grows_linearly_with_the_sample(c: tuple[int, ...], k: int) -> None:
    one = sprt_pairs(Pentanomial((c[0], c[1], c[2], c[3], c[4])))
    many = sprt_pairs(Pentanomial((c[0] * k, c[1] * k, c[2] * k, c[3] * k, c[4] * k)))
    assert many.llr == pytest.approx(k * one.llr, rel=1e-9, abs=1e-9)


def test_sprt_parameters_are_validated() -> None:
    p = Pentanomial((1, 2, 3, 2, 1))
    with pytest.raises(ValueError, match="elo0"):
        sprt_pairs(p, elo0=20.0, elo1=20.0)
    with pytest.raises(ValueError, match="alpha"):
        sprt_pairs(p, alpha=0.0)
    with pytest.raises(ValueError, match="alpha"):
        sprt_games(Trinomial(1, 1, 1), alpha=1.0)
    with pytest.raises(ValueError, match="beta"):
        sprt_pairs(p, beta=1.5)
    with pytest.raises(ValueError, match="alpha \\+ beta"):
        sprt_pairs(p, alpha=0.6, beta=0.5)
    with pytest.raises(ValueError, match="min_pairs"):
        sprt_pairs(p, min_pairs=-1)
    with pytest.raises(ValueError, match="min_games"):
        sprt_games(Trinomial(1, 1, 1), min_games=-1)
    r = sprt_pairs(p, elo0=-5.0, elo1=5.0, alpha=0.01, beta=0.1)
    assert r.lower_bound == pytest.approx(math.log(0.1 / 0.99))
    assert r.upper_bound == pytest.approx(math.log(0.9 / 0.01))


# --- simulation --------------------------------------------------------------------------------


@pytest.mark.parametrize("elo", [-100.0, 0.0, 20.0, 100.0])
def test_pentanomial_probabilities_have_the_right_score(elo: float) -> None:
    probs = pentanomial_probabilities(elo, draw_rate=0.05)
    assert sum(probs) == pytest.approx(1.0)
    assert sum(p * k / 4 for k, p in enumerate(probs)) == pytest.approx(logistic(elo))
    with pytest.raises(ValueError, match="draw_rate"):
        pentanomial_probabilities(800.0, draw_rate=0.5)


def test_sprt_error_rates_at_the_hypotheses() -> None:
    h1 = simulate_sprt(20.0, 200, random.Random(1))
    assert h1.accept_rate >= 0.88
    assert h1.undecided_rate == 0.0 and h1.max_pairs < 20_000
    h0 = simulate_sprt(0.0, 200, random.Random(2))
    assert h0.accept_rate <= 0.12
    assert h0.undecided_rate == 0.0 and h0.max_pairs < 20_000


def test_sprt_decides_clear_cases_quickly() -> None:
    better = simulate_sprt(100.0, 200, random.Random(3))
    assert better.accept_rate == 1.0 and better.mean_pairs < 200 and better.max_pairs < 1000
    worse = simulate_sprt(-100.0, 200, random.Random(4))
    assert worse.reject_rate == 1.0 and worse.mean_pairs < 200 and worse.max_pairs < 1000


def test_simulation_is_reproducible_and_respects_the_cap() -> None:
    a = simulate_sprt(10.0, 20, random.Random(5), max_pairs=300)
    assert a == simulate_sprt(10.0, 20, random.Random(5), max_pairs=300)
    assert a.max_pairs <= 300
    assert a.accept_rate + a.reject_rate + a.undecided_rate == pytest.approx(1.0)
    with pytest.raises(ValueError, match="runs"):
        simulate_sprt(0.0, 0, random.Random(5))
