"""Tests of referee.tournament.stats.elo: Elo, pentanomial counting, intervals and the LOS."""

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
    REGULARIZATION,
    SMALL_SAMPLE,
    TAIL,
    Z95,
    Pentanomial,
    Trinomial,
    elo_bound,
    elo_from_score,
    estimate_games,
    estimate_pairs,
    logistic,
    pair_scores,
)
from referee.tournament.stats.elo import PAIR_VALUES, closest_variance, regularized
from referee.tournament.stats.simulate import (
    game_probabilities,
    interval_coverage,
    pentanomial_probabilities,
)

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


@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), max_size=60))
def test_pentanomial_add_counts_pairs_one_at_a_time_as_a_recount_does(scores: list[float]) -> None:
    p = Pentanomial((0, 0, 0, 0, 0))
    for number, score in enumerate(scores, 1):
        p = p.add(score)
        assert p == Pentanomial.from_pair_scores(scores[:number])


@pytest.mark.parametrize("bad", [0.25, 2.5, -0.5, 3, math.nan, "1", True])
def test_pentanomial_rejects_bad_pair_scores(bad: object) -> None:
    with pytest.raises(ValueError, match=r"pair score .* got " + re.escape(repr(bad))):
        Pentanomial.from_pair_scores([1.0, bad])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"pair score .* got " + re.escape(repr(bad))):
        Pentanomial((1, 0, 0, 0, 0)).add(bad)  # type: ignore[arg-type]


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


