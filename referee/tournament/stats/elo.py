"""Counting results and estimating an Elo difference with a 95% interval and the LOS.

A *game* scores 1, 0.5 or 0 for player A (a Gin game can end with no winner, at the hand cap).
Tournaments play *duplicate pairs* -- the same deals twice with the seats swapped -- and a pair
is one statistical unit scoring 0, 0.5, 1, 1.5 or 2: the pentanomial model. Unpaired games use
the trinomial model. See ``docs/statistics.md``. Pure: stdlib ``math`` only.

>>> p = Pentanomial.from_pair_scores([2, 1.5, 1, 1, 0.5, 2, 1.5, 1])
>>> p.counts, p.pairs, p.games, p.mean
((0, 1, 3, 2, 2), 8, 16, 0.65625)
>>> e = estimate_pairs(p)
>>> e.lower < e.elo < e.upper, round(e.elo), e.status
(True, 112, 'ok')
>>> estimate_pairs(Pentanomial((0, 0, 0, 0, 0))).status
'empty'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

SCORE_EPSILON = 1e-6
"""Scores are clamped to [SCORE_EPSILON, 1 - SCORE_EPSILON] before conversion to Elo."""
MAX_ELO = 400.0 * math.log10((1.0 - SCORE_EPSILON) / SCORE_EPSILON)
"""The clamp of :func:`elo_from_score` (about 2400); reports use :func:`elo_bound` instead."""
Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""
TAIL = 0.025
"""Probability left in each tail of the 95% intervals (also of a one-sided bound)."""

SMALL_SAMPLE = 10
"""Fewer games than this (5 duplicate pairs) are too few to say much: the interval's coverage
is checked from there up (``bench/bench_intervals.py``), and reports say so below."""
REGULARIZATION = 1e-3
"""Weight given to empty outcome classes (as fishtest's ``regularize``)."""

EstimateStatus = Literal["ok", "no spread", "no finite estimate", "empty"]
PAIR_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)  # per-game average score of each pentanomial class
GAME_VALUES = (1.0, 0.5, 0.0)  # score of a win, a draw, a loss (Trinomial order)
_PAIR_INDEX = {0.0: 0, 0.5: 1, 1.0: 2, 1.5: 3, 2.0: 4}
GAME_SCORES = (0.0, 0.5, 1.0)


def _check_counts(name: str, counts: Sequence[int]) -> None:
    for c in counts:
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise ValueError(f"{name} counts must be non-negative integers, got {c!r}")


def moments(
    counts: Sequence[int], values: Sequence[float], empty: float = 0.0
) -> tuple[float, float, float]:
    """Total weight, mean and (population) variance, a zero count weighing ``empty``.

    Nothing counted: (0, 0.5, 0). Plain loops: this is the simulation's inner loop.
    """
    n = total = 0.0
    for c, x in zip(counts, values, strict=True):
        w = c or empty
        n += w
        total += w * x
    if n == 0:
        return 0.0, 0.5, 0.0
    mean, var = total / n, 0.0
    for c, x in zip(counts, values, strict=True):
        var += (c or empty) * (x - mean) ** 2
    return n, mean, var / n


def game_score(score: float) -> float:
    if score not in GAME_SCORES or isinstance(score, bool):
        raise ValueError(f"a game score must be 0, 0.5 or 1, got {score!r}")
    return float(score)


def _pair_index(score: float) -> int:
    """The count a pair score goes to; ValueError naming any value not in {0, 0.5, 1, 1.5, 2}."""
    index = None if isinstance(score, bool) else _PAIR_INDEX.get(score)
    if index is None:
        raise ValueError(f"a pair score must be 0, 0.5, 1, 1.5 or 2, got {score!r}")
    return index


