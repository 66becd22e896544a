"""Mapping between rules values and protocol messages (the only place that knows both).

Rules objects never know their wire form and ``protocol`` never imports the referee; these
small functions translate in both directions. Wire forms of the interned actions are cached.
"""

from __future__ import annotations

from protocol.parse import interned_action
from protocol.schema import HandEnd, WireAction
from referee.rules import (
    BIG_GIN,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_DISCARD,
    Action,
    BigGin,
    Card,
    CardSet,
    Defend,
    Discard,
    DrawStock,
    HandResult,
    Knock,
    MalformedAction,
    Meld,
    PassUpcard,
    TakeDiscard,
    discard_action,
    knock_action,
)
from referee.rules.cards import DECK
from referee.rules.errors import CardParseError, InvalidMeld

__all__ = ["event_action", "hand_end_message", "to_action", "to_wire_action"]

_WIRE: dict[Action, WireAction] = {
    PASS_UPCARD: WireAction("pass_upcard"),
    TAKE_DISCARD: WireAction("take_discard"),
    DRAW_STOCK: WireAction("draw_stock"),
    BIG_GIN: WireAction("big_gin"),
}
for _each in DECK:
    _WIRE[discard_action(_each)] = WireAction("discard", str(_each))
    _WIRE[knock_action(_each)] = WireAction("knock", str(_each))
_CARD_BY_TEXT = {str(card): card for card in DECK}


def _melds_text(melds: tuple[Meld, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(card) for card in meld.cards) for meld in melds)


def to_wire_action(action: Action) -> WireAction:
    """The wire form of a rules action (interned actions come from a cache)."""
    cached = _WIRE.get(action)
    if cached is not None:
        return cached
    match action:
        case Knock(card=card, melds=melds) if melds is not None:
            return WireAction("knock", str(card), _melds_text(melds))
        case Defend(melds=melds):
            return WireAction("defend", None, _melds_text(melds))
    raise TypeError(f"no wire form for {action!r}")


def _card(text: str | None, kind: str) -> Card:
    if text is None:
        raise MalformedAction(kind, "a card is required")
    card = _CARD_BY_TEXT.get(text)
    if card is None:
        raise CardParseError(text, "not a canonical card")
    return card


_RULES: dict[int, tuple[WireAction, Action]] = {}
"""The rules action of each interned wire action (:func:`protocol.parse.interned_action`, what
a bot's meld-free reply decodes to), by identity, the wire action kept beside it."""


def to_action(wire: WireAction) -> Action:
    """The rules action for a bot's wire action; raises ``RulesError`` naming the problem."""
    cached = _RULES.get(id(wire))
    if cached is not None:
        return cached[1]
    action = _to_action(wire)
    if wire.melds is None and interned_action(wire.kind, wire.card) is wire:
        _RULES[id(wire)] = (wire, action)
    return action


def _to_action(wire: WireAction) -> Action:
    kind = wire.kind
    if kind == "pass_upcard":
        return PASS_UPCARD
    if kind == "take_discard":
        return TAKE_DISCARD
    if kind == "draw_stock":
        return DRAW_STOCK
    if kind == "big_gin":
        return BIG_GIN
    if kind == "discard":
        if wire.melds is not None:
            raise MalformedAction("discard", "a discard declares no melds")
        return discard_action(_card(wire.card, kind))
    if kind == "knock":
        card = _card(wire.card, kind)
        if wire.melds is None:
            return knock_action(card)
        try:
            melds = tuple(Meld.from_cards(_card(t, kind) for t in meld) for meld in wire.melds)
        except InvalidMeld as err:
            raise MalformedAction("knock", str(err)) from err
        return Knock(card, melds)
    raise MalformedAction(repr(kind), "unknown action kind")


def hand_end_message(
    *, game: int, hand: int, result: HandResult, scores: tuple[int, int]
) -> HandEnd:
    """The ``hand_end`` message for a finished (or forfeited) hand."""
    return HandEnd(
        game=game,
        hand=hand,
        termination=str(result.termination),
        winner=result.winner,
        points=result.points,
        hands=(
            tuple(str(c) for c in result.hands[0]),
            tuple(str(c) for c in result.hands[1]),
        ),
        melds=(_melds_text(result.melds[0]), _melds_text(result.melds[1])),
        layoffs=tuple((str(card), *(str(c) for c in meld.cards)) for card, meld in result.layoffs),
        deadwood=result.deadwood,
        scores=scores,
        layoff_melds=layoff_melds(result.layoffs) if result.layoffs else None,
    )


def layoff_melds(layoffs: tuple[tuple[Card, Meld], ...]) -> tuple[tuple[str, ...], ...]:
    """The knocker's meld after each layoff, in card order (``hand_end.layoff_melds``).

    >>> from referee.rules import Card, Meld, parse_cards
    >>> run = Meld.from_cards(parse_cards("5s 6s 7s"))
    >>> layoff_melds(((Card.parse("8s"), run), (Card.parse("9s"), run)))
    (('5s', '6s', '7s', '8s'), ('5s', '6s', '7s', '8s', '9s'))
    """
    grown: dict[Meld, int] = {}
    out = []
    for card, meld in layoffs:
        mask = grown.get(meld, meld.mask) | 1 << card.index
        grown[meld] = mask
        out.append(tuple(str(c) for c in CardSet(mask)))
    return tuple(out)


def event_action(action: Action, card: Card | None) -> WireAction:
    """The wire action an opponent is told about (``card`` for a visible taken card)."""
    match action:
        case TakeDiscard():
            return WireAction("take_discard", None if card is None else str(card))
        case DrawStock() | PassUpcard() | BigGin() | Discard():
            return to_wire_action(action)
        case Knock(card=knocked):
            return WireAction("knock", str(knocked))
    raise TypeError(f"not an action: {action!r}")
