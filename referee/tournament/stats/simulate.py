"""Simulated sequential tests, fishtest's Brownian-motion prediction of their length, and the
exact coverage of the head-to-head interval.

Randomness only through an injected ``random.Random``. See ``docs/statistics.md``
("Validation by simulation").
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from referee.tournament.defaults import EloModel
from referee.tournament.stats.elo import (
    PAIR_VALUES,
    EloEstimate,
    Pentanomial,
    Trinomial,
    estimate_games,
    estimate_pairs,
    logistic,
)
from referee.tournament.stats.sprt import (
    MIN_SPRT_UNITS,
    NELO_PER_T,
    Verdict,
    llr,
    llr_logistic_from,
    sprt_bounds,
    verdict,
)


@dataclass(frozen=True)
class SprtSimulation:
    """Outcome of repeated simulated SPRT runs at a fixed true strength."""

    true_elo: float
    runs: int
    accept_rate: float
    reject_rate: float
    undecided_rate: float
    mean_pairs: float
    max_pairs: int


def game_probabilities(elo: float, draw_rate: float = 0.05) -> tuple[float, float, float]:
    """(win, draw, loss) of one game drawn with probability ``draw_rate`` whose expected score
    is ``logistic(elo)`` (Trinomial order). Raises ValueError if impossible."""
    return _game(logistic(elo), draw_rate, elo)


def _game(s: float, draw_rate: float, elo: float) -> tuple[float, float, float]:
    win, loss = s - draw_rate / 2.0, 1.0 - s - draw_rate / 2.0
    if not 0.0 <= draw_rate < 1.0 or win < 0.0 or loss < 0.0:
        raise ValueError(f"draw_rate={draw_rate!r} is impossible at elo={elo!r}")
    return win, draw_rate, loss


def pentanomial_probabilities(
    elo: float, draw_rate: float = 0.05, luck: float = 0.0
) -> tuple[float, ...]:
    """Pair-class probabilities when a pair's two games are independent trinomial draws.

    Each game is drawn with probability ``draw_rate`` and the win probability is chosen so
    that the expected per-game score is ``logistic(elo)``. With ``luck`` > 0, that fraction of
    pairs is decided by the deals (one win each, pair score 1) and the others are two such
    games with the skill needed to keep the mean at ``logistic(elo)``: duplicate deals. Raises
    ValueError if impossible.
    """
    if not 0.0 <= luck < 1.0:
        raise ValueError(f"luck must be in [0, 1), got {luck!r}")
    s = (logistic(elo) - luck / 2.0) / (1.0 - luck)
    if luck and not draw_rate / 2.0 <= s <= 1.0 - draw_rate / 2.0:
        raise ValueError(f"luck={luck!r} with draw_rate={draw_rate!r} is impossible at {elo=!r}")
    win, draw, loss = _game(s, draw_rate, elo)
    game = (loss, draw, win)
    probs = [0.0] * 5
    for i, j in itertools.product(range(3), repeat=2):
        probs[i + j] += (1.0 - luck) * game[i] * game[j]
    probs[2] += luck
    return tuple(probs)


def compositions(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every tuple of ``parts`` counts >= 0 adding up to ``n``: every possible sample."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in compositions(n - first, parts - 1):
            yield (first, *rest)


def estimate_counts(counts: Sequence[int]) -> EloEstimate:
    """:func:`estimate_pairs` of five counts (pentanomial), :func:`estimate_games` of three."""
    if len(counts) == 5:
        return estimate_pairs(Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4])))
    return estimate_games(Trinomial(counts[0], counts[1], counts[2]))


def interval_coverage(probs: Sequence[float], units: int, true_elo: float) -> float:
    """The exact probability that the 95% interval of ``units`` pairs (five ``probs``, the
    pentanomial classes) or games (three: win, draw, loss) contains ``true_elo``: the sum of
    the multinomial probabilities of every possible sample whose interval does. A sample
    with no finite estimate counts with its one-sided bound."""
    log_fact = [math.lgamma(k + 1) for k in range(units + 1)]
    covered = 0.0
    for counts in compositions(units, len(probs)):
        if any(c and not p for c, p in zip(counts, probs, strict=True)):
            continue
        e = estimate_counts(counts)
        if e.lower <= true_elo <= e.upper:
            log_p = log_fact[units] + sum(
                c * math.log(p) - log_fact[c] for c, p in zip(counts, probs, strict=True) if c
            )
            covered += math.exp(log_p)
    return covered


def simulate_sprt(
    true_elo: float,
    runs: int,
    rng: random.Random,
    *,
    elo0: float = 0.0,
    elo1: float = 20.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    min_pairs: int = MIN_SPRT_UNITS,
    draw_rate: float = 0.05,
    max_pairs: int = 20_000,
    elo_model: EloModel = "logistic",
) -> SprtSimulation:
    """Run the pentanomial GSPRT sequentially ``runs`` times on synthetic pairs at ``true_elo``
    (logistic Elo; elo0 and elo1 in ``elo_model``).

    Pairs come from :func:`pentanomial_probabilities`; the exact LLR is checked after every
    pair until a verdict or ``max_pairs`` pairs. ``mean_pairs`` averages the pairs played over
    all runs; ``max_pairs`` is the longest run.
    """
    if runs < 1 or max_pairs < 1:
        raise ValueError(f"runs and max_pairs must be >= 1, got {runs!r}, {max_pairs!r}")
    lower, upper = sprt_bounds(elo0, elo1, alpha, beta, min_pairs)
    cumulative = list(itertools.accumulate(pentanomial_probabilities(true_elo, draw_rate)))
    cumulative[-1] = 1.0
    accepted = rejected = total = longest = 0
    for _ in range(runs):
        if elo_model == "logistic":
            test = _LogisticRun(logistic(elo0), logistic(elo1), lower, upper, min_pairs)
            decided, n = test.run(cumulative, rng, max_pairs)
        else:
            decided, n = _slow_run(cumulative, rng, max_pairs, elo0, elo1, elo_model, lower,
                                   upper, min_pairs)  # fmt: skip
        accepted += decided == "accept"
        rejected += decided == "reject"
        total += n
        longest = max(longest, n)
    undecided = runs - accepted - rejected
    rates = (accepted / runs, rejected / runs, undecided / runs)
    return SprtSimulation(true_elo, runs, *rates, total / runs, longest)


def _slow_run(
    cumulative: list[float], rng: random.Random, max_pairs: int, elo0: float, elo1: float,
    model: EloModel, lower: float, upper: float, min_pairs: int,
) -> tuple[Verdict, int]:  # fmt: skip
    counts = [0, 0, 0, 0, 0]
    decided: Verdict = "continue"
    n = 0
    while decided == "continue" and n < max_pairs:
        counts[bisect.bisect_right(cumulative, rng.random())] += 1
        n += 1
        if n >= min_pairs:
            decided = verdict(llr(counts, PAIR_VALUES, elo0, elo1, model), lower, upper, n,
                              min_pairs)  # fmt: skip
    return decided, n


_SAFETY = 1e-9  # margin for rounding in the certified bounds


class _LogisticRun:
    """One simulated logistic test with the exact LLR's verdict after every pair, computed
    cheaply: while every class has a count, the LLR lies between two bounds that change by a
    table lookup per pair (a feasible distribution for each hypothesis bounds its maximum
    likelihood from below; any multiplier bounds it from above, by Lagrange duality). The exact
    LLR is computed, and the bounds re-anchored, only when they straddle a decision bound."""

    def __init__(self, s0: float, s1: float, lower: float, upper: float, min_pairs: int) -> None:
        self.s0, self.s1 = s0, s1
        self.lower, self.upper, self.min_pairs = lower, upper, min_pairs
        self.shifts0 = [v - s0 for v in PAIR_VALUES]
        self.shifts1 = [v - s1 for v in PAIR_VALUES]
        self.roots = (0.0, 0.0)
        self.low_weights: list[float] | None = None  # per-class terms of the bounds
        self.high_weights: list[float] = []
        self.low = self.high = 0.0  # sum c_i * weight_i of the bounds

    def _exact(self, counts: list[int]) -> float:
        value, self.roots = llr_logistic_from(counts, PAIR_VALUES, self.s0, self.s1, self.roots)
        if min(counts) == 0:
            self.low_weights = None  # regularised: the bounds below need every class seen
            return value
        n = sum(counts)
        x0, x1 = self.roots
        low, high = [], []
        for c, a0, a1 in zip(counts, self.shifts0, self.shifts1, strict=True):
            p = c / n
            q0, q1 = p / (1.0 + x0 * a0), p / (1.0 + x1 * a1)
            low.append(math.log(q1) + math.log1p(x0 * a0))  # ln q1_i - ln(p_i / q0-dual_i)
            high.append(math.log(q0) + math.log1p(x1 * a1))
        self.low_weights, self.high_weights = low, high
        self.low = sum(c * w for c, w in zip(counts, low, strict=True))
        self.high = sum(c * w for c, w in zip(counts, high, strict=True))
        return value

    def run(
        self, cumulative: list[float], rng: random.Random, max_pairs: int
    ) -> tuple[Verdict, int]:
        counts = [0, 0, 0, 0, 0]
        n = 0
        entropy = 0.0  # sum c_i ln c_i
        while n < max_pairs:
            i = bisect.bisect_right(cumulative, rng.random())
            c = counts[i]
            entropy += (c + 1) * math.log(c + 1) - (c * math.log(c) if c else 0.0)
            counts[i] = c + 1
            n += 1
            if n < self.min_pairs:
                continue
            if self.low_weights is not None:
                self.low += self.low_weights[i]
                self.high += self.high_weights[i]
                e = entropy - n * math.log(n)  # sum c_i ln p_i
                # LLR >= sum c (ln q1 + ln(1 + x0 a0)) - e and LLR <= e - sum c (ln q0 + ...)
                if self.low - e > self.lower + _SAFETY and e - self.high < self.upper - _SAFETY:
                    continue
            decided = verdict(self._exact(counts), self.lower, self.upper, n, self.min_pairs)
            if decided != "continue":
                return decided, n
        return "continue", n


@dataclass(frozen=True)
class SprtPrediction:
    """fishtest's prediction for an SPRT: probability to pass and expected number of games."""

    pass_probability: float
    expected_games: float


