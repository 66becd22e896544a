"""The sequential probability ratio test: the exact generalized SPRT (GSPRT) that fishtest uses.

The log-likelihood ratio compares the multinomial distributions over the outcome classes (the
five pair scores, or win / draw / loss) that best explain the counts under each hypothesis: the
maximum-likelihood distribution whose expected score is s0 (or s1), or, in normalized Elo, whose
t-value (mean - 1/2) / sd is t0 (or t1). These are fishtest's ``LLR_logistic`` and
``LLR_normalized`` (``LLRcalc.py``), computed here by our own root finder. The normal
approximation (fishtest's ``LLR_alt2``) is kept, under that name, for comparison only.
See ``docs/statistics.md``.

>>> from referee.tournament.stats.elo import Pentanomial
>>> r = sprt_pairs(Pentanomial((0, 0, 0, 0, 50)), elo0=0, elo1=10)
>>> round(r.llr, 2), r.verdict
(1.42, 'continue')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from referee.tournament.defaults import EloModel
from referee.tournament.stats.elo import (
    PAIR_VALUES,
    Pentanomial,
    logistic,
    regularized,
    secular_root,
)

MIN_SPRT_UNITS = 0
"""Default number of pairs (or games) before the SPRT may stop (see ``docs/statistics.md``)."""
NELO_PER_T = 800.0 / math.log(10.0)
"""Normalized Elo per unit of per-game t-value (about 347.4), as fishtest."""

Verdict = Literal["accept", "reject", "continue"]


def sprt_bounds(
    elo0: float, elo1: float, alpha: float, beta: float, min_units: int = 0
) -> tuple[float, float]:
    """Wald's bounds (ln(beta / (1 - alpha)), ln((1 - beta) / alpha)); ValueError names a bad
    parameter (elo0 < elo1; alpha, beta in (0, 1) with alpha + beta < 1; min_units >= 0)."""
    if min_units < 0:
        raise ValueError(f"min_pairs must be >= 0, got {min_units!r}")
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be < elo1, got elo0={elo0!r}, elo1={elo1!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    if not alpha + beta < 1.0:
        raise ValueError(f"alpha + beta must be < 1, got alpha={alpha!r}, beta={beta!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def mle_with_t(
    probs: Sequence[float], values: Sequence[float], ref: float, t: float
) -> list[float]:
    """The maximum-likelihood distribution with t-value (mean - ref) / sd = ``t``, by the
    fixed-point iteration fishtest uses (each step a mean-type constraint)."""
    q = [1.0 / len(values)] * len(values)
    for _ in range(50):
        mu = sum(p * v for p, v in zip(q, values, strict=True))
        sigma = math.sqrt(sum(p * (v - mu) ** 2 for p, v in zip(q, values, strict=True)))
        shifts = [v - ref - t * sigma * (1.0 + ((mu - v) / sigma) ** 2) / 2.0 for v in values]
        x = secular_root(shifts, probs)
        new = [p / (1.0 + x * a) for p, a in zip(probs, shifts, strict=True)]
        if max(abs(a - b) for a, b in zip(new, q, strict=True)) < 1e-12:
            return new
        q = new
    return q


def _llr_between(
    n: float, probs: Sequence[float], q0: Sequence[float], q1: Sequence[float]
) -> float:
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, q0, q1, strict=True))


def llr_logistic(counts: Sequence[int], values: Sequence[float], s0: float, s1: float) -> float:
    """Exact GSPRT log-likelihood ratio of mean score s1 against s0 (fishtest's
    ``LLR_logistic``): N sum p_i ln(q1_i / q0_i), regularised counts. No counts: 0."""
    return llr_logistic_from(counts, values, s0, s1, (0.0, 0.0))[0]


def llr_logistic_from(
    counts: Sequence[int],
    values: Sequence[float],
    s0: float,
    s1: float,
    roots: tuple[float, float],
) -> tuple[float, tuple[float, float]]:
    """:func:`llr_logistic`, its root finders started from ``roots`` (the two secular roots
    of a nearby sample, as returned here): a sequential test's counts change by one unit."""
    if not any(counts):
        return 0.0, (0.0, 0.0)
    n, probs = regularized(counts)
    shifts0, shifts1 = [v - s0 for v in values], [v - s1 for v in values]
    x0, x1 = secular_root(shifts0, probs, roots[0]), secular_root(shifts1, probs, roots[1])
    total = 0.0
    for p, a0, a1 in zip(probs, shifts0, shifts1, strict=True):
        total += p * math.log((1.0 + x0 * a0) / (1.0 + x1 * a1))
    return n * total, (x0, x1)