@dataclass(frozen=True)
class Pentanomial:
    """Counts of duplicate pairs scoring 0, 0.5, 1, 1.5 and 2 (player A's sum over the pair)."""

    counts: tuple[int, int, int, int, int]

    def __post_init__(self) -> None:
        if len(self.counts) != 5:
            raise ValueError(f"Pentanomial needs 5 counts, got {len(self.counts)}")
        _check_counts("Pentanomial", self.counts)

    @classmethod
    def from_pair_scores(cls, scores: Iterable[float]) -> Pentanomial:
        """Count pair scores; raises ValueError naming any value not in {0, 0.5, 1, 1.5, 2}."""
        c = [0, 0, 0, 0, 0]
        for s in scores:
            c[_pair_index(s)] += 1
        return cls((c[0], c[1], c[2], c[3], c[4]))

    def add(self, score: float) -> Pentanomial:
        """These counts and one more pair scoring ``score`` (a test that runs as pairs finish
        counts each one once, instead of counting every pair again at every pair)."""
        c = list(self.counts)
        c[_pair_index(score)] += 1
        return Pentanomial((c[0], c[1], c[2], c[3], c[4]))

    @property
    def pairs(self) -> int:
        """Number of pairs."""
        return sum(self.counts)

    @property
    def games(self) -> int:
        """Number of games (two per pair)."""
        return 2 * self.pairs

    @property
    def mean(self) -> float:
        """Mean per-game score of player A in [0, 1]; 0.5 when there are no pairs."""
        return moments(self.counts, PAIR_VALUES)[1]

    @property
    def variance_per_pair(self) -> float:
        """Empirical variance of a pair's per-game average (pair score / 2); 0 when empty."""
        return moments(self.counts, PAIR_VALUES)[2]


@dataclass(frozen=True)
class Trinomial:
    """Counts of unpaired games won, drawn and lost by player A."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        _check_counts("Trinomial", (self.wins, self.draws, self.losses))

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Trinomial:
        """Count game scores; raises ValueError naming any value not in {0, 0.5, 1}."""
        c = [0, 0, 0]
        for s in scores:
            c[GAME_VALUES.index(game_score(s))] += 1
        return cls(c[0], c[1], c[2])

    @property
    def counts(self) -> tuple[int, int, int]:
        """(wins, draws, losses)."""
        return self.wins, self.draws, self.losses

    @property
    def games(self) -> int:
        """Number of games."""
        return self.wins + self.draws + self.losses

    @property
    def mean(self) -> float:
        """Mean score of player A in [0, 1]; 0.5 when there are no games."""
        return moments(self.counts, GAME_VALUES)[1]

    @property
    def variance(self) -> float:
        """Empirical variance of one game's score; 0 when there are no games."""
        return moments(self.counts, GAME_VALUES)[2]


def pair_scores(results: Sequence[tuple[float, float]]) -> list[float]:
    """Pair scores from (A's score in game 1, A's score in game 2) per pair, each 0, 0.5 or 1."""
    return [game_score(first) + game_score(second) for first, second in results]


def logistic(elo: float) -> float:
    """Expected score of a player ``elo`` stronger: 1 / (1 + 10^(-elo/400)); never overflows."""
    if elo >= 0:
        return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))
    t = math.pow(10.0, elo / 400.0)
    return t / (1.0 + t)


def elo_from_score(score: float) -> float:
    """Inverse of :func:`logistic`: -400 log10(1/score - 1).

    The score is first clamped to [SCORE_EPSILON, 1 - SCORE_EPSILON] (values outside [0, 1] too),
    so the result is always finite: exactly +-MAX_ELO at the clamps. NaN raises ValueError.
    """
    if math.isnan(score):
        raise ValueError("score is NaN")
    if score >= 1.0 - SCORE_EPSILON:
        return MAX_ELO
    if score <= SCORE_EPSILON:
        return -MAX_ELO
    return max(-MAX_ELO, min(MAX_ELO, -400.0 * math.log10(1.0 / score - 1.0)))


