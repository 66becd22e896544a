"""Melds, deadwood and the meld searches the rules need.

A *set* is 3 or 4 cards of one rank; a *run* is 3 or more consecutive cards of one suit, ace
low only (A-2-3 is a run, Q-K-A is not). The searches work on 52-bit masks (see
:mod:`referee.rules.cards`): the melds inside a hand are found with row arithmetic, and the best
arrangement is an exhaustive search over *packings* (sets of pairwise disjoint melds), which is
exact and small because a hand of at most 11 cards holds few melds.

>>> deadwood(parse_cards("3c 3d 3h 3s 4h 5h 6h 7h 6s 9s"))
15
>>> melds, rest = best_melds(parse_cards("As 2s 3s 7c 7d 7h Kd"))
>>> [str(m) for m in melds], str(rest)
(['7c 7d 7h', 'As 2s 3s'], 'Kd')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from referee.rules.cards import (
    _ROW_TOP,
    _ROW_VALUE,
    DECK,
    ROW_MASK,
    Card,
    CardSet,
    bit_indices,
    card_value,
    iter_bits,
    mask_value,
)
from referee.rules.compiled import compiled_module
from referee.rules.errors import InvalidMeld

__all__ = [
    "ALL_MELDS",
    "Meld",
    "MeldKind",
    "best_melds",
    "deadwood",
    "knock_discards",
    "meld_cover",
    "melds_in",
    "packings",
]


class MeldKind(StrEnum):
    """The two kinds of meld."""

    SET = "set"
    RUN = "run"


@dataclass(frozen=True, slots=True)
class Meld:
    """A validated set or run. Build with :meth:`from_cards` or :meth:`from_mask`."""

    kind: MeldKind
    """Set or run."""
    cards: CardSet
    """The meld's cards."""

    @staticmethod
    def from_mask(mask: int) -> Meld:
        """Validate the cards of ``mask`` as a meld; raises :class:`InvalidMeld`."""
        kind = meld_kind(mask)
        if kind is None:
            count = mask.bit_count()
            reason = "fewer than 3 cards" if count < 3 else "neither a set nor a run"
            raise InvalidMeld(str(CardSet(mask)), reason)
        return Meld(kind, CardSet(mask))

    @staticmethod
    def from_cards(cards: Iterable[Card]) -> Meld:
        """Validate ``cards`` as a meld.

        >>> Meld.from_cards(parse_cards("Qs Ks As"))
        Traceback (most recent call last):
        referee.rules.errors.InvalidMeld: invalid meld [As Qs Ks]: neither a set nor a run
        """
        cards = tuple(cards)
        cardset = CardSet.of(cards)
        if len(cardset) != len(cards):
            raise InvalidMeld(" ".join(map(str, cards)), "repeats a card")
        return Meld.from_mask(cardset.mask)

    @property
    def mask(self) -> int:
        """The meld's cards as a mask."""
        return self.cards.mask

    def __str__(self) -> str:
        return str(self.cards)


def meld_kind(mask: int) -> MeldKind | None:
    """The kind of meld the cards of ``mask`` form, or None."""
    count = mask.bit_count()
    if count < 3:
        return None
    low = (mask & -mask).bit_length() - 1
    rank = low % 13
    if count <= 4 and mask & ~(_COLUMN[rank]) == 0:
        return MeldKind.SET
    row = mask >> (low - rank)
    if row >> 13 == 0 and row == ((1 << count) - 1) << rank:
        return MeldKind.RUN
    return None


_COLUMN = tuple(sum(1 << (suit * 13 + rank) for suit in range(4)) for rank in range(13))


def _runs_in_row(bits: int) -> tuple[int, ...]:
    """Every run (as a 13-bit row mask) contained in a suit row."""
    runs = []
    for start in range(11):
        length = 0
        while start + length < 13 and bits >> (start + length) & 1:
            length += 1
            if length >= 3:
                runs.append(((1 << length) - 1) << start)
    return tuple(runs)


_ROW_RUNS: list[tuple[int, ...] | None] = [None] * (1 << 13)


