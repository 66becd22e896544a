"""Tests of the exact GSPRT (referee.tournament.stats.sprt) and its validation by simulation."""

from __future__ import annotations

import bisect
import itertools
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.tournament.stats import (
    NELO_PER_T,
    REGULARIZATION,
    Pentanomial,
    Trinomial,
    fishtest_prediction,
    llr_logistic,
    llr_normalized,
    logistic,
    pentanomial_probabilities,
    simulate_sprt,
    sprt_pairs,
)
from referee.tournament.stats.elo import GAME_VALUES, PAIR_VALUES, mle_with_mean, moments
from referee.tournament.stats.sprt import llr, mle_with_t
from tests.tournament.search import argmax


def llr_normal_approximation(
    counts: tuple[int, ...], values: tuple[float, ...], s0: float, s1: float
) -> float:
    """The normal approximation N (s1 - s0)(2m - s0 - s1) / (2v) (fishtest's ``LLR_alt2``) on
    regularised counts: the referee does not use it; kept here to show how it overshoots."""
    n, mean, var = moments(counts, values, REGULARIZATION)
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


BOUND = math.log(19.0)  # ln((1 - 0.05) / 0.05); the lower bound is its negative
counts5 = st.tuples(*[st.integers(0, 500)] * 5).filter(lambda c: sum(c) > 0)


def trinomial_profile(counts: tuple[int, int, int], s: float) -> float:
    """max sum c_i ln q_i over (win, draw, loss) distributions with mean score s, by a 1-D
    search: q_draw = d, q_win = s - d/2, q_loss = 1 - s - d/2."""
    w, dr, lo = counts

    def loglik(d: float) -> float:
        qw, ql = s - d / 2, 1 - s - d / 2
        return w * math.log(qw) + dr * math.log(d) + lo * math.log(ql)

    return loglik(argmax(loglik, 1e-12, 2 * min(s, 1 - s) - 1e-12, steps=200))


# --- the exact LLR against independent computations ------------------------------------------


@pytest.mark.parametrize("counts", [(30, 10, 20), (5, 0, 1), (40, 55, 41), (1, 1, 1)])
@pytest.mark.parametrize(("elo0", "elo1"), [(0.0, 10.0), (-5.0, 5.0), (0.0, 40.0)])
def test_trinomial_llr_is_the_likelihood_ratio_of_the_best_distributions(
    counts: tuple[int, int, int], elo0: float, elo1: float
) -> None:
    reg = tuple(float(c) if c else REGULARIZATION for c in counts)
    s0, s1 = logistic(elo0), logistic(elo1)

    def profile(s: float) -> float:
        return trinomial_profile(reg, s)  # type: ignore[arg-type]

    expected = profile(s1) - profile(s0)
    assert llr_logistic(counts, GAME_VALUES, s0, s1) == pytest.approx(expected, abs=1e-7)
    games = Trinomial(*counts).counts
    assert llr(games, GAME_VALUES, elo0, elo1, "logistic") == pytest.approx(expected, abs=1e-7)