def elo_bound(score: float) -> float:
    """Elo of a score without clamping: -inf at or below 0, +inf at or above 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: never -0.0


def normal_cdf(x: float) -> float:
    """Phi(x), the standard normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def regularized(counts: Sequence[int]) -> tuple[float, list[float]]:
    """Total weight and class frequencies, a zero count weighing REGULARIZATION."""
    weights = [float(c) if c else REGULARIZATION for c in counts]
    n = sum(weights)
    return n, [w / n for w in weights]


def secular_root(shifts: Sequence[float], probs: Sequence[float], start: float = 0.0) -> float:
    """The root x of sum p_i a_i / (1 + x a_i) = 0 (a_i = shifts, straddling 0).

    The left side falls strictly from +inf to -inf on (-1 / max a, -1 / min a): Newton's
    method from ``start`` (0 unless a nearby root is known), kept inside a shrinking bracket
    (bisection when a step leaves it). A tiny step is a root only where the left side is
    small beside its terms: next to a pole the step is tiny too (f / f' is about the distance
    to the pole), and a Newton step that lands there (the first one does when a class's value
    is the mean sought: (1, 352, 0, 32, 32) at 1/2) is left by bisection, not returned.
    """
    lo, hi = -1.0 / max(shifts), -1.0 / min(shifts)
    x = start if lo < start < hi else 0.0
    for _ in range(200):
        f = df = size = 0.0
        for a, p in zip(shifts, probs, strict=True):
            d = a / (1.0 + x * a)
            f += p * d
            df -= p * d * d
            size += p * abs(d)
        if f > 0.0:
            lo = x
        else:
            hi = x
        step = f / df
        if abs(step) <= 1e-12 * (1.0 + abs(x)):
            if abs(f) <= 1e-9 * size:
                return x - step
            x = 0.5 * (lo + hi)  # beside a pole, not at a root
            continue
        x -= step
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
    return x  # pragma: no cover - the bracket halves at least every other step