def fishtest_prediction(
    true_elo: float,
    *,
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    draw_ratio: float = 0.05,
    rms_bias: float = 0.0,
    elo_model: EloModel = "logistic",
) -> SprtPrediction:
    """What fishtest's SPRT calculator predicts (``static/js/sprt.js``): the LLR as a Brownian
    motion with drift and variance per game from a per-game score variance (1 - draw_ratio)/4
    minus the squared RMS bias score; ``true_elo`` in logistic Elo.
    """
    lower, upper = sprt_bounds(elo0, elo1, alpha, beta)
    variance = (1.0 - draw_ratio) / 4.0 - (logistic(rms_bias) - 0.5) ** 2
    if variance <= 0.0:
        raise ValueError(f"draw_ratio={draw_ratio!r}, rms_bias={rms_bias!r} leave no variance")
    if elo_model == "logistic":
        s0, s1 = logistic(elo0), logistic(elo1)
    else:
        sigma = math.sqrt(variance)
        s0, s1 = (0.5 + e / NELO_PER_T * sigma for e in (elo0, elo1))
    w2 = (s1 - s0) ** 2 / variance
    h = (2.0 * logistic(true_elo) - s0 - s1) / (s1 - s0)
    if abs(h * (lower - upper)) < 1e-6:
        p, t = -lower / (upper - lower), -lower * upper
    else:
        exp_a, exp_b = math.exp(-h * lower), math.exp(-h * upper)
        p = (1.0 - exp_a) / (exp_b - exp_a)
        t = (2.0 / h) * (upper * p + lower * (1.0 - p))
    return SprtPrediction(p, t / w2)
