"""The moves a player can make: a closed union of small frozen dataclasses.

Actions without a card are singletons (:data:`PASS_UPCARD`, :data:`TAKE_DISCARD`,
:data:`DRAW_STOCK`, :data:`BIG_GIN`); :func:`discard_action` and :func:`knock_action` return
interned instances so that listing legal actions allocates nothing.

>>> str(Knock(Card.parse("9c")))
'knock 9c'
>>> parse_action("discard Td") == discard_action(Card.parse("Td"))
True
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.rules.cards import DECK, Card, parse_cards
from referee.rules.errors import MalformedAction
from referee.rules.melds import Meld

__all__ = [
    "BIG_GIN",
    "DRAW_STOCK",
    "PASS_UPCARD",
    "TAKE_DISCARD",
    "Action",
    "BigGin",
    "Defend",
    "Discard",
    "DrawStock",
    "Knock",
    "PassUpcard",
    "TakeDiscard",
    "discard_action",
    "knock_action",
    "parse_action",
]


@dataclass(frozen=True, slots=True)
class PassUpcard:
    """Decline the first upcard."""

    def __str__(self) -> str:
        return "pass_upcard"


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the top card of the discard pile (also how the first upcard is taken)."""

    def __str__(self) -> str:
        return "take_discard"


@dataclass(frozen=True, slots=True)
class DrawStock:
    """Draw the top card of the stock."""

    def __str__(self) -> str:
        return "draw_stock"


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard a card and end the turn without knocking."""

    card: Card
    """The card put on the discard pile."""

    def __str__(self) -> str:
        return f"discard {self.card}"


@dataclass(frozen=True, slots=True)
class Knock:
    """Discard a card face down and knock (gin when the remaining cards have no deadwood).

    ``melds`` is the knocker's declared arrangement; ``None`` lets the engine choose it, blind:
    from the ten cards kept alone (:func:`~referee.rules.arrangement.knock_arrangement`).
    """

    card: Card
    """The card discarded with the knock."""
    melds: tuple[Meld, ...] | None = None
    """Declared melds of the ten cards kept, or None for the engine's (blind) choice."""

    def __str__(self) -> str:
        if self.melds is None:
            return f"knock {self.card}"
        return f"knock {self.card} melds " + " | ".join(str(m) for m in self.melds)


@dataclass(frozen=True, slots=True)
class BigGin:
    """Declare all eleven cards melded after the draw, without discarding."""

    def __str__(self) -> str:
        return "big_gin"


@dataclass(frozen=True, slots=True)
class Defend:
    """After a knock, the defender declares its own melds (docs/rules.md, "After a knock"):
    they are scored as declared, its other cards are deadwood, less what it can lay off. A
    defender that declares nothing is arranged for the least deadwood, as before."""

    melds: tuple[Meld, ...]
    """The defender's melds, of its ten cards (none: every card is deadwood or laid off)."""

    def __str__(self) -> str:
        if not self.melds:
            return "defend"
        return "defend melds " + " | ".join(str(m) for m in self.melds)


Action = PassUpcard | TakeDiscard | DrawStock | Discard | Knock | BigGin | Defend
"""Every action a player can take (a :class:`Defend` only once a knock has ended the hand)."""

PASS_UPCARD = PassUpcard()
TAKE_DISCARD = TakeDiscard()
DRAW_STOCK = DrawStock()
BIG_GIN = BigGin()

_DISCARDS = tuple(Discard(card) for card in DECK)
_KNOCKS = tuple(Knock(card) for card in DECK)


def discard_action(card: Card) -> Discard:
    """The interned :class:`Discard` of ``card``."""
    return _DISCARDS[card.index]


def knock_action(card: Card) -> Knock:
    """The interned :class:`Knock` of ``card`` with the engine choosing the melds."""
    return _KNOCKS[card.index]


_SIMPLE: dict[str, Action] = {
    "pass_upcard": PASS_UPCARD,
    "take_discard": TAKE_DISCARD,
    "draw_stock": DRAW_STOCK,
    "big_gin": BIG_GIN,
}


def parse_action(text: str) -> Action:
    """Parse the text form used by :func:`str` (e.g. ``"knock 9c melds 7c 7d 7h | As 2s 3s"``).

    Raises :class:`MalformedAction` naming what is wrong.
    """
    words = text.split(maxsplit=1)
    if not words:
        raise MalformedAction(repr(text), "empty")
    kind = words[0]
    if kind in _SIMPLE:
        if len(words) > 1:
            raise MalformedAction(repr(text), f"{kind} takes no argument")
        return _SIMPLE[kind]
    if kind == "defend":
        if len(words) == 1:
            return Defend(())
        melds_text = words[1].removeprefix("melds ")
        if melds_text == words[1]:
            raise MalformedAction(repr(text), "expected defend melds ...")
        return Defend(tuple(Meld.from_cards(parse_cards(m)) for m in melds_text.split("|")))
    if kind not in ("discard", "knock") or len(words) < 2:
        raise MalformedAction(repr(text), f"unknown action {kind!r}")
    card_text, _, rest = words[1].partition(" melds ")
    cards = parse_cards(card_text)
    if len(cards) != 1:
        raise MalformedAction(repr(text), "expected exactly one card")
    if kind == "discard":
        if rest:
            raise MalformedAction(repr(text), "a discard declares no melds")
        return discard_action(cards[0])
    if not rest:
        return knock_action(cards[0])
    return Knock(cards[0], tuple(Meld.from_cards(parse_cards(m)) for m in rest.split("|")))
