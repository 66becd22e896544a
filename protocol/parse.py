"""Validation of unpacked msgpack values into message dataclasses.

:func:`parse_message` takes the value produced by the unpacker (maps as ``dict``,
arrays as ``tuple``, map keys already checked to be ``str``) and returns the matching
:mod:`protocol.schema` dataclass, or raises :class:`~protocol.errors.SchemaError` with
the precise field path and code. Unknown fields are ignored; unknown types are not.

The parser of each class is built from its description (:func:`protocol.fields.describe`):
fields are checked in wire order. What a field table cannot say lives here as a few rules
across fields (:data:`_RULES`), and the action map has its own parser (a card required by
some kinds, melds only for a knock) with a fast path for the meld-free actions.

>>> parse_message({"type": "pong", "nonce": 7, "future_field": [1, 2]})
Pong(nonce=7)
>>> parse_message({"type": "event", "seat": 1, "action": {"kind": "discard", "card": "1h"}})
Traceback (most recent call last):
...
protocol.errors.SchemaError: bad_card: event.action.card: not a card: '1h'
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from protocol.cards import ALL_CARDS
from protocol.checks import (
    Obj,
    Where,
    check_card,
    check_enum,
    check_list,
    check_map,
    check_melds,
    check_str,
    fail,
    field,
    optional,
)
from protocol.errors import ErrorCode
from protocol.fields import Check, ListOf, Shape, Struct, describe
from protocol.schema import (
    ACTION_KINDS,
    MESSAGE_CLASSES,
    ActionMsg,
    HandStart,
    Message,
    Request,
    WireAction,
)

__all__ = ["interned_action", "parse_action", "parse_message", "simple_action"]

_MISSING = ErrorCode.MISSING_FIELD
_VALUE = ErrorCode.BAD_VALUE

_CARD_REQUIRED = frozenset({"discard", "knock"})
_CARD_ALLOWED = frozenset({"discard", "knock", "take_discard", "draw_stock"})
_EVENT_ONLY_CARD = frozenset({"take_discard", "draw_stock"})
"""Kinds whose ``card`` appears in events only: a bot's ``action`` never carries it."""

# Every valid action without melds, keyed by (kind, card): the fast path of parse_action (a
# defender's ``defend``, once a hand at most, takes the general path).
_SIMPLE_ACTIONS: dict[tuple[str, str | None], WireAction] = {
    (kind, card): WireAction(kind, card)
    for kind in ACTION_KINDS
    if kind != "defend"
    for card in (None, *ALL_CARDS)
    if (card is None and kind not in _CARD_REQUIRED) or (card is not None and kind in _CARD_ALLOWED)
}


def interned_action(kind: str, card: str | None) -> WireAction | None:
    """The interned wire action of a valid meld-free ``(kind, card)`` as an action map may
    hold it (events included: a ``take_discard`` may name its card), else None."""
    return _SIMPLE_ACTIONS.get((kind, card))


def simple_action(kind: object, card: object) -> WireAction | None:
    """The interned wire action for a valid meld-free ``(kind, card)`` that a bot may send
    (never an event's ``take_discard``/``draw_stock`` card), else None."""
    if type(kind) is not str or (card is not None and type(card) is not str):
        return None
    if card is not None and kind in _EVENT_ONLY_CARD:
        return None
    return _SIMPLE_ACTIONS.get((kind, card))


# ------------------------------------------------------------- the action map


def parse_action(v: Any, where: Where) -> WireAction:
    """Validate an action map (``where`` is the field path used in errors)."""
    if type(v) is dict and v.get("melds") is None:
        kind, card = v.get("kind"), v.get("card")
        if type(kind) is str and (card is None or type(card) is str):
            action = _SIMPLE_ACTIONS.get((kind, card))
            if action is not None:
                return action
    m = check_map(v, where)
    kind = field(m, where, "kind", check_enum, ACTION_KINDS)
    card = optional(m, where, "card", check_card)
    if card is None and kind in _CARD_REQUIRED:
        raise fail(_MISSING, (where, "card"), f"required for {kind}")
    if card is not None and kind not in _CARD_ALLOWED:
        raise fail(_VALUE, (where, "card"), f"not allowed for {kind}")
    if m.get("melds") is None:
        return WireAction(kind, card)
    if kind not in ("knock", "defend"):
        raise fail(_VALUE, (where, "melds"), f"not allowed for {kind}")
    return WireAction(kind, card, field(m, where, "melds", check_melds, card))