def mle_with_mean(probs: Sequence[float], values: Sequence[float], s: float) -> list[float]:
    """The distribution on ``values`` closest (in likelihood) to ``probs`` with mean ``s``:
    q_i = p_i / (1 + x (v_i - s)), x the root of the secular equation. ``s`` must lie
    strictly between min(values) and max(values)."""
    shifts = [v - s for v in values]
    x = secular_root(shifts, probs)
    return [p / (1.0 + x * a) for p, a in zip(probs, shifts, strict=True)]


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference of A over B with a 95% interval and the likelihood of superiority.

    ``status`` says what the numbers are:

    - ``"ok"``: ``elo`` is the estimate, [``lower``, ``upper``] the 95% score interval
      (:func:`score_interval`; both ends finite), ``los`` the LOS;
    - ``"no spread"``: as "ok", but every unit scored the same (not 0 and not 1), so the
      sample shows no spread of its own (the interval still has width: see
      :func:`score_interval`);
    - ``"no finite estimate"``: A won (or lost) every unit; ``elo`` and ``los`` are None and
      the interval is one-sided: ``lower`` > -inf with ``upper`` = +inf (or the mirror);
    - ``"empty"``: nothing to estimate from; ``elo``, ``score`` and ``los`` are None.
    """

    elo: float | None
    lower: float
    upper: float
    los: float | None
    score: float | None
    games: int
    pairs: int
    status: EstimateStatus = "ok"

    @property
    def units(self) -> int:
        """The statistical units: pairs, or games when they were not paired."""
        return self.pairs or self.games

    @property
    def too_few(self) -> bool:
        """Some, but fewer than :data:`SMALL_SAMPLE` games: too few to say much."""
        return 0 < self.games < SMALL_SAMPLE


def closest_variance(probs: Sequence[float], values: Sequence[float], mean: float) -> float:
    """Variance of a unit under the distribution closest to ``probs`` whose mean is ``mean``
    (:func:`mle_with_mean`): the spread the sample implies if the true score were ``mean``."""
    q = mle_with_mean(probs, values, mean)
    return sum(p * (v - mean) ** 2 for p, v in zip(q, values, strict=True))


def score_interval(counts: Sequence[int], values: Sequence[float]) -> tuple[float, float, float]:
    """The 95% score interval on the mean score and the LOS, for a sample with 0 < mean < 1.

    The interval holds every score s whose z-statistic (mean - s) / sqrt(V(s) / N) is within
    +-Z95, V(s) the variance under the distribution closest to the (regularised) counts with
    mean s: Wilson's interval for a binomial, generalised to the five (or three) classes. A
    true score near 0 or 1 forces a small variance, so the interval reaches out on the side
    away from the edge, where Wald's interval undercovers. LOS = Phi((mean - 1/2) /
    sqrt(V(1/2) / N)), the same test at 1/2: LOS > 97.5% exactly when the interval is above 0.
    """
    n = sum(counts)
    mean = sum(c * v for c, v in zip(counts, values, strict=True)) / n
    probs = regularized(counts)[1]
    limit = Z95 * Z95 / n

    def inside(s: float) -> bool:
        return (mean - s) ** 2 <= limit * closest_variance(probs, values, s)

    def edge(outside: float) -> float:  # inside at ``mean``, outside at the limit 0 or 1
        lo, hi = mean, outside
        while abs(hi - lo) > 1e-13:
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if inside(mid) else (lo, mid)
        return lo

    sd = math.sqrt(closest_variance(probs, values, 0.5) / n)
    los = 0.5 if mean == 0.5 else normal_cdf((mean - 0.5) / sd)
    return edge(0.0), edge(1.0), los


def _estimate(
    counts: Sequence[int], values: Sequence[float], games: int, pairs: int
) -> EloEstimate:
    n = sum(counts)
    if n == 0:
        return EloEstimate(None, -math.inf, math.inf, None, None, 0, 0, "empty")
    mean = moments(counts, values)[1]
    if mean in (0.0, 1.0):
        # Every unit won (lost): the likelihood grows without bound, no finite estimate. A unit
        # scoring the maximum has probability <= its mean score s (Markov), so all n doing so
        # has probability <= s^n: s >= TAIL^(1/n) at 1 - TAIL confidence, whatever the model.
        bound = elo_bound(TAIL ** (1.0 / n))
        lower, upper = (bound, math.inf) if mean == 1.0 else (-math.inf, -bound)
        return EloEstimate(None, lower, upper, None, mean, games, pairs, "no finite estimate")
    status: EstimateStatus = "no spread" if max(counts) == n else "ok"
    low, high, los = score_interval(counts, values)
    return EloEstimate(
        elo_bound(mean), elo_bound(low), elo_bound(high), los, mean, games, pairs, status
    )


def perfect_units_needed(tail: float = TAIL) -> int:
    """The fewest units, all won, whose one-sided bound (:func:`_estimate`'s
    elo_bound(tail^(1/n))) is above 0: the smallest n with tail^(1/n) > 1/2 (6 at 2.5%).

    >>> perfect_units_needed(), elo_bound(TAIL ** (1 / 5)) < 0 < elo_bound(TAIL ** (1 / 6))
    (6, True)
    """
    return math.floor(math.log(tail) / math.log(0.5)) + 1


def estimate_pairs(p: Pentanomial) -> EloEstimate:
    """Elo, 95% interval and LOS from duplicate pairs (the pair is the unit).

    With m the mean per-game score and N pairs: elo = elo_bound(m), the interval and the LOS
    from :func:`score_interval`. No pairs, all pairs alike and all pairs won or lost are
    reported through :attr:`EloEstimate.status` (see there and ``docs/statistics.md``);
    :attr:`EloEstimate.too_few` marks fewer than 5 pairs (:data:`SMALL_SAMPLE` games).
    """
    return _estimate(p.counts, PAIR_VALUES, p.games, p.pairs)


def estimate_games(t: Trinomial) -> EloEstimate:
    """As :func:`estimate_pairs` for unpaired games (the game is the unit; ``pairs`` is 0)."""
    return _estimate(t.counts, GAME_VALUES, t.games, 0)
