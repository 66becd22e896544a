"""Hypothesis strategies producing valid messages of every type, and wire-map helpers.

The messages are drawn from the protocol's description (:func:`protocol.fields.describe`):
a field added to a message is drawn, encoded and decoded by every property test at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
from hypothesis import strategies as st

from protocol.cards import ALL_CARDS
from protocol.checks import (
    MAX_INT,
    check_bool,
    check_by_seat,
    check_card,
    check_cards,
    check_enum,
    check_hand,
    check_int,
    check_list,
    check_meld_cards,
    check_melds,
    check_pair,
    check_rules,
    check_seat,
    check_str,
)
from protocol.fields import Check, Shape, Struct, describe, to_wire
from protocol.schema import (
    ACTION_KINDS,
    MESSAGE_CLASSES,
    ActionMsg,
    Cards,
    HandStart,
    Melds,
    Message,
    Request,
    WireAction,
)

cards = st.sampled_from(ALL_CARDS)
ints = st.integers(0, MAX_INT)
seats = st.integers(0, 1)
pairs = st.tuples(ints, ints)
texts = st.text(max_size=40)


def card_lists(min_size: int = 0, max_size: int = 11) -> st.SearchStrategy[Cards]:
    """Distinct cards."""
    return st.lists(cards, min_size=min_size, max_size=max_size, unique=True).map(tuple)


@st.composite
def meld_arrangements(draw: st.DrawFn, exclude: frozenset[str] = frozenset()) -> Melds:
    """Up to four disjoint melds of 3..5 cards, none of them in ``exclude``."""
    deck = [c for c in draw(st.permutations(ALL_CARDS)) if c not in exclude]
    sizes = draw(st.lists(st.integers(3, 5), max_size=4))
    melds: list[Cards] = []
    for size in sizes:
        melds.append(tuple(deck[:size]))
        deck = deck[size:]
    return tuple(melds)


@st.composite
def actions(draw: st.DrawFn) -> WireAction:
    """Any valid action map, including event-only forms (a card on take/draw)."""
    kind = draw(st.sampled_from(ACTION_KINDS))
    if kind in ("pass_upcard", "big_gin"):
        return WireAction(kind)
    if kind in ("take_discard", "draw_stock"):
        return WireAction(kind, draw(st.none() | cards))
    card = draw(cards)
    if kind == "discard":
        return WireAction.discard(card)
    return WireAction.knock(card, draw(st.none() | meld_arrangements(frozenset({card}))))


rule_values: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers(-MAX_INT, MAX_INT) | texts
)

_CHECK_STRATEGIES: dict[Callable[..., Any], Callable[..., st.SearchStrategy[Any]]] = {
    check_int: lambda lo=0, hi=MAX_INT: st.integers(lo, min(hi, MAX_INT)),
    check_str: lambda lo=0, hi=None: st.text(min_size=lo, max_size=hi or 40),
    check_bool: st.booleans,
    check_seat: lambda: seats,
    check_enum: st.sampled_from,
    check_card: lambda: cards,
    check_cards: lambda lo=0, hi=52: card_lists(lo, min(hi, 31)),
    check_hand: card_lists,
    check_meld_cards: lambda: card_lists(3, 13),
    check_pair: lambda: pairs,
    check_melds: meld_arrangements,
    check_by_seat: lambda item: st.tuples(_from_check(item), _from_check(item)),
    check_list: lambda item: st.lists(_from_check(item), max_size=4).map(tuple),
    check_rules: lambda: st.dictionaries(st.text(max_size=20), rule_values, max_size=12),
}
"""A strategy of valid values for each field checker of the description (with its args)."""


def _from_check(fn: Callable[..., Any], *args: Any) -> st.SearchStrategy[Any]:
    try:
        return _CHECK_STRATEGIES[fn](*args)
    except KeyError:
        raise AssertionError(f"no strategy for {fn.__name__}: add one to strategies.py") from None


def _from_shape(shape: Shape) -> st.SearchStrategy[Any]:
    if isinstance(shape, Check):
        return _from_check(shape.fn, *shape.args)
    if isinstance(shape, Struct):
        return described(shape.cls)
    return st.lists(described(shape.item.cls), max_size=3).map(tuple)


_RULES: dict[type[Any], Callable[[Any], bool]] = {
    HandStart: lambda m: m.upcard not in m.hand_cards,
    Request: lambda m: bool(m.legal),
    ActionMsg: lambda m: (
        m.action.card is None or m.action.kind not in ("take_discard", "draw_stock")
    ),
}
"""The rules across fields that protocol/parse.py checks beyond the description."""


def described(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Valid instances of a described class, built field by field from its description:
    optional fields take their default or a value, nullable ones None or a value."""
    if cls is WireAction:
        return actions()
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for f in describe(cls).fields:
        value = _from_shape(f.shape)
        if f.presence == "optional":
            value = st.just(f.default) | value
        elif f.presence == "nullable":
            value = st.none() | value
        fields[f.name] = value
    built = st.builds(cls, **fields)
    rule = _RULES.get(cls)
    return built if rule is None else built.filter(rule)


messages: st.SearchStrategy[Message] = st.one_of(
    [described(cls) for cls in MESSAGE_CLASSES.values()]
)
"""Any valid message, every field of every type drawn from the protocol's description."""


def wire_map(msg: Message) -> dict[str, Any]:
    """A fresh, freely mutable copy of ``msg``'s wire map (lists, not tuples)."""
    value: dict[str, Any] = msgpack.unpackb(msgpack.packb(to_wire(msg)))
    return value


def corrupt(value: Any, data: st.DataObject, values: st.SearchStrategy[Any]) -> Any:
    """``value`` (a wire map, changed in place) with one node, maybe the root, replaced by a
    value drawn from ``values`` or removed from its map."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        if data.draw(st.integers(0, 3)) == 0:
            del value[key]
        else:
            value[key] = corrupt(value[key], data, values)
        return value
    if isinstance(value, list) and value and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(value) - 1))
        value[i] = corrupt(value[i], data, values)
        return value
    return data.draw(values)
