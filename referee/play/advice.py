"""What the page shows beside a ``discard`` request: the arrangements a knock may declare.

For each legal knock the referee's own choice (:func:`~referee.rules.knock_arrangement`, what a
knock without melds would be scored with) comes first, then the other arrangements of the
kept cards within the knock limit, least deadwood first. A declared arrangement is checked again
by :func:`declared_ok` before it is sent.
"""

from __future__ import annotations

from typing import Any

from referee.rules import CardSet, Meld, knock_arrangement
from referee.rules.arrangement import arrangements
from referee.rules.cards import mask_value
from referee.rules.errors import RulesError

__all__ = ["MAX_OPTIONS", "declared_ok", "knock_options"]

MAX_OPTIONS = 6
"""Arrangements offered per knock card (the best first)."""


def _cards(mask: int) -> list[str]:
    return [str(card) for card in CardSet(mask)]


def knock_options(hand: list[str], card: str, knock_limit: int) -> dict[str, Any]:
    """The arrangements of ``hand`` without ``card``: ``{"best": 0, "options": [{"melds",
    "deadwood"}...]}``, the referee's choice first."""
    kept = CardSet.parse(" ".join(c for c in hand if c != card)).mask
    best = tuple(m.mask for m in knock_arrangement(CardSet(kept), knock_limit))
    scored: list[tuple[int, list[list[str]]]] = []
    for arrangement in arrangements(kept):
        covered = 0
        for meld in arrangement:
            covered |= meld
        dead = mask_value(kept & ~covered)
        if dead <= knock_limit and tuple(sorted(arrangement)) != tuple(sorted(best)):
            scored.append((dead, [_cards(m) for m in arrangement]))
    scored.sort(key=lambda item: (item[0], len(item[1])))
    best_dead = mask_value(kept & ~sum(best))
    options = [{"melds": [_cards(m) for m in best], "deadwood": best_dead}]
    options += [{"melds": melds, "deadwood": dead} for dead, melds in scored]
    return {"best": 0, "options": options[:MAX_OPTIONS]}


def declared_ok(hand: list[str], card: str, melds: Any, knock_limit: int) -> str | None:
    """Why ``melds`` cannot be declared with a knock of ``card`` from ``hand``, or None."""
    if not isinstance(melds, list) or not all(isinstance(m, list) for m in melds):
        return "melds must be a list of lists of cards"
    kept = CardSet.parse(" ".join(c for c in hand if c != card)).mask
    covered = 0
    try:
        for meld in melds:
            if not all(isinstance(c, str) for c in meld):
                return "a card must be text"
            mask = Meld.from_cards(CardSet.parse(" ".join(meld))).mask
            if mask & ~kept or mask & covered:
                return f"meld {' '.join(meld)} is not made of your kept cards, once each"
            covered |= mask
    except (RulesError, ValueError) as err:
        return str(err)
    if mask_value(kept & ~covered) > knock_limit:
        return "that arrangement leaves deadwood above the knock limit"
    return None