@given(counts5, st.floats(0.05, 0.95))
def test_pentanomial_mle_satisfies_the_optimality_conditions(c: tuple[int, ...], s: float) -> None:
    # The maximum of sum p_i ln q_i subject to sum q_i = 1 and sum q_i v_i = s is the q with
    # those moments and p_i / q_i affine in v_i (Lagrange); check both, not the formula.
    weights = [float(x) if x else REGULARIZATION for x in c]
    p = [w / sum(weights) for w in weights]
    q = mle_with_mean(p, PAIR_VALUES, s)
    assert all(x > 0 for x in q)
    assert sum(q) == pytest.approx(1.0, abs=1e-9)
    assert sum(x * v for x, v in zip(q, PAIR_VALUES, strict=True)) == pytest.approx(s, abs=1e-9)
    ratios = [a / b for a, b in zip(p, q, strict=True)]
    slope = (ratios[4] - ratios[0]) / (PAIR_VALUES[4] - PAIR_VALUES[0])
    for r, v in zip(ratios, PAIR_VALUES, strict=True):
        assert r == pytest.approx(ratios[0] + slope * v, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("c", [(5, 10, 40, 30, 15), (1, 0, 30, 0, 2), (20, 20, 20, 20, 20)])
@pytest.mark.parametrize("t", [-0.1, 0.0, 0.05, 0.2])
def test_normalized_mle_satisfies_the_optimality_conditions(c: tuple[int, ...], t: float) -> None:
    # Maximise sum p_i ln q_i subject to sum q_i = 1 and (mu - 1/2) - t sigma = 0. The
    # constraint's gradient is v_i - t ((v_i - mu)^2 - mu^2) / (2 sigma), so at the optimum
    # p_i / q_i is affine in h_i = v_i - t (v_i - mu)^2 / (2 sigma) (Lagrange).
    weights = [float(x) if x else REGULARIZATION for x in c]
    p = [w / sum(weights) for w in weights]
    q = mle_with_t(p, PAIR_VALUES, 0.5, t)
    mu = sum(x * v for x, v in zip(q, PAIR_VALUES, strict=True))
    sigma = math.sqrt(sum(x * (v - mu) ** 2 for x, v in zip(q, PAIR_VALUES, strict=True)))
    assert sum(q) == pytest.approx(1.0, abs=1e-9)
    assert (mu - 0.5) / sigma == pytest.approx(t, abs=1e-9)
    h = [v - t * (v - mu) ** 2 / (2 * sigma) for v in PAIR_VALUES]
    r = [a / b for a, b in zip(p, q, strict=True)]
    slope = (r[4] - r[0]) / (h[4] - h[0])
    for ri, hi in zip(r, h, strict=True):
        assert ri == pytest.approx(r[0] + slope * (hi - h[0]), rel=1e-6, abs=1e-9)


def test_normalized_llr_approaches_fishtests_closed_form_for_large_samples() -> None:
    # fishtest's LLR_normalized_alt: (games / 2) ln((1 + (nt - nt0)^2) / (1 + (nt - nt1)^2)),
    # nt = (mu - 1/2) / per-game sd. Close to the exact value when elo0, elo1 are small.
    c = (400, 2000, 5200, 2200, 600)
    nelo0, nelo1 = 0.0, 5.0
    n = sum(c)
    mu = sum(k * x / 4 for k, x in enumerate(c)) / n
    var = sum(x * (k / 4 - mu) ** 2 for k, x in enumerate(c)) / n
    nt = (mu - 0.5) / math.sqrt(2 * var)
    nt0, nt1 = nelo0 / NELO_PER_T, nelo1 / NELO_PER_T
    alt = n * math.log((1 + (nt - nt0) ** 2) / (1 + (nt - nt1) ** 2))  # games / 2 = pairs
    exact = sprt_pairs(Pentanomial(c), elo0=nelo0, elo1=nelo1, elo_model="normalized").llr
    assert exact == pytest.approx(alt, rel=0.02)
    t0, t1 = math.sqrt(2) * nt0, math.sqrt(2) * nt1
    assert llr_normalized(c, PAIR_VALUES, t0, t1) == pytest.approx(exact)


# --- the case in issue 15 ----------------------------------------------------------------------


def test_fifty_pairs_won_twice_do_not_prove_ten_elo_yet() -> None:
    # greedy vs random: 100 games, every pair won twice. The normal approximation divides by a
    # variance that is only regularisation, and "accepts"; the exact GSPRT does not (yet).
    p = Pentanomial((0, 0, 0, 0, 50))
    s0, s1 = logistic(0.0), logistic(10.0)
    assert llr_normal_approximation(p.counts, PAIR_VALUES, s0, s1) == pytest.approx(
        9454.65, abs=0.01
    )
    r = sprt_pairs(p, elo0=0.0, elo1=10.0)
    assert r.llr == pytest.approx(1.42, abs=0.005)
    assert r.verdict == "continue" and r.upper_bound == pytest.approx(BOUND)
    # More of the same does prove it: the exact LLR grows linearly with the sample.
    more = sprt_pairs(Pentanomial((0, 0, 0, 0, 110)), elo0=0.0, elo1=10.0)
    assert more.verdict == "accept"


def test_regularisation_is_fishtests() -> None:
    # An empty class weighs 1e-3 and N is the regularised total.
    c = (0, 0, 60, 0, 40)
    weights = [REGULARIZATION, REGULARIZATION, 60.0, REGULARIZATION, 40.0]
    n = sum(weights)
    p = [w / n for w in weights]
    q0 = mle_with_mean(p, PAIR_VALUES, logistic(0.0))
    q1 = mle_with_mean(p, PAIR_VALUES, logistic(20.0))
    expected = n * sum(a * math.log(b / c) for a, b, c in zip(p, q1, q0, strict=True))
    assert sprt_pairs(Pentanomial(c)).llr == pytest.approx(expected)


# --- verdicts, bounds and parameters -----------------------------------------------------------


def test_verdicts_and_bounds() -> None:
    r = sprt_pairs(Pentanomial((5, 10, 40, 30, 15)))  # score 0.6 over 100 pairs
    assert r.lower_bound == pytest.approx(-BOUND) and r.upper_bound == pytest.approx(BOUND)
    assert r.llr > BOUND and r.verdict == "accept"
    assert (r.elo0, r.elo1, r.alpha, r.beta, r.pairs, r.games) == (0.0, 20.0, 0.05, 0.05, 100, 200)
    assert sprt_pairs(Pentanomial((5, 10, 40, 30, 15)), min_pairs=101).verdict == "continue"
    worse = sprt_pairs(Pentanomial((15, 30, 40, 10, 5)))
    assert worse.llr < -BOUND and worse.verdict == "reject"


def test_degenerate_samples_give_finite_llrs() -> None:
    empty = sprt_pairs(Pentanomial((0, 0, 0, 0, 0)))
    assert (empty.llr, empty.verdict, empty.pairs, empty.games) == (0.0, "continue", 0, 0)
    one = sprt_pairs(Pentanomial((0, 0, 0, 0, 1)))  # a single won pair proves nothing
    assert 0.0 < one.llr < 0.1 and one.verdict == "continue"
    splits = sprt_pairs(Pentanomial((0, 0, 200, 0, 0)))  # dead even: not 20 Elo better
    assert math.isfinite(splits.llr) and splits.verdict == "reject"


@given(counts5.filter(lambda c: min(c) > 0), st.integers(2, 5))
def test_llr_grows_linearly_with_the_sample(c: tuple[int, ...], k: int) -> None:
    one = sprt_pairs(Pentanomial((c[0], c[1], c[2], c[3], c[4])))
    many = sprt_pairs(Pentanomial((c[0] * k, c[1] * k, c[2] * k, c[3] * k, c[4] * k)))
    assert many.llr == pytest.approx(k * one.llr, rel=1e-7, abs=1e-9)


@given(counts5)
def test_mirrored_counts_mirror_the_llr(c: tuple[int, ...]) -> None:
    r = sprt_pairs(Pentanomial((c[0], c[1], c[2], c[3], c[4])), elo0=-10.0, elo1=10.0)
    m = sprt_pairs(Pentanomial((c[4], c[3], c[2], c[1], c[0])), elo0=-10.0, elo1=10.0)
    assert m.llr == pytest.approx(-r.llr, rel=1e-7, abs=1e-7)


def test_sprt_parameters_are_validated() -> None:
    p = Pentanomial((1, 2, 3, 2, 1))
    with pytest.raises(ValueError, match="elo0"):
        sprt_pairs(p, elo0=20.0, elo1=20.0)
    with pytest.raises(ValueError, match="alpha"):
        sprt_pairs(p, alpha=0.0)
    with pytest.raises(ValueError, match="beta"):
        sprt_pairs(p, beta=1.5)
    with pytest.raises(ValueError, match="alpha \\+ beta"):
        sprt_pairs(p, alpha=0.6, beta=0.5)
    with pytest.raises(ValueError, match="min_pairs"):
        sprt_pairs(p, min_pairs=-1)
    with pytest.raises(ValueError, match="elo_model"):
        sprt_pairs(p, elo_model="bayes")  # type: ignore[arg-type]
    r = sprt_pairs(p, elo0=-5.0, elo1=5.0, alpha=0.01, beta=0.1)
    assert r.lower_bound == pytest.approx(math.log(0.1 / 0.99))
    assert r.upper_bound == pytest.approx(math.log(0.9 / 0.01))


# --- validation by simulation ------------------------------------------------------------------


@pytest.mark.parametrize("elo", [-100.0, 0.0, 20.0, 100.0])
def test_pentanomial_probabilities_have_the_right_score(elo: float) -> None:
    probs = pentanomial_probabilities(elo, draw_rate=0.05)
    assert sum(probs) == pytest.approx(1.0)
    assert sum(p * k / 4 for k, p in enumerate(probs)) == pytest.approx(logistic(elo))
    with pytest.raises(ValueError, match="draw_rate"):
        pentanomial_probabilities(800.0, draw_rate=0.5)


def test_error_rates_over_a_thousand_runs_at_each_hypothesis() -> None:
    # Bounds elo0 = 0, elo1 = 40 (about 400 games a test) keep this under ~15 s; the bench
    # (bench/bench_sprt.py) runs 0/10, 0/20 and 0/40 with 2,000 runs each.
    runs, alpha, beta = 1000, 0.05, 0.05
    slack = 3 * math.sqrt(alpha * (1 - alpha) / runs)  # three standard errors
    h0 = simulate_sprt(0.0, runs, random.Random(11), elo0=0.0, elo1=40.0)
    assert h0.accept_rate <= alpha + slack and h0.undecided_rate == 0.0
    h1 = simulate_sprt(40.0, runs, random.Random(12), elo0=0.0, elo1=40.0)
    assert h1.reject_rate <= beta + slack and h1.undecided_rate == 0.0
    # fishtest's Brownian-motion prediction of the test length (no overshoot): within 15%.
    predicted = fishtest_prediction(0.0, elo0=0.0, elo1=40.0).expected_games
    for sim in (h0, h1):
        assert 2 * sim.mean_pairs == pytest.approx(predicted, rel=0.15)


def test_the_fast_simulation_decides_exactly_as_the_exact_llr_after_every_pair() -> None:
    # simulate_sprt skips exact LLRs while certified bounds keep it between the decision
    # bounds; replaying the same random pairs through sprt_pairs after every pair must agree.
    cumulative = list(itertools.accumulate(pentanomial_probabilities(10.0)))
    cumulative[-1] = 1.0
    rng = random.Random(21)
    outcomes = []
    for _ in range(25):
        counts = [0, 0, 0, 0, 0]
        verdict = "continue"
        while verdict == "continue":
            counts[bisect.bisect_right(cumulative, rng.random())] += 1
            verdict = sprt_pairs(Pentanomial(tuple(counts)), elo0=0.0, elo1=20.0).verdict  # type: ignore[arg-type]
        outcomes.append((verdict, sum(counts)))
    fast = simulate_sprt(10.0, 25, random.Random(21), elo0=0.0, elo1=20.0)
    accepted = sum(v == "accept" for v, _ in outcomes)
    assert fast.accept_rate == accepted / 25
    assert fast.mean_pairs == sum(n for _, n in outcomes) / 25
    assert fast.max_pairs == max(n for _, n in outcomes)


def test_clear_cases_decide_quickly() -> None:
    better = simulate_sprt(100.0, 200, random.Random(3))
    assert better.accept_rate == 1.0 and better.mean_pairs < 200 and better.max_pairs < 1000
    worse = simulate_sprt(-100.0, 200, random.Random(4))
    assert worse.reject_rate == 1.0 and worse.mean_pairs < 200 and worse.max_pairs < 1000


def test_normalized_model_simulates_too() -> None:
    sim = simulate_sprt(100.0, 20, random.Random(6), elo0=0.0, elo1=10.0, elo_model="normalized")
    assert sim.accept_rate == 1.0


def test_simulation_is_reproducible_and_respects_the_cap() -> None:
    a = simulate_sprt(10.0, 20, random.Random(5), max_pairs=300)
    assert a == simulate_sprt(10.0, 20, random.Random(5), max_pairs=300)
    assert a.max_pairs <= 300
    assert a.accept_rate + a.reject_rate + a.undecided_rate == pytest.approx(1.0)
    with pytest.raises(ValueError, match="runs"):
        simulate_sprt(0.0, 0, random.Random(5))


def test_fishtest_prediction_by_hand() -> None:
    # At elo0 / elo1 the pass probability is alpha / 1 - beta; midway it is 1/2 and the
    # expected length is -ln(A) ln(B) / w2 games, w2 = (s1 - s0)^2 / ((1 - draws) / 4).
    s0, s1 = logistic(0.0), logistic(20.0)
    w2 = (s1 - s0) ** 2 / (0.95 / 4)
    assert fishtest_prediction(0.0, elo0=0.0, elo1=20.0).pass_probability == pytest.approx(0.05)
    assert fishtest_prediction(20.0, elo0=0.0, elo1=20.0).pass_probability == pytest.approx(0.95)
    mid = fishtest_prediction(10.0, elo0=0.0, elo1=20.0)
    assert mid.pass_probability == pytest.approx(0.5, abs=1e-3)
    assert mid.expected_games == pytest.approx(BOUND * BOUND / w2, rel=1e-3)
    with pytest.raises(ValueError, match="variance"):
        fishtest_prediction(0.0, elo0=0.0, elo1=5.0, draw_ratio=1.0)