def melds_in(mask: int) -> tuple[int, ...]:
    """Masks of every meld whose cards are all in ``mask``: sets by rank, then runs by suit.

    >>> len(melds_in(CardSet.parse("4h 5h 6h 7h").mask))  # 4-5-6, 5-6-7, 4-5-6-7
    3
    """
    a = mask & ROW_MASK
    b = mask >> 13 & ROW_MASK
    c = mask >> 26 & ROW_MASK
    d = mask >> 39
    out: list[int] = []
    threes = (a & b & (c | d)) | (c & d & (a | b))
    while threes:
        low = threes & -threes
        threes ^= low
        col = mask & _COLUMN[low.bit_length() - 1]
        if col.bit_count() == 4:
            out.append(col)
            for bit in iter_bits(col):
                out.append(col ^ (1 << bit))
        else:
            out.append(col)
    for shift, row in ((0, a), (13, b), (26, c), (39, d)):
        if row & row >> 1 & row >> 2:
            runs = _ROW_RUNS[row]
            if runs is None:
                runs = _ROW_RUNS[row] = _runs_in_row(row)
            out.extend(run << shift for run in runs)
    return tuple(out)


_RUN_COVER = tuple(
    (s | s << 1 | s << 2) & ROW_MASK for s in (r & r >> 1 & r >> 2 for r in range(1 << 13))
)
"""For each 13-bit suit row, the cards that lie in some run of that row."""


def meld_cover(mask: int) -> int:
    """The cards of ``mask`` that belong to at least one meld (bit arithmetic only).

    >>> str(CardSet(meld_cover(CardSet.parse("3c 3d 3h 4h 5h 9s Ks").mask)))
    '3c 3d 3h 4h 5h'
    """
    a = mask & ROW_MASK
    b = mask >> 13 & ROW_MASK
    c = mask >> 26 & ROW_MASK
    d = mask >> 39
    threes = (a & b & (c | d)) | (c & d & (a | b))
    cover = (
        (_RUN_COVER[a] | threes)
        | (_RUN_COVER[b] | threes) << 13
        | (_RUN_COVER[c] | threes) << 26
        | (_RUN_COVER[d] | threes) << 39
    )
    return cover & mask


def packings(mask: int) -> list[tuple[int, int]]:
    """Every packing of the melds in ``mask`` as ``(covered_mask, covered_value)`` pairs.

    The empty packing ``(0, 0)`` comes first; the list is in a fixed, deterministic order.
    """
    melds = melds_in(mask)
    out = [(0, 0)]
    if not melds:
        return out
    values = [mask_value(m) for m in melds]
    count = len(melds)

    def extend(start: int, used: int, value: int) -> None:
        for i in range(start, count):
            meld = melds[i]
            if meld & used == 0:
                covered = used | meld
                total = value + values[i]
                out.append((covered, total))
                extend(i + 1, covered, total)

    extend(0, 0, 0)
    return out


_COMPILED = compiled_module("referee.rules._melds")
COMPILED = _COMPILED is not None
"""Whether the searches below run compiled (``referee/rules/_melds.c``, hands of at most
:data:`COMPILED_CARDS` cards): the same values as the Python functions, which run otherwise."""
COMPILED_CARDS = 11


def _python_best_packing(mask: int) -> tuple[int, int]:
    """The first packing (in :func:`packings` order) with the greatest covered value."""
    melds = melds_in(mask)
    if not melds:
        return 0, 0
    if len(melds) == 1:
        return melds[0], mask_value(melds[0])
    best_covered, best_value = 0, 0
    for covered, value in packings(mask):
        if value > best_value:
            best_covered, best_value = covered, value
    return best_covered, best_value


@lru_cache(maxsize=1 << 16)
def _best_packing(mask: int) -> tuple[int, int]:
    """The packing of ``mask`` with the greatest covered value: ``(covered, value)``."""
    if _COMPILED is not None and mask.bit_count() <= COMPILED_CARDS:
        result: tuple[int, int] = _COMPILED.best_packing(mask)
        return result
    return _python_best_packing(mask)


def deadwood_mask(mask: int) -> int:
    """Minimum deadwood of the cards in ``mask`` (any number of cards)."""
    if _COMPILED is not None and mask.bit_count() <= COMPILED_CARDS:
        value: int = _COMPILED.deadwood(mask)
        return value
    return mask_value(mask) - _best_packing(mask)[1]


def deadwood(cards: Iterable[Card] | CardSet) -> int:
    """The exact minimum deadwood of 0 to 11 cards over all meld arrangements.

    >>> deadwood(parse_cards("Ks Kh Kd 9c 9d"))
    18
    """
    mask = cards.mask if isinstance(cards, CardSet) else CardSet.of(cards).mask
    return deadwood_mask(mask)


