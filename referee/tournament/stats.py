"""Tournament statistics: Elo estimates, intervals and the SPRT for Gin Rummy bot matches.

This is the standard engine-testing model (fishtest, fastchess) adapted to Gin: a *game* is the
unit of win / draw / loss, scored 1, 0.5 or 0 for player A (a Gin game can end with no winner,
e.g. at the hand cap). Tournaments play *duplicate pairs* -- the same deals twice with the seats
swapped -- and a pair is one statistical unit scoring 0, 0.5, 1, 1.5 or 2: the pentanomial model.
Card luck dominates Gin, and pairing cancels much of it. Unpaired games use the trinomial model.
See ``docs/statistics.md``. Pure: no I/O, no clock, randomness only through an injected
``random.Random`` (in :func:`simulate_sprt`).

>>> p = Pentanomial.from_pair_scores([2, 1.5, 1, 1, 0.5, 2, 1.5, 1])
>>> p.counts, p.pairs, p.games, p.mean
((0, 1, 3, 2, 2), 8, 16, 0.65625)
>>> e = estimate_pairs(p)
>>> e.lower < e.elo < e.upper, round(e.elo)
(True, 112)
>>> sprt_pairs(p).verdict
'continue'
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

SCORE_EPSILON = 1e-6
"""Scores are clamped to [SCORE_EPSILON, 1 - SCORE_EPSILON] before conversion to Elo."""
MAX_ELO = 400.0 * math.log10((1.0 - SCORE_EPSILON) / SCORE_EPSILON)
"""The largest Elo difference reported (about 2400): ``elo_from_score(1.0)``."""
Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""
REGULARIZATION = 1e-3
"""Weight given to empty outcome classes by the SPRT (as fishtest), so its variance is > 0."""
MIN_SPRT_UNITS = 50
"""Default number of pairs (or games) before the SPRT may stop (see ``docs/statistics.md``)."""

Verdict = Literal["accept", "reject", "continue"]
_PAIR_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)  # per-game average score of each pentanomial class
_GAME_VALUES = (1.0, 0.5, 0.0)  # score of a win, a draw, a loss (Trinomial order)
_PAIR_INDEX = {0.0: 0, 0.5: 1, 1.0: 2, 1.5: 3, 2.0: 4}
_GAME_SCORES = (0.0, 0.5, 1.0)


def _check_counts(name: str, counts: Sequence[int]) -> None:
    for c in counts:
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise ValueError(f"{name} counts must be non-negative integers, got {c!r}")


def _moments(
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


def _game_score(score: float) -> float:
    if score not in _GAME_SCORES or isinstance(score, bool):
        raise ValueError(f"a game score must be 0, 0.5 or 1, got {score!r}")
    return float(score)


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
            index = None if isinstance(s, bool) else _PAIR_INDEX.get(s)
            if index is None:
                raise ValueError(f"a pair score must be 0, 0.5, 1, 1.5 or 2, got {s!r}")
            c[index] += 1
        return cls((c[0], c[1], c[2], c[3], c[4]))

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
        return _moments(self.counts, _PAIR_VALUES)[1]

    @property
    def variance_per_pair(self) -> float:
        """Empirical variance of a pair's per-game average (pair score / 2); 0 when empty."""
        return _moments(self.counts, _PAIR_VALUES)[2]


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
            c[_GAME_VALUES.index(_game_score(s))] += 1
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
        return _moments(self.counts, _GAME_VALUES)[1]

    @property
    def variance(self) -> float:
        """Empirical variance of one game's score; 0 when there are no games."""
        return _moments(self.counts, _GAME_VALUES)[2]


