"""Who plays whom: rounds drawn from the ratings, with a seed no entrant knows before the draw
(docs/ladder.md, "Matchmaking").

A **round** pairs every player of its draw once (one of them, drawn alike, sits out when they
are odd). Its inputs are the players in the draw with their ratings, what earlier rounds drew
(:class:`Meetings`) and the round's seed; nothing else, so the same inputs give the same round
(:func:`draw_round` is a pure function, which an auditor can run again). The players are put in
a random order; each in turn, while two are left unpaired, takes its opponent among the others
still unpaired:

1. never one it met twice or more already if one more meeting would make their meetings more
   than ``max_share`` of either one's drawn pairs, nor, when four are left, one that would
   leave the last two such a pair (the cap is lifted for a pick that would have no opponent
   left);
2. with probability ``explore`` any of the others alike; otherwise one drawn with weight the
   two players' match quality (TrueSkill's draw probability: high for close ratings, and for
   uncertain ones), times ``repeat_weight`` if the two were drawn together in either one's
   previous round;
3. the seats of the pair's first game are drawn (with duplicate deals the second swaps them).

The draws use Python's :class:`random.Random` seeded with the round's seed, and integer weights
(a float weight scaled to 2**32 and rounded), so that a replay on another machine does not
depend on the last bit of its ``exp``.
"""

from __future__ import annotations

import hmac
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from referee.tournament.ladder.config import MatchmakingParams

__all__ = [
    "ROUND_LABEL",
    "Candidate",
    "Draw",
    "Meetings",
    "draw_round",
    "match_quality",
    "round_seed",
]

ROUND_LABEL = b"gin-referee ladder round v1\0"
"""What a round's seed is derived under, with its number, from the ladder's key."""
_SCALE = 1 << 32


@dataclass(frozen=True, slots=True)
class Candidate:
    """A player of a round's draw, with its rating at the draw."""

    name: str
    mu: float
    sigma: float


@dataclass(slots=True)
class Meetings:
    """What earlier rounds drew: how often each two players were drawn together, each one's
    drawn pairs, and its opponent in the last round it was drawn in."""

    met: Counter[tuple[str, str]] = field(default_factory=Counter)
    pairs: Counter[str] = field(default_factory=Counter)
    last: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> Meetings:
        """The meetings of these pairs, drawn in this order."""
        meetings = cls()
        for a, b in pairs:
            meetings.add(a, b)
        return meetings

    def add(self, a: str, b: str) -> None:
        """Count one more pair of ``a`` and ``b``."""
        self.met[_key(a, b)] += 1
        self.pairs[a] += 1
        self.pairs[b] += 1
        self.last[a], self.last[b] = b, a

    def count(self, a: str, b: str) -> int:
        """How often ``a`` and ``b`` were drawn together."""
        return self.met[_key(a, b)]

    def capped(self, a: str, b: str, share: float) -> bool:
        """Whether ``a`` and ``b`` met twice or more and one more meeting would be more than
        ``share`` of either one's pairs."""
        met = self.count(a, b)
        return met >= 2 and any(met + 1 > share * (self.pairs[x] + 1) for x in (a, b))

    def repeat(self, a: str, b: str) -> bool:
        """Whether either was drawn against the other in its previous round."""
        return self.last.get(a) == b or self.last.get(b) == a


@dataclass(frozen=True, slots=True)
class Draw:
    """A round: its pairs (in the seat order of their first game) and the player sitting out."""

    pairs: tuple[tuple[str, str], ...]
    bye: str | None = None


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def round_seed(key: bytes, number: int) -> bytes:
    """Round ``number``'s seed: ``HMAC-SHA256(key, ROUND_LABEL + number)`` (32 bytes)."""
    return hmac.digest(key, ROUND_LABEL + str(number).encode(), "sha256")


def match_quality(a: Candidate, b: Candidate, beta: float) -> float:
    """TrueSkill's draw probability of ``a`` against ``b``: 1 for equal sure ratings, towards
    0 as the means part; uncertainty widens it."""
    spread = 2.0 * beta * beta + a.sigma * a.sigma + b.sigma * b.sigma
    gap = a.mu - b.mu
    return math.sqrt(2.0 * beta * beta / spread) * math.exp(-gap * gap / (2.0 * spread))


def _pick(rng: random.Random, items: Sequence[Candidate], weights: Sequence[float]) -> Candidate:
    scaled = [max(0, round(w * _SCALE)) for w in weights]
    total = sum(scaled)
    if total <= 0:
        return items[rng.randrange(len(items))]
    point = rng.randrange(total)
    for item, weight in zip(items, scaled, strict=True):
        if point < weight:
            return item
        point -= weight
    raise AssertionError("unreachable: the point is below the total")


def _allowed(
    first: Candidate, others: list[Candidate], meetings: Meetings, share: float
) -> list[Candidate]:
    """The opponents ``first`` may take (rule 1), best first: not capped with it and, when
    four are left, not leaving the last two a capped pair; failing that, not capped; failing
    that, any."""
    free = [c for c in others if not meetings.capped(first.name, c.name, share)]
    if len(others) == 3:

        def leaves_free(c: Candidate) -> bool:
            x, y = (o.name for o in others if o is not c)
            return not meetings.capped(x, y, share)

        return [c for c in free if leaves_free(c)] or free or others
    return free or others


def draw_round(
    candidates: Sequence[Candidate],
    meetings: Meetings,
    seed: bytes,
    params: MatchmakingParams,
    *,
    beta: float,
) -> Draw:
    """The round of ``candidates`` (see the module): every one paired once, but a bye when
    they are odd; no pair with fewer than two candidates."""
    rng = random.Random(int.from_bytes(seed, "big"))
    order = sorted(candidates, key=lambda c: c.name)
    if len({c.name for c in order}) != len(order):
        raise ValueError("a player is in the draw twice")
    rng.shuffle(order)
    bye = order.pop(rng.randrange(len(order))).name if len(order) % 2 else None
    pairs: list[tuple[str, str]] = []
    while len(order) >= 2:
        first = order.pop(0)
        allowed = _allowed(first, order, meetings, params.max_share)
        if rng.random() < params.explore:
            second = allowed[rng.randrange(len(allowed))]
        else:
            weights = [
                match_quality(first, c, beta)
                * (params.repeat_weight if meetings.repeat(first.name, c.name) else 1.0)
                for c in allowed
            ]
            second = _pick(rng, allowed, weights)
        order.remove(second)
        seats = (first.name, second.name) if rng.random() < 0.5 else (second.name, first.name)
        pairs.append(seats)
    return Draw(tuple(pairs), bye)