def split_packing(mask: int, covered: int) -> tuple[Meld, ...]:
    """Split a packing's covered mask back into its melds (canonical order)."""
    chosen: list[Meld] = []
    remaining = covered
    for meld in melds_in(covered):
        if meld & remaining == meld and _covers_exactly(meld, remaining):
            chosen.append(Meld.from_mask(meld))
            remaining &= ~meld
    if remaining:
        raise AssertionError(f"packing of {CardSet(mask)} does not split")
    return tuple(chosen)


def _covers_exactly(meld: int, remaining: int) -> bool:
    """Whether ``remaining - meld`` can still be split into melds (or is empty)."""
    rest = remaining & ~meld
    if rest == 0:
        return True
    return _best_packing(rest)[0] == rest


def best_melds(cards: Iterable[Card] | CardSet) -> tuple[tuple[Meld, ...], CardSet]:
    """One optimal arrangement: ``(melds, deadwood_cards)`` with minimum deadwood value."""
    mask = cards.mask if isinstance(cards, CardSet) else CardSet.of(cards).mask
    if _COMPILED is not None and mask.bit_count() <= COMPILED_CARDS:
        found, rest = _COMPILED.best_split(mask)
        return found, CardSet(rest)
    covered, _ = _best_packing(mask)
    return split_packing(mask, covered), CardSet(mask & ~covered)


def _knock_discards(mask: int, limit: int) -> tuple[int, ...]:
    """Indices of the cards whose discard leaves deadwood <= limit.

    A cheap bound rejects most hands first: whatever is discarded, the cards in no meld at
    all (less the dearest of them) stay deadwood.
    """
    a = mask & ROW_MASK
    b = mask >> 13 & ROW_MASK
    c = mask >> 26 & ROW_MASK
    d = mask >> 39
    threes = (a & b & (c | d)) | (c & d & (a | b))
    fa = a & ~(_RUN_COVER[a] | threes)
    fb = b & ~(_RUN_COVER[b] | threes)
    fc = c & ~(_RUN_COVER[c] | threes)
    fd = d & ~(_RUN_COVER[d] | threes)
    free_value = _ROW_VALUE[fa] + _ROW_VALUE[fb] + _ROW_VALUE[fc] + _ROW_VALUE[fd]
    if free_value - max(_ROW_TOP[fa], _ROW_TOP[fb], _ROW_TOP[fc], _ROW_TOP[fd]) > limit:
        return ()
    return _knock_discards_exact(mask, limit)


@lru_cache(maxsize=1 << 16)
def _knock_discards_exact(mask: int, limit: int) -> tuple[int, ...]:
    """Exhaustive part of :func:`_knock_discards` (memoised)."""
    if _COMPILED is not None and mask.bit_count() <= COMPILED_CARDS:
        found: tuple[int, ...] = _COMPILED.knock_discards_exact(mask, limit)
        return found
    return _python_knock_discards_exact(mask, limit)


def _python_knock_discards_exact(mask: int, limit: int) -> tuple[int, ...]:
    """For each card, the best packing without it: those whose discard leaves ``<= limit``."""
    total = mask_value(mask)
    best_without = dict.fromkeys(bit_indices(mask), -1)
    for covered, value in packings(mask):
        for index in bit_indices(mask & ~covered):
            if value > best_without[index]:
                best_without[index] = value
    return tuple(
        index for index, value in best_without.items() if total - card_value(index) - value <= limit
    )


def knock_discards(cards: Iterable[Card] | CardSet, limit: int) -> tuple[Card, ...]:
    """The discards of an 11-card hand that leave deadwood <= ``limit`` (in index order).

    >>> knock_discards(parse_cards("7c 7d 7h Js Qs Ks As 2d 3h 4c 9c"), 10)
    (Card.parse('9c'),)
    """
    mask = cards.mask if isinstance(cards, CardSet) else CardSet.of(cards).mask
    return tuple(DECK[i] for i in _knock_discards(mask, limit))


def _all_melds() -> tuple[Meld, ...]:
    out = [Meld.from_mask(m) for m in melds_in((1 << 52) - 1)]
    return tuple(out)


ALL_MELDS: tuple[Meld, ...] = _all_melds()
"""Every meld of the deck: 65 sets (13 ranks x (4 threes + 1 four)) then 264 runs."""
if _COMPILED is not None:  # the Meld of each meld's cards, which the compiled best_split returns
    _COMPILED.setup({meld.mask: meld for meld in ALL_MELDS})