def pair_scores(results: Sequence[tuple[float, float]]) -> list[float]:
    """Pair scores from (A's score in game 1, A's score in game 2) per pair, each 0, 0.5 or 1."""
    return [_game_score(first) + _game_score(second) for first, second in results]


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


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference of A over B with a 95% interval and the likelihood of superiority."""

    elo: float
    lower: float
    upper: float
    los: float
    score: float
    games: int
    pairs: int


def _estimate(mean: float, var: float, units: int, games: int, pairs: int) -> EloEstimate:
    if units == 0:
        return EloEstimate(0.0, -MAX_ELO, MAX_ELO, 0.5, 0.5, 0, 0)
    se = math.sqrt(var / units)
    if se > 0:
        los = 0.5 * math.erfc(-(mean - 0.5) / se / math.sqrt(2.0))
    else:
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    lower, upper = elo_from_score(mean - Z95 * se), elo_from_score(mean + Z95 * se)
    return EloEstimate(elo_from_score(mean), lower, upper, los, mean, games, pairs)


def estimate_pairs(p: Pentanomial) -> EloEstimate:
    """Elo, 95% interval and LOS from duplicate pairs (the pair is the unit).

    The interval is mean +- Z95 * sqrt(variance_per_pair / pairs), mapped through
    :func:`elo_from_score`; LOS = Phi((mean - 0.5) / stderr). No pairs: elo 0, interval
    [-MAX_ELO, MAX_ELO], los 0.5. Zero variance (all pairs alike): a zero-width interval at the
    (clamped) point and los 1.0, 0.0 or 0.5 as the score is above, below or at 0.5.
    """
    _, mean, var = _moments(p.counts, _PAIR_VALUES)
    return _estimate(mean, var, p.pairs, p.games, p.pairs)


def estimate_games(t: Trinomial) -> EloEstimate:
    """As :func:`estimate_pairs` for unpaired games (the game is the unit; ``pairs`` is 0)."""
    _, mean, var = _moments(t.counts, _GAME_VALUES)
    return _estimate(mean, var, t.games, t.games, 0)


@dataclass(frozen=True)
class SprtResult:
    """The state of a sequential probability ratio test (accept = H1, reject = H0)."""

    llr: float
    lower_bound: float
    upper_bound: float
    verdict: Verdict
    elo0: float
    elo1: float
    alpha: float
    beta: float
    pairs: int
    games: int


def _sprt_bounds(
    elo0: float, elo1: float, alpha: float, beta: float, min_units: int
) -> tuple[float, float]:
    if min_units < 0:
        raise ValueError(f"min_pairs / min_games must be >= 0, got {min_units!r}")
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be < elo1, got elo0={elo0!r}, elo1={elo1!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    if not alpha + beta < 1.0:
        raise ValueError(f"alpha + beta must be < 1, got alpha={alpha!r}, beta={beta!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _llr(counts: Sequence[int], values: Sequence[float], s0: float, s1: float) -> float:
    """GSPRT normal approximation N (s1 - s0)(2m - s0 - s1) / (2v), fishtest regularisation."""
    if not any(counts):
        return 0.0
    n, mean, var = _moments(counts, values, REGULARIZATION)
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


def _verdict(llr: float, lower: float, upper: float, units: int, min_units: int) -> Verdict:
    if units < min_units or lower < llr < upper:
        return "continue"
    return "accept" if llr >= upper else "reject"


def _sprt(
    counts: Sequence[int], values: Sequence[float], units: int, pairs: int, games: int,
    elo0: float, elo1: float, alpha: float, beta: float, min_units: int,
) -> SprtResult:  # fmt: skip
    lower, upper = _sprt_bounds(elo0, elo1, alpha, beta, min_units)
    llr = _llr(counts, values, logistic(elo0), logistic(elo1))
    verdict = _verdict(llr, lower, upper, units, min_units)
    return SprtResult(llr, lower, upper, verdict, elo0, elo1, alpha, beta, pairs, games)


def sprt_pairs(
    p: Pentanomial,
    *,
    elo0: float = 0.0,
    elo1: float = 20.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    min_pairs: int = MIN_SPRT_UNITS,
) -> SprtResult:
    """GSPRT of H0: elo = elo0 against H1: elo = elo1 (logistic Elo) over duplicate pairs.

    LLR = N (s1 - s0)(2m - s0 - s1) / (2v) with s = logistic(elo), m the mean per-game score
    and v the variance of a pair's per-game average (fishtest's pentanomial approximation;
    empty classes get weight REGULARIZATION, as fishtest, so v > 0 even when every pair is
    alike). Verdict "accept" (H1: A is >= elo1 better) when LLR >= ln((1 - beta) / alpha),
    "reject" (H0) when LLR <= ln(beta / (1 - alpha)), else "continue" -- always "continue"
    before ``min_pairs`` pairs (the LLR is still reported). No pairs: LLR 0. Raises ValueError
    naming a bad parameter (elo0 < elo1; alpha, beta in (0, 1), alpha + beta < 1; min_pairs >= 0).
    """
    n = p.pairs
    return _sprt(p.counts, _PAIR_VALUES, n, n, 2 * n, elo0, elo1, alpha, beta, min_pairs)


def sprt_games(
    t: Trinomial,
    *,
    elo0: float = 0.0,
    elo1: float = 20.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    min_games: int = MIN_SPRT_UNITS,
) -> SprtResult:
    """As :func:`sprt_pairs` for unpaired games: N games, v the per-game variance, pairs 0."""
    n = t.games
    return _sprt(t.counts, _GAME_VALUES, n, 0, n, elo0, elo1, alpha, beta, min_games)


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


def pentanomial_probabilities(elo: float, draw_rate: float = 0.05) -> tuple[float, ...]:
    """Pair-class probabilities when a pair's two games are independent trinomial draws.

    Each game is drawn with probability ``draw_rate`` and the win probability is chosen so
    that the expected per-game score is ``logistic(elo)``. Raises ValueError if impossible.
    """
    s = logistic(elo)
    win, loss = s - draw_rate / 2.0, 1.0 - s - draw_rate / 2.0
    if not 0.0 <= draw_rate < 1.0 or win < 0.0 or loss < 0.0:
        raise ValueError(f"draw_rate={draw_rate!r} is impossible at elo={elo!r}")
    game = (loss, draw_rate, win)
    probs = [0.0] * 5
    for i, j in itertools.product(range(3), repeat=2):
        probs[i + j] += game[i] * game[j]
    return tuple(probs)


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
) -> SprtSimulation:
    """Run :func:`sprt_pairs` sequentially ``runs`` times on synthetic pairs at ``true_elo``.

    Pairs come from :func:`pentanomial_probabilities`; the LLR is checked after every pair
    (running counts, constant work per pair) until a verdict or ``max_pairs`` pairs.
    ``mean_pairs`` averages the pairs played over all runs; ``max_pairs`` is the longest run.
    """
    if runs < 1 or max_pairs < 1:
        raise ValueError(f"runs and max_pairs must be >= 1, got {runs!r}, {max_pairs!r}")
    lower, upper = _sprt_bounds(elo0, elo1, alpha, beta, min_pairs)
    s0, s1 = logistic(elo0), logistic(elo1)
    cumulative = list(itertools.accumulate(pentanomial_probabilities(true_elo, draw_rate)))
    cumulative[-1] = 1.0
    accepted = rejected = total = longest = 0
    for _ in range(runs):
        counts = [0, 0, 0, 0, 0]
        verdict: Verdict = "continue"
        n = 0
        while verdict == "continue" and n < max_pairs:
            counts[bisect.bisect_right(cumulative, rng.random())] += 1
            n += 1
            if n >= min_pairs:
                verdict = _verdict(_llr(counts, _PAIR_VALUES, s0, s1), lower, upper, n, min_pairs)
        accepted += verdict == "accept"
        rejected += verdict == "reject"
        total += n
        longest = max(longest, n)
    undecided = runs - accepted - rejected
    rates = (accepted / runs, rejected / runs, undecided / runs)
    return SprtSimulation(true_elo, runs, *rates, total / runs, longest)
