"""A rating list: logistic (Elo) Bradley-Terry ratings by maximum likelihood over every game.

Each game scores 1, 0.5 or 0, a draw counting as half a win for each side (Ordo's default
convention); P(i scores against j) = logistic(r_i - r_j). The ratings maximise the likelihood
of all games at once, anchored so that their mean is 0, by Newton's method with a line search
(the log-likelihood is concave), stopped when no rating moves by more than ``tolerance`` Elo.
The 95% intervals are Wald intervals from the inverse of the Fisher information, relative to
the mean of the field. A finite maximum exists only when the "scored against" graph is strongly
connected; otherwise nothing is invented: the fit reports which group took every point from
which. ``prior_draws`` adds that many virtual draws to every pairing that was played (off by
default). See ``docs/statistics.md`` ("Ratings").

>>> fit = fit_ratings(["a", "b"], {("a", "b"): (3.0, 4)})
>>> [round(r.elo, 1) for r in fit.ratings], fit.status
([95.4, -95.4], 'ok')
>>> fit_ratings(["a", "b"], {("a", "b"): (4.0, 4)}).status
'no finite estimate'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from referee.tournament.stats.elo import Z95

ELO_PER_NATURAL = 400.0 / math.log(10.0)
"""Elo per natural-log unit of the odds."""

FitStatus = Literal["ok", "no finite estimate", "empty"]


@dataclass(frozen=True)
class Rating:
    """One bot's rating relative to the mean of the rated field, with a 95% interval; all
    None when there is no finite estimate (or the bot played no game)."""

    name: str
    games: int
    elo: float | None
    lower: float | None
    upper: float | None


@dataclass(frozen=True)
class RatingFit:
    """The rating list, in the order of the names given, and how the fit went."""

    ratings: tuple[Rating, ...]
    status: FitStatus
    note: str
    iterations: int
    prior_draws: float
    unlinked: tuple[tuple[str, ...], ...] = ()
    """The groups of bots that never played each other, when there are several (no prior on
    the pairings played links them; only games between them do); else empty."""


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse with partial pivoting (small, well-conditioned matrices)."""
    k = len(matrix)
    a = [row[:] + [float(i == j) for j in range(k)] for i, row in enumerate(matrix)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        scale = a[col][col]
        a[col] = [v / scale for v in a[col]]
        for r in range(k):
            if r != col and a[r][col] != 0.0:
                factor = a[r][col]
                a[r] = [v - factor * w for v, w in zip(a[r], a[col], strict=True)]
    return [row[k:] for row in a]


def _components(k: int, edges: list[set[int]]) -> list[list[int]]:
    """Strongly connected components (Kosaraju), each sorted."""
    order: list[int] = []
    seen = [False] * k
    for start in range(k):
        if seen[start]:
            continue
        seen[start] = True
        stack = [(start, iter(sorted(edges[start])))]
        while stack:
            node, children = stack[-1]
            child = next((c for c in children if not seen[c]), None)
            if child is None:
                order.append(node)
                stack.pop()
            else:
                seen[child] = True
                stack.append((child, iter(sorted(edges[child]))))
    reverse: list[set[int]] = [set() for _ in range(k)]
    for i in range(k):
        for j in edges[i]:
            reverse[j].add(i)
    label = [-1] * k
    groups: list[list[int]] = []
    for root in reversed(order):
        if label[root] >= 0:
            continue
        label[root], todo, group = len(groups), [root], []
        while todo:
            node = todo.pop()
            group.append(node)
            for nxt in reverse[node]:
                if label[nxt] < 0:
                    label[nxt] = len(groups)
                    todo.append(nxt)
        groups.append(sorted(group))
    return groups


def _separation_note(names: list[str], groups: list[list[int]], w: list[list[float]]) -> str:
    def show(group: list[int]) -> str:
        return "{" + ", ".join(names[i] for i in group) + "}"

    where = {i: g for g, group in enumerate(groups) for i in group}
    lines: list[str] = []
    for g, group in enumerate(groups):
        # Between two components points flow one way only, or they would be one component.
        beaten = sorted({where[j] for i in group for j in range(len(names))
                         if w[i][j] > 0 and where[j] != g})  # fmt: skip
        lines.extend(f"{show(group)} took every point against {show(groups[h])}" for h in beaten)
    if not lines:
        lines = ["the bots form groups that never played each other: "
                 + " | ".join(show(group) for group in groups)]  # fmt: skip
    return "no finite maximum-likelihood ratings: " + "; ".join(lines)


def _log_likelihood(theta: list[float], w: list[list[float]], n: list[list[float]]) -> float:
    total = 0.0
    for i, row in enumerate(n):
        for j, games in enumerate(row):
            if games > 0 and w[i][j] > 0:
                total -= w[i][j] * math.log1p(math.exp(theta[j] - theta[i]))
    return total


def _newton(
    w: list[list[float]], n: list[list[float]], tolerance: float, max_iterations: int
) -> tuple[list[float], list[list[float]], int]:
    """Maximum-likelihood ratings (natural units, mean 0), their covariance, iterations."""
    k = len(n)
    theta = [0.0] * k
    for iteration in range(1, max_iterations + 1):
        grad = [0.0] * k
        info = [[1.0 / k] * k for _ in range(k)]  # Fisher information + J/k (mean-0 gauge)
        for i in range(k):
            for j in range(k):
                if i != j and n[i][j] > 0:
                    p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
                    grad[i] += w[i][j] - n[i][j] * p
                    weight = n[i][j] * p * (1.0 - p)
                    info[i][i] += weight
                    info[i][j] -= weight
        inverse = _inverse(info)
        step = [sum(a * g for a, g in zip(row, grad, strict=True)) for row in inverse]
        before = _log_likelihood(theta, w, n)
        scale = 1.0
        while scale > 1e-6:
            trial = [t + scale * s for t, s in zip(theta, step, strict=True)]
            if _log_likelihood(trial, w, n) >= before - 1e-12 * abs(before):
                break
            scale /= 2.0
        theta = trial
        if max(abs(s) * scale for s in step) * ELO_PER_NATURAL < tolerance:
            covariance = [[a - 1.0 / k for a in row] for row in inverse]
            return theta, covariance, iteration
    raise ArithmeticError(f"the rating fit did not converge in {max_iterations} iterations")


def fit_ratings(
    names: Sequence[str],
    results: Mapping[tuple[str, str], tuple[float, int]],
    *,
    prior_draws: float = 0.0,
    tolerance: float = 1e-9,
    max_iterations: int = 100,
) -> RatingFit:
    """Maximum-likelihood ratings of ``names`` from ``results[(a, b)] = (a's total score
    against b, games)`` (both orders may appear; they add up).

    Bots without games get None. If the games do not pin down finite ratings (a group took
    every point from another, or groups never met) every rating is None, ``status`` is
    "no finite estimate" and ``note`` says why. ``prior_draws`` >= 0 virtual draws are added
    to every pairing played. Raises ValueError on a score outside [0, games] or an unknown name.
    """
    if not prior_draws >= 0.0 or math.isinf(prior_draws):
        raise ValueError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")
    index = {name: i for i, name in enumerate(names)}
    k = len(names)
    w = [[0.0] * k for _ in range(k)]
    n = [[0.0] * k for _ in range(k)]
    for (a, b), (score, games) in results.items():
        if a not in index or b not in index or a == b:
            raise ValueError(f"results name an unknown bot or a bot against itself: {a!r}, {b!r}")
        if games < 0 or not 0.0 <= score <= games:
            raise ValueError(f"{a} vs {b}: a score of {score!r} in {games!r} games is impossible")
        i, j = index[a], index[b]
        w[i][j] += score
        w[j][i] += games - score
        n[i][j] += games
        n[j][i] += games
    played = [i for i in range(k) if any(n[i])]
    counts = [int(sum(row)) for row in n]
    if not played:
        nothing = tuple(Rating(name, 0, None, None, None) for name in names)
        return RatingFit(nothing, "empty", "no games", 0, prior_draws)
    sub_w = [[w[i][j] + (prior_draws / 2 if n[i][j] else 0.0) for j in played] for i in played]
    sub_n = [[n[i][j] + (prior_draws if n[i][j] else 0.0) for j in played] for i in played]
    edges = [{b for b, score in enumerate(row) if score > 0} for row in sub_w]
    groups = _components(len(played), edges)
    if len(groups) > 1:
        note = _separation_note([names[i] for i in played], groups, sub_w)
        none = tuple(Rating(name, counts[i], None, None, None) for i, name in enumerate(names))
        met = [{b for b, games in enumerate(row) if games > 0} for row in sub_n]  # symmetric
        linked = _components(len(played), met)
        unlinked = tuple(tuple(names[played[i]] for i in g) for g in linked)
        return RatingFit(none, "no finite estimate", note, 0, prior_draws,
                         unlinked if len(linked) > 1 else ())  # fmt: skip
    theta, covariance, iterations = _newton(sub_w, sub_n, tolerance, max_iterations)
    ratings = [Rating(name, 0, None, None, None) for name in names]
    for row, i in enumerate(played):
        elo = theta[row] * ELO_PER_NATURAL
        half = Z95 * math.sqrt(max(covariance[row][row], 0.0)) * ELO_PER_NATURAL
        ratings[i] = Rating(names[i], counts[i], elo, elo - half, elo + half)
    return RatingFit(tuple(ratings), "ok", "", iterations, prior_draws)