def wilson(wins: int, n: int) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion, from its closed form."""
    p, z2 = wins / n, Z95 * Z95
    centre, half = p + z2 / (2 * n), Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (centre - half) / (1 + z2 / n), (centre + half) / (1 + z2 / n)


def z_at(counts: tuple[int, ...], values: tuple[float, ...], s: float) -> float:
    """The score statistic (mean - s) / sqrt(V(s) / N), V(s) written out independently: the
    closest distribution with mean s, found by bisection on its one multiplier."""
    n = sum(counts)
    mean = sum(c * v for c, v in zip(counts, values, strict=True)) / n
    p = [(c or REGULARIZATION) for c in counts]
    p = [w / sum(p) for w in p]
    a = [v - s for v in values]
    lo, hi = -1 / max(a) + 1e-15, -1 / min(a) - 1e-15
    for _ in range(200):
        x = (lo + hi) / 2
        if sum(pi * ai / (1 + x * ai) for pi, ai in zip(p, a, strict=True)) > 0:
            lo = x
        else:
            hi = x
    q = [pi / (1 + x * ai) for pi, ai in zip(p, a, strict=True)]
    q = [qi / sum(q) for qi in q]
    var = sum(qi * (v - s) ** 2 for qi, v in zip(q, values, strict=True))
    return (mean - s) / math.sqrt(var / n)


@pytest.mark.parametrize("c", [(5, 10, 40, 30, 15), (0, 1, 3, 2, 2), (0, 0, 3, 0, 2)])
def test_the_interval_ends_are_where_the_score_statistic_reaches_z95(
    c: tuple[int, int, int, int, int],
) -> None:
    e = estimate_pairs(Pentanomial(c))
    values = (0.0, 0.25, 0.5, 0.75, 1.0)
    assert e.score is not None and e.los is not None and e.elo is not None
    assert z_at(c, values, logistic(e.lower)) == pytest.approx(Z95, rel=1e-6)
    assert z_at(c, values, logistic(e.upper)) == pytest.approx(-Z95, rel=1e-6)
    assert e.elo == pytest.approx(elo_bound(e.score))
    assert e.los == pytest.approx(phi(z_at(c, values, 0.5)), rel=1e-9)
    assert (e.pairs, e.games) == (sum(c), 2 * sum(c))


def test_without_draws_the_interval_is_wilsons() -> None:
    # Win / loss only: the closest distribution with mean s is Bernoulli(s) (up to the 1e-3
    # weight of the empty draw class), so the interval is Wilson's score interval.
    e = estimate_games(Trinomial(7, 0, 3))
    low, high = wilson(7, 10)
    assert (logistic(e.lower), logistic(e.upper)) == pytest.approx((low, high), abs=2e-4)
    assert e.elo == pytest.approx(elo_from_score(0.7))
    assert (e.pairs, e.games) == (0, 10)


def test_los_is_above_975_exactly_when_the_interval_is_above_0() -> None:
    for c in [(0, 1, 3, 2, 2), (0, 0, 3, 0, 7), (1, 2, 10, 6, 5), (0, 0, 40, 3, 0)]:
        e = estimate_pairs(Pentanomial(c))
        assert e.los is not None
        assert (e.los > 0.975) == (e.lower > 0), c


@given(counts5)
def test_interval_contains_point_and_los_is_symmetric(c: tuple[int, int, int, int, int]) -> None:
    e = estimate_pairs(Pentanomial(c))
    if e.status == "no finite estimate":
        assert e.elo is None and e.los is None and math.inf in (e.upper, -e.lower)
        return
    assert e.elo is not None and e.los is not None and e.score is not None
    assert e.lower <= e.elo <= e.upper
    assert 0.0 <= e.los <= 1.0
    if e.score > 0.5:
        assert e.los > 0.5 and e.elo > 0
    mirror = estimate_pairs(Pentanomial((c[4], c[3], c[2], c[1], c[0])))
    assert mirror.elo is not None and mirror.los is not None
    assert mirror.elo == pytest.approx(-e.elo, abs=1e-6)
    assert (mirror.lower, mirror.upper) == pytest.approx((-e.upper, -e.lower), abs=1e-6)
    assert mirror.los == pytest.approx(1.0 - e.los, abs=1e-9)


@pytest.mark.parametrize("c", [(1, 352, 0, 32, 32), (32, 352, 32, 32, 32)])
def test_a_newton_step_onto_a_pole_is_not_taken_for_the_root(
    c: tuple[int, int, int, int, int],
) -> None:
    """Counts the exploring profile of the symmetry test above found: at s = 1/2 the first
    Newton step of the secular equation lands a hair inside its bracket, beside the pole of the
    class scoring 1/2, where the step is tiny too; taken for the root, the variance there was
    about 4e13, so the LOS came out 50% (and a mirror's interval end 0) instead of about 0."""
    e = estimate_pairs(Pentanomial(c))
    mirror = estimate_pairs(Pentanomial((c[4], c[3], c[2], c[1], c[0])))
    assert e.los is not None and mirror.los is not None
    assert e.los < 1e-12 and mirror.los > 1 - 1e-12
    assert e.upper < -90 and mirror.lower > 90
    assert (mirror.lower, mirror.upper) == pytest.approx((-e.upper, -e.lower), abs=1e-6)
    assert closest_variance(regularized(c)[1], PAIR_VALUES, 0.5) < 0.25  # at most (1/2)^2


@pytest.mark.parametrize("c", [(5, 10, 40, 30, 15), (30, 3, 40, 2, 25), (10, 10, 10, 10, 10)])
def test_interval_narrows_as_one_over_sqrt_n(c: tuple[int, int, int, int, int]) -> None:
    small = estimate_pairs(Pentanomial(c))
    large = estimate_pairs(Pentanomial((c[0] * 4, c[1] * 4, c[2] * 4, c[3] * 4, c[4] * 4)))
    assert large.elo is not None and small.elo is not None
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


# --- what cannot be estimated --------------------------------------------------------------


def test_nothing_to_estimate_is_empty_not_zero() -> None:
    nothing = estimate_pairs(Pentanomial((0, 0, 0, 0, 0)))
    assert nothing.status == "empty"
    assert (nothing.elo, nothing.los, nothing.score) == (None, None, None)
    assert (nothing.lower, nothing.upper) == (-math.inf, math.inf)
    assert (nothing.pairs, nothing.games) == (0, 0)
    assert estimate_games(Trinomial(0, 0, 0)).status == "empty"


@pytest.mark.parametrize("n", [1, 9, 50, 100])
def test_a_perfect_record_has_a_one_sided_bound_and_no_estimate(n: int) -> None:
    wins = estimate_pairs(Pentanomial((0, 0, 0, 0, n)))
    assert wins.status == "no finite estimate" and wins.elo is None and wins.los is None
    assert wins.upper == math.inf
    # Markov: P(all n pairs won) <= s^n, so s >= 0.025^(1/n) at 97.5% confidence.
    assert wins.lower == pytest.approx(-400 * math.log10(1 / TAIL ** (1 / n) - 1))
    assert wins.lower < MAX_ELO  # never past the clamp, never a zero-width interval
    losses = estimate_games(Trinomial(0, 0, n))
    assert losses.status == "no finite estimate"
    assert losses.lower == -math.inf and losses.upper == pytest.approx(-wins.lower)
    if n == 50:
        assert round(wins.lower) == 446  # 50 pairs won twice: > +446 at 95%


def test_the_one_sided_bound_holds_its_level_by_simulation() -> None:
    # The worst case for the bound: at the bound's score s, pairs are WW with probability s and
    # LL otherwise, and a perfect record has probability s^n = TAIL exactly (other models with
    # mean s make it rarer: P(WW) <= s). So the bound is exact there, and conservative elsewhere.
    rng = random.Random(7)
    n, runs = 10, 20_000
    s = logistic(estimate_pairs(Pentanomial((0, 0, 0, 0, n))).lower)
    assert s**n == pytest.approx(TAIL)
    perfect = sum(all(rng.random() < s for _ in range(n)) for _ in range(runs))
    sampling = 3 * math.sqrt(TAIL * (1 - TAIL) / runs)
    assert abs(perfect / runs - TAIL) <= sampling


def test_no_spread_still_has_an_interval_that_narrows_with_more_pairs() -> None:
    steady = estimate_pairs(Pentanomial((0, 0, 0, 4, 0)))  # always 1.5: score 0.75
    assert steady.status == "no spread"
    assert steady.elo == pytest.approx(400 * math.log10(3))
    assert steady.elo is not None and steady.lower < steady.elo < steady.upper < math.inf
    splits = estimate_pairs(Pentanomial((0, 0, 50, 0, 0)))
    assert splits.status == "no spread" and splits.elo == 0.0 and splits.los == 0.5
    assert splits.lower == pytest.approx(-splits.upper) and 10 < splits.upper < 50
    more = estimate_pairs(Pentanomial((0, 0, 200, 0, 0)))
    assert more.upper < splits.upper / 3


def test_only_a_perfect_record_has_an_unbounded_end() -> None:
    # 3 pairs won twice and one 1.5: Wald's interval ran to +inf here; the score interval's
    # upper end is where a higher score would need less spread than the sample shows.
    e = estimate_pairs(Pentanomial((0, 0, 0, 1, 3)))
    assert e.status == "ok" and math.isfinite(e.lower) and math.isfinite(e.upper)
    assert e.lower < e.elo < e.upper  # type: ignore[operator]
    assert elo_bound(0.0) == -math.inf and elo_bound(1.0) == math.inf
    assert elo_bound(0.75) == pytest.approx(elo_from_score(0.75))


# --- coverage ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "elo", "units"),
    [("independent", 0, 5), ("independent", 0, 10), ("independent", 300, 5),
     ("independent", 300, 10), ("independent", 600, 8), ("duplicate", 100, 5),
     ("games", 0, 10), ("games", 200, 10), ("games", 600, 10)],
)  # fmt: skip
def test_the_95_interval_covers_at_least_94_percent_from_10_games(
    model: str, elo: float, units: int
) -> None:
    # Exact: every possible sample weighted by its probability (bench/bench_intervals.py
    # prints the whole table). Wald's interval gave 88.6%, 89.7%, 88.3% and 87.5% on the first
    # four.
    if model == "games":
        probs: tuple[float, ...] = game_probabilities(elo, 0.05)
    else:
        probs = pentanomial_probabilities(elo, 0.05, luck=0.5 if model == "duplicate" else 0.0)
    assert interval_coverage(probs, units, elo) >= 0.94


def test_fewer_than_five_pairs_or_ten_games_are_too_few() -> None:
    assert SMALL_SAMPLE == 10
    assert estimate_pairs(Pentanomial((0, 0, 0, 1, 1))).too_few
    assert estimate_pairs(Pentanomial((0, 0, 0, 0, 2))).too_few  # a perfect record too
    assert not estimate_pairs(Pentanomial((0, 0, 3, 0, 2))).too_few
    assert estimate_games(Trinomial(6, 2, 1)).too_few
    assert not estimate_games(Trinomial(6, 2, 2)).too_few
    assert not estimate_pairs(Pentanomial((0, 0, 0, 0, 0))).too_few  # empty says so itself