def llr_normalized(counts: Sequence[int], values: Sequence[float], t0: float, t1: float) -> float:
    """Exact GSPRT log-likelihood ratio of t-value t1 against t0 (fishtest's
    ``LLR_normalized``), t-values of the unit's score around 1/2. No counts: 0."""
    if not any(counts):
        return 0.0
    n, probs = regularized(counts)
    q0, q1 = (mle_with_t(probs, values, 0.5, t) for t in (t0, t1))
    return _llr_between(n, probs, q0, q1)


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
    elo_model: EloModel = "logistic"


def verdict(llr: float, lower: float, upper: float, units: int, min_units: int) -> Verdict:
    """``"accept"`` at or past the upper bound, ``"reject"`` at or past the lower one,
    otherwise (or before ``min_units`` units) ``"continue"``."""
    if units < min_units or lower < llr < upper:
        return "continue"
    return "accept" if llr >= upper else "reject"


def llr(
    counts: Sequence[int], values: Sequence[float], elo0: float, elo1: float, model: EloModel
) -> float:
    """The exact GSPRT LLR of ``counts`` (classes scored ``values``) in the given Elo model."""
    if model == "logistic":
        return llr_logistic(counts, values, logistic(elo0), logistic(elo1))
    if model != "normalized":
        raise ValueError(f"elo_model must be 'logistic' or 'normalized', got {model!r}")
    # A pair's t-value is sqrt(2) times the per-game one (two games per pair), as fishtest.
    scale = math.sqrt(2.0) if len(values) == 5 else 1.0
    return llr_normalized(counts, values, scale * elo0 / NELO_PER_T, scale * elo1 / NELO_PER_T)


def _sprt(
    counts: Sequence[int], values: Sequence[float], pairs: int, games: int,
    elo0: float, elo1: float, alpha: float, beta: float, min_units: int, model: EloModel,
) -> SprtResult:  # fmt: skip
    lower, upper = sprt_bounds(elo0, elo1, alpha, beta, min_units)
    value = llr(counts, values, elo0, elo1, model)
    units = sum(counts)
    decided = verdict(value, lower, upper, units, min_units)
    return SprtResult(value, lower, upper, decided, elo0, elo1, alpha, beta, pairs, games, model)


def sprt_pairs(
    p: Pentanomial,
    *,
    elo0: float = 0.0,
    elo1: float = 20.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    min_pairs: int = MIN_SPRT_UNITS,
    elo_model: EloModel = "logistic",
) -> SprtResult:
    """GSPRT of H0: elo = elo0 against H1: elo = elo1 over duplicate pairs (pentanomial).

    Verdict "accept" (H1) when LLR >= ln((1 - beta) / alpha), "reject" (H0) when LLR <=
    ln(beta / (1 - alpha)), else "continue" -- always "continue" before ``min_pairs`` pairs.
    ``elo_model`` "logistic" (elo0, elo1 in logistic Elo) or "normalized" (normalized Elo).
    No pairs: LLR 0. Raises ValueError naming a bad parameter.
    """
    n = p.pairs
    return _sprt(p.counts, PAIR_VALUES, n, 2 * n, elo0, elo1, alpha, beta, min_pairs, elo_model)