# ------------------------------------------------------------- rules across fields


def _upcard_not_in_hand(m: HandStart, where: Where) -> None:
    if m.upcard in m.hand_cards:
        raise fail(_VALUE, (where, "upcard"), f"{m.upcard} is also in hand_cards")


def _some_legal(m: Request, where: Where) -> None:
    if not m.legal:
        raise fail(_VALUE, (where, "legal"), "must hold at least one action")


def _no_event_card(m: ActionMsg, where: Where) -> None:
    if m.action.card is not None and m.action.kind in _EVENT_ONLY_CARD:
        raise fail(
            _VALUE,
            ((where, "action"), "card"),
            f"not allowed in a bot's {m.action.kind} (only events carry it)",
        )


_RULES: dict[type[Any], Callable[[Any, Where], None]] = {
    HandStart: _upcard_not_in_hand,
    Request: _some_legal,
    ActionMsg: _no_event_card,
}
"""Checks of a parsed message that involve more than one field."""


# ------------------------------------------------------------- parsers from descriptions

_Parser = Callable[[Any, Where], Any]
_ABSENT = object()


def _checker(shape: Shape) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The function (and extra arguments) that checks a field of this shape."""
    if isinstance(shape, Check):
        return shape.fn, shape.args
    if isinstance(shape, Struct):
        return _struct_parser(shape.cls), ()
    assert isinstance(shape, ListOf)
    return check_list, (_struct_parser(shape.item.cls),)


def _fields_parser(cls: type[Any]) -> Callable[[Obj, Where], Any]:
    """Parse the fields of an already checked map into ``cls``, per its description."""
    spec = describe(cls)
    plan = [(f.name, *_checker(f.shape), f.presence, f.default) for f in spec.fields]
    rule = _RULES.get(cls)

    def parse_fields(m: Obj, where: Where) -> Any:
        values = {}
        for name, check, args, presence, default in plan:
            v = m.get(name, _ABSENT)
            if v is None or v is _ABSENT:
                if presence == "optional":
                    values[name] = default
                    continue
                if v is _ABSENT:
                    raise fail(_MISSING, (where, name), "required field is missing")
                if presence == "nullable":
                    values[name] = None
                    continue
            values[name] = check(v, (where, name), *args)
        msg = cls(**values)
        if rule is not None:
            rule(msg, where)
        return msg

    return parse_fields


_STRUCT_PARSERS: dict[type[Any], _Parser] = {WireAction: parse_action}


def _struct_parser(cls: type[Any]) -> _Parser:
    """The parser of a nested map; a nested message must carry its own ``type``."""
    parser = _STRUCT_PARSERS.get(cls)
    if parser is None:
        parse_fields = _fields_parser(cls)
        msg_type: str | None = getattr(cls, "TYPE", None)

        def parser(v: Any, where: Where) -> Any:
            m = check_map(v, where)
            if msg_type is not None:
                field(m, where, "type", check_enum, (msg_type,))
            return parse_fields(m, where)

        _STRUCT_PARSERS[cls] = parser
    return parser


_PARSERS: dict[str, Callable[[Obj, Where], Any]] = {}
"""Each message type's parser, built the first time one arrives (a bot never parses the bot
messages, a referee never the referee's: building only those in use keeps start-up short)."""


def _message_parser(msg_type: str) -> Callable[[Obj, Where], Any] | None:
    """The parser of a known ``msg_type`` (built and kept on first use), None for another."""
    cls = MESSAGE_CLASSES.get(msg_type)
    if cls is None:
        return None
    parser = _PARSERS[msg_type] = _fields_parser(cls)
    return parser


def parse_message(value: Any, allowed: Collection[str] | None = None) -> Message:
    """Validate one unpacked value into a message.

    ``allowed`` restricts the accepted ``type`` values: a known type outside it raises
    ``SchemaError`` with code ``unexpected_type``; an unknown one, ``unknown_type``.
    """
    m = check_map(value, "message")
    msg_type = field(m, "message", "type", check_str)
    parser = _PARSERS.get(msg_type) or _message_parser(msg_type)
    if parser is None:
        raise fail(ErrorCode.UNKNOWN_TYPE, "message.type", f"unknown type {msg_type!r}")
    if allowed is not None and msg_type not in allowed:
        raise fail(ErrorCode.UNEXPECTED_TYPE, "message.type", f"{msg_type!r} is not accepted here")
    msg: Message = parser(m, msg_type)
    return msg
