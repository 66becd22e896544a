"""Cards, card text and immutable card sets.

A card is one of 52 interned :class:`Card` values. Its *index* is ``suit * 13 + rank - 1``
with suits ordered clubs, diamonds, hearts, spades (``cdhs``), so a hand is a 52-bit mask in
which each suit occupies a 13-bit row, ace lowest. :class:`CardSet` wraps such a mask.

>>> parse_cards("As 2c Td Kh")
(Card.parse('As'), Card.parse('2c'), Card.parse('Td'), Card.parse('Kh'))
>>> str(CardSet.of(parse_cards("Kh 2c 10d A♠")))
'2c Td Kh As'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypeVar

from referee.rules.errors import CardParseError

__all__ = [
    "DECK",
    "FULL_MASK",
    "RANK_CHARS",
    "SUIT_CHARS",
    "Card",
    "CardSet",
    "Rank",
    "Suit",
    "card_value",
    "mask_table",
    "mask_value",
    "parse_cards",
    "row_table",
    "row_table_by_bit",
]

T = TypeVar("T")


def row_table(extend: Callable[[T, int], T], empty: T) -> tuple[T, ...]:
    """One value per 13-bit suit row, in row order: row 0 is ``empty``, and every other row is
    ``extend(value of the row without its highest bit, index of that bit)``, one call per row
    (building the 8,192 rows this way takes about a millisecond, where computing each row from
    its bits took most of the referee's start-up). The rows whose highest bit is ``bit`` are
    the rows below ``1 << bit``, each extended by ``bit``: the table doubles once per bit.

    >>> row_table(lambda below, bit: below + (bit,), ())[0b1011]
    (0, 1, 3)
    """
    return row_table_by_bit(lambda rows, bit: [extend(below, bit) for below in rows], empty)


def row_table_by_bit(extend_rows: Callable[[list[T], int], list[T]], empty: T) -> tuple[T, ...]:
    """:func:`row_table` given ``extend_rows(rows, bit)``: the values of all the rows below
    ``1 << bit``, each extended by ``bit``, in one call (a comprehension instead of a call per
    row: the tables of this module then cost about a quarter of the time at import).

    >>> row_table_by_bit(lambda rows, bit: [below + 2**bit for below in rows], 0)[0b1011]
    11
    """
    table = [empty]
    for bit in range(13):
        table += extend_rows(table, bit)
    return tuple(table)


RANK_CHARS = "A23456789TJQK"
"""Canonical rank characters, ace (1) to king (13)."""
SUIT_CHARS = "cdhs"
"""Canonical suit characters in index order: clubs, diamonds, hearts, spades."""
FULL_MASK = (1 << 52) - 1
"""The mask holding all 52 cards."""
ROW_MASK = (1 << 13) - 1


class Suit(IntEnum):
    """Suits in index order (``cdhs``); the order has no meaning in play."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


class Rank(IntEnum):
    """Ranks, ace low (1) to king (13)."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def deadwood_value(self) -> int:
        """Points the rank counts as deadwood: ace 1, pips face value, T/J/Q/K 10."""
        return min(int(self), 10)


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card. Use :data:`DECK`, :meth:`from_index` or :meth:`parse`."""

    rank: Rank
    """Rank, ace low."""
    suit: Suit
    """Suit."""
    index: int = field(init=False, compare=False, repr=False)
    """Position in :data:`DECK` and bit in a :class:`CardSet` mask (0..51)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", int(self.suit) * 13 + int(self.rank) - 1)

    def __hash__(self) -> int:
        return self.index

    @property
    def value(self) -> int:
        """Deadwood value of the card."""
        return min(int(self.rank), 10)

    @property
    def mask(self) -> int:
        """The card's bit."""
        return 1 << self.index

    @staticmethod
    def from_index(index: int) -> Card:
        """The card with the given index (0..51).

        >>> Card.from_index(51)
        Card.parse('Ks')
        """
        return DECK[index]

    @staticmethod
    def parse(text: str) -> Card:
        """Parse one card: canonical ``As``/``Td``, also ``AS``, ``10h``, ``a♠``.

        >>> Card.parse("10h"), Card.parse("q♦")
        (Card.parse('Th'), Card.parse('Qd'))
        """
        token = text.strip()
        if len(token) < 2:
            raise CardParseError(text, "too short")
        rank_text, suit_text = token[:-1].upper(), token[-1]
        if rank_text == "10":
            rank_text = "T"
        suit_char = _SUIT_ALIASES.get(suit_text, _SUIT_ALIASES.get(suit_text.lower()))
        if len(rank_text) != 1 or rank_text not in RANK_CHARS:
            raise CardParseError(text, f"unknown rank {token[:-1]!r}")
        if suit_char is None:
            raise CardParseError(text, f"unknown suit {suit_text!r}")
        return DECK[SUIT_CHARS.index(suit_char) * 13 + RANK_CHARS.index(rank_text)]

    def __str__(self) -> str:
        return RANK_CHARS[self.rank - 1] + SUIT_CHARS[self.suit]

    def __repr__(self) -> str:
        return f"Card.parse('{self}')"


_SUIT_ALIASES = {
    "c": "c", "d": "d", "h": "h", "s": "s",
    "♣": "c", "♦": "d", "♥": "h", "♠": "s",
    "♧": "c", "♢": "d", "♡": "h", "♤": "s",
}  # fmt: skip

DECK: tuple[Card, ...] = tuple(
    Card(Rank(rank), Suit(suit)) for suit in range(4) for rank in range(1, 14)
)
"""All 52 cards in index order."""

CARD_TEXT: tuple[str, ...] = tuple(str(card) for card in DECK)
"""Canonical text of each card, by index."""

_VALUES = tuple(card.value for card in DECK)
_BIT_VALUE = tuple(min(bit + 1, 10) for bit in range(13))
"""The card value of each bit of a suit row (ace 1 ... ten and faces 10)."""
_ROW_VALUE: tuple[int, ...] = row_table_by_bit(
    lambda rows, bit: [below + _BIT_VALUE[bit] for below in rows], 0
)


def card_value(index: int) -> int:
    """Deadwood value of the card with this index."""
    return _VALUES[index]


def mask_value(mask: int) -> int:
    """Total deadwood value of the cards in a mask.

    >>> mask_value(CardSet.of(parse_cards("As Ks 5h")).mask)
    16
    """
    return (
        _ROW_VALUE[mask & ROW_MASK]
        + _ROW_VALUE[mask >> 13 & ROW_MASK]
        + _ROW_VALUE[mask >> 26 & ROW_MASK]
        + _ROW_VALUE[mask >> 39]
    )


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse whitespace- or comma-separated cards; the error names the bad token.

    This is the rules engine's grammar for people (the Python API, tests, the docs), and it is
    lenient on purpose: besides what :meth:`Card.parse` accepts (``10h``, ``AS``, ``a♠``), a
    rank ``1`` is an ace (``1♥``, as one of the rule texts writes it; ``10`` stays a ten).
    The wire takes only the canonical form (``Ah``, ``Td``: docs/protocol.md, "Cards"); the
    referee writes only that form. A card named twice is refused: no hand, pile or deck holds
    one card twice.

    >>> parse_cards("3c,3d 3h 1♥")
    (Card.parse('3c'), Card.parse('3d'), Card.parse('3h'), Card.parse('Ah'))
    >>> parse_cards("As Xq")
    Traceback (most recent call last):
    referee.rules.errors.CardParseError: bad card 'Xq': unknown rank 'X'
    >>> parse_cards("3c 3C 3h")
    Traceback (most recent call last):
    referee.rules.errors.CardParseError: bad card '3C': 3c is named twice
    """
    cards = tuple(_parse_token(token) for token in text.replace(",", " ").split())
    if len(set(cards)) != len(cards):
        seen: set[Card] = set()
        for token in text.replace(",", " ").split():
            card = _parse_token(token)
            if card in seen:
                raise CardParseError(token, f"{card} is named twice")
            seen.add(card)
    return cards


def _parse_token(token: str) -> Card:
    if len(token) == 2 and token[0] == "1":
        try:
            return Card.parse("A" + token[1])
        except CardParseError:
            raise CardParseError(token, f"unknown suit {token[1]!r}") from None
    return Card.parse(token)


_ROW_BITS: tuple[tuple[int, ...], ...] = row_table_by_bit(
    lambda rows, bit: [(*below, bit) for below in rows], ()
)
_ROW_TOP: tuple[int, ...] = row_table_by_bit(lambda rows, bit: [_BIT_VALUE[bit]] * len(rows), 0)
"""The highest card value of each row: that of its highest bit (values never fall with rank)."""


def bit_indices(mask: int) -> list[int]:
    """Indices of the set bits of a 52-bit ``mask``, lowest first (table driven, fast).

    >>> bit_indices(CardSet.parse("Ac Kc As").mask)
    [0, 12, 39]
    """
    out = list(_ROW_BITS[mask & ROW_MASK])
    for shift in (13, 26, 39):
        row = mask >> shift & ROW_MASK
        if row:
            out.extend(shift + i for i in _ROW_BITS[row])
    return out


def mask_table(values: Sequence[T]) -> Callable[[int], tuple[T, ...]]:
    """A fast map from a 52-bit mask to the tuple of ``values[i]`` for each set bit ``i``,
    in index order, built from one precomputed table per suit row (4 lookups, 3 joins).

    >>> texts = mask_table([str(card) for card in DECK])
    >>> texts(CardSet.parse("Kh 2c").mask)
    ('2c', 'Kh')
    """
    if len(values) != 52:
        raise ValueError("mask_table needs exactly 52 values")

    def suit_rows(suit: int) -> tuple[tuple[T, ...], ...]:
        row = values[13 * suit : 13 * suit + 13]
        return row_table_by_bit(lambda rows, bit: [(*below, row[bit]) for below in rows], ())

    rows = [suit_rows(suit) for suit in range(4)]
    r0, r1, r2, r3 = rows

    def pick(mask: int) -> tuple[T, ...]:
        return (
            r0[mask & ROW_MASK]
            + r1[mask >> 13 & ROW_MASK]
            + r2[mask >> 26 & ROW_MASK]
            + r3[mask >> 39]
        )

    return pick


def iter_bits(mask: int) -> Iterator[int]:
    """Indices of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@dataclass(frozen=True, slots=True)
class CardSet:
    """An immutable set of cards stored as a 52-bit mask; iterates in index order."""

    mask: int = 0
    """Bit ``i`` is set when ``DECK[i]`` is in the set."""

    @staticmethod
    def of(cards: Iterable[Card]) -> CardSet:
        """The set of the given cards (duplicates collapse)."""
        mask = 0
        for card in cards:
            mask |= 1 << card.index
        return CardSet(mask)

    @staticmethod
    def parse(text: str) -> CardSet:
        """The set of the cards in ``text`` (see :func:`parse_cards`)."""
        return CardSet.of(parse_cards(text))

    def __contains__(self, card: object) -> bool:
        return isinstance(card, Card) and bool(self.mask >> card.index & 1)

    def __iter__(self) -> Iterator[Card]:
        return (DECK[i] for i in iter_bits(self.mask))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __bool__(self) -> bool:
        return self.mask != 0

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def add(self, card: Card) -> CardSet:
        """A new set with ``card`` added."""
        return CardSet(self.mask | 1 << card.index)

    def remove(self, card: Card) -> CardSet:
        """A new set without ``card``."""
        return CardSet(self.mask & ~(1 << card.index))

    @property
    def value(self) -> int:
        """Total deadwood value of the cards."""
        return mask_value(self.mask)

    def __str__(self) -> str:
        return " ".join(CARD_TEXT[i] for i in iter_bits(self.mask))

    def __repr__(self) -> str:
        return f"CardSet.parse('{self}')"
