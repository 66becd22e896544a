"""The melds shown for a knocker that declares none: chosen blind, from its own ten cards.

At a table the knocker lays its melds down before the defender shows a card, so the engine's
choice for a knock without declared melds reads nothing but the knocker's ten kept cards: not
the defender's hand, not the stock, not the discard pile. Anyone can recompute it from the
knocker's hand in ``hand_end``. Among every arrangement of those cards (docs/rules.md, "After
a knock"):

1. the least deadwood (the knock is legal only if that is within the knock limit);
2. then the fewest **exposed** cards: the cards outside the ten that could be laid off directly
   onto one of the melds (the missing fourth card of a three-card set; the card just below and
   the card just above a run, where the suit has one). A card the knocker holds, in a meld or as
   deadwood, cannot be laid off and is not counted; a card that fits two melds counts once;
3. then the smallest meld list, each meld written as its cards' indices in ascending order
   (:attr:`Card.index`: clubs A-K 0-12, diamonds 13-25, hearts 26-38, spades 39-51) and the
   melds sorted, compared lexicographically.

The melds are listed sets by rank, then runs by suit (the order of :func:`melds_in`).

>>> melds = knock_arrangement(CardSet.parse("3c 3d 3h 2h 4h 9s Ts Js Qs Ks"), 10)
>>> [str(m) for m in melds]  # 3s and 8s exposed; 2h 3h 4h would expose Ah, 5h and 8s
['3c 3d 3h', '9s Ts Js Qs Ks']
>>> str(CardSet(layoff_exposure(CardSet.parse("3c 3d 3h 2h 4h 9s Ts Js Qs Ks").mask, melds)))
'3s 8s'
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.rules.cards import CardSet, bit_indices, mask_value
from referee.rules.melds import _COLUMN, Meld, MeldKind, meld_kind, melds_in

__all__ = ["arrangements", "knock_arrangement", "layoff_exposure"]


def arrangements(mask: int) -> list[tuple[int, ...]]:
    """Every packing of the melds in ``mask`` (the empty one first), as tuples of meld masks.

    Each tuple lists its melds in :func:`melds_in` order.

    >>> hand = CardSet.parse("7c 7d 7h 5h 6h Kd").mask
    >>> [[str(CardSet(m)) for m in a] for a in arrangements(hand)]
    [[], ['7c 7d 7h'], ['5h 6h 7h']]
    """
    melds = melds_in(mask)
    out: list[tuple[int, ...]] = [()]

    def extend(start: int, used: int, chosen: tuple[int, ...]) -> None:
        for i in range(start, len(melds)):
            if melds[i] & used == 0:
                nxt = (*chosen, melds[i])
                out.append(nxt)
                extend(i + 1, used | melds[i], nxt)

    extend(0, 0, ())
    return out


def layoff_exposure(kept: int, melds: Iterable[Meld | int]) -> int:
    """The cards outside ``kept`` that could be laid off directly onto one of ``melds`` (mask).

    >>> melds = [Meld.from_cards(parse_cards(m)) for m in ("7c 7d 7h", "4s 5s 6s 7s")]
    >>> str(CardSet(layoff_exposure(CardSet.parse("7c 7d 7h 4s 5s 6s 7s").mask, melds)))
    '3s 8s'
    """
    exposed = 0
    for meld in melds:
        mask = meld.mask if isinstance(meld, Meld) else meld
        low = (mask & -mask).bit_length() - 1
        rank = low % 13
        if meld_kind(mask) is MeldKind.SET:
            exposed |= _COLUMN[rank] & ~mask
            continue
        high = mask.bit_length() - 1
        if rank > 0:
            exposed |= 1 << (low - 1)
        if high % 13 < 12:
            exposed |= 1 << (high + 1)
    return exposed & ~kept


def _blind_key(kept: int, arrangement: tuple[int, ...]) -> tuple[int, int, list[list[int]]]:
    """Sort key of an arrangement: deadwood, exposed cards, then the sorted meld list."""
    covered = 0
    for meld in arrangement:
        covered |= meld
    exposed = layoff_exposure(kept, arrangement).bit_count()
    return mask_value(kept & ~covered), exposed, sorted(bit_indices(m) for m in arrangement)


def knock_arrangement(cards: CardSet, knock_limit: int) -> tuple[Meld, ...]:
    """The arrangement of ``cards`` (a knocker's ten kept cards) the engine shows when the
    knocker declares none; ``ValueError`` if even the least deadwood is above ``knock_limit``.

    A function of ``cards`` alone: the rule in the module docstring.

    >>> [str(m) for m in knock_arrangement(CardSet.parse("7c 7d 7h 7s 4s 5s 6s Ac Ad 2h"), 10)]
    ['7c 7d 7h 7s', '4s 5s 6s']
    """
    kept = cards.mask
    best = min(arrangements(kept), key=lambda arrangement: _blind_key(kept, arrangement))
    covered = 0
    for meld in best:
        covered |= meld
    if mask_value(kept & ~covered) > knock_limit:
        raise ValueError("knock with deadwood above the knock limit")
    return tuple(Meld.from_mask(m) for m in best)
