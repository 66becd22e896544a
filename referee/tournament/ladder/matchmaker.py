"""Who plays whom: the referee's choice, from the ratings and the availability of the players,
with randomness no entrant can predict or steer (docs/ladder.md, "Matchmaking").

The rule, for one pair among the available players (connected, not in a game, not retired):

1. the first player: with probability ``explore`` any of them alike; otherwise drawn with
   weight ``sigma**2``, so new and uncertain players play most;
2. its opponent: with probability ``explore`` any other alike; otherwise drawn with weight the
   match quality of the two (TrueSkill's draw probability: high for close ratings, and for
   uncertain ones), times ``repeat_weight`` if the two met in either one's previous pair.

Both draws come from the caller's random generator (the ladder's is the operating system's,
seeded by nobody). A choice costs time in proportion to the players available.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from referee.tournament.ladder.config import MatchmakingParams

__all__ = ["Candidate", "choose_pair", "match_quality"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """An available player as the matchmaker sees it."""

    name: str
    mu: float
    sigma: float
    last: str | None = None
    """The opponent of its previous pair, if any."""


def match_quality(a: Candidate, b: Candidate, beta: float) -> float:
    """TrueSkill's draw probability of ``a`` against ``b``: 1 for equal sure ratings, towards
    0 as the means part; uncertainty widens it."""
    spread = 2.0 * beta * beta + a.sigma * a.sigma + b.sigma * b.sigma
    gap = a.mu - b.mu
    return math.sqrt(2.0 * beta * beta / spread) * math.exp(-gap * gap / (2.0 * spread))


def _draw(rng: random.Random, items: Sequence[Candidate], weights: Sequence[float]) -> Candidate:
    total = math.fsum(weights)
    if not total > 0.0:
        return items[rng.randrange(len(items))]
    return rng.choices(items, weights=weights, k=1)[0]


def choose_pair(
    available: Sequence[Candidate],
    rng: random.Random,
    params: MatchmakingParams,
    *,
    beta: float,
) -> tuple[Candidate, Candidate] | None:
    """The next pair (in random seat order) among ``available``, or None if fewer than two."""
    if len(available) < 2:
        return None
    if rng.random() < params.explore:
        first = available[rng.randrange(len(available))]
    else:
        first = _draw(rng, available, [c.sigma * c.sigma for c in available])
    others = [c for c in available if c.name != first.name]
    if rng.random() < params.explore:
        second = others[rng.randrange(len(others))]
    else:
        weights = [
            match_quality(first, c, beta)
            * (params.repeat_weight if first.last == c.name or c.last == first.name else 1.0)
            for c in others
        ]
        second = _draw(rng, others, weights)
    return (first, second) if rng.random() < 0.5 else (second, first)
