"""Card strings as they appear on the wire.

A card is exactly two ASCII characters: a rank from ``A23456789TJQK`` followed by a
suit from ``cdhs`` (clubs, diamonds, hearts, spades). Nothing else is a card: no
lower-case ranks, no ``10``, no upper-case suits, no whitespace.

>>> is_card("Td"), is_card("10d"), is_card("td"), is_card("TD")
(True, False, False, False)
>>> len(ALL_CARDS), ALL_CARDS[:3]
(52, ('Ac', 'Ad', 'Ah'))
"""

from __future__ import annotations

__all__ = ["ALL_CARDS", "CARD_SET", "RANKS", "SUITS", "is_card"]

RANKS = "A23456789TJQK"
"""Ranks in ascending order (ace low)."""

SUITS = "cdhs"
"""Suits: clubs, diamonds, hearts, spades."""

ALL_CARDS: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)
"""The 52 canonical card strings, ordered by rank then suit."""

CARD_SET: frozenset[str] = frozenset(ALL_CARDS)
"""The same 52 strings as a set, for fast membership tests."""


def is_card(value: object) -> bool:
    """Whether ``value`` is a canonical card string."""
    return type(value) is str and value in CARD_SET
