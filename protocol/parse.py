"""Validation of unpacked msgpack values into message dataclasses.

:func:`parse_message` takes the value produced by the unpacker (maps as ``dict``,
arrays as ``tuple``, map keys already checked to be ``str``) and returns the matching
:mod:`protocol.schema` dataclass, or raises :class:`~protocol.errors.SchemaError` with
the precise field path and code. Unknown fields are ignored; unknown types are not.

>>> parse_message({"type": "pong", "nonce": 7, "future_field": [1, 2]})
Pong(nonce=7)
>>> parse_message({"type": "event", "seat": 1, "action": {"kind": "discard", "card": "1h"}})
Traceback (most recent call last):
...
protocol.errors.SchemaError: bad_card: event.action.card: not a card: '1h'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any

from protocol.cards import ALL_CARDS
from protocol.checks import (
    MAX_INT,
    Obj,
    Where,
    check_bool,
    check_by_seat,
    check_card,
    check_cards,
    check_enum,
    check_hand,
    check_int,
    check_list,
    check_map,
    check_melds,
    check_pair,
    check_seat,
    check_str,
    fail,
    field,
    nullable,
    optional,
)
from protocol.errors import ErrorCode
from protocol.schema import (
    ACTION_KINDS,
    DECISIONS,
    MATCH_END_REASONS,
    MATCH_RESULTS,
    MESSAGE_CLASSES,
    PHASES,
    TERMINATIONS,
    ActionMsg,
    Bye,
    Error,
    Event,
    Fault,
    GameEnd,
    HandEnd,
    HandStart,
    Hello,
    MatchEnd,
    MatchStart,
    Message,
    Ping,
    Pong,
    Reject,
    Request,
    RuleValue,
    TimeControl,
    Welcome,
    WireAction,
    WireView,
)

__all__ = ["parse_action", "parse_message", "simple_action"]

_MISSING = ErrorCode.MISSING_FIELD
_TYPE = ErrorCode.BAD_TYPE
_VALUE = ErrorCode.BAD_VALUE

_CARD_REQUIRED = frozenset({"discard", "knock"})
_CARD_ALLOWED = frozenset({"discard", "knock", "take_discard", "draw_stock"})

# Every valid action without melds, keyed by (kind, card): the fast path of parse_action.
_SIMPLE_ACTIONS: dict[tuple[str, str | None], WireAction] = {
    (kind, card): WireAction(kind, card)
    for kind in ACTION_KINDS
    for card in (None, *ALL_CARDS)
    if (card is None and kind not in _CARD_REQUIRED) or (card is not None and kind in _CARD_ALLOWED)
}


def simple_action(kind: object, card: object) -> WireAction | None:
    """The interned wire action for a valid meld-free ``(kind, card)``, else None."""
    if type(kind) is not str or (card is not None and type(card) is not str):
        return None
    return _SIMPLE_ACTIONS.get((kind, card))


# ------------------------------------------------------------- composite values


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
    if kind != "knock":
        raise fail(_VALUE, (where, "melds"), f"not allowed for {kind}")
    return WireAction(kind, card, field(m, where, "melds", check_melds, card))


def _view(v: Any, where: Where) -> WireView:
    m = check_map(v, where)
    return WireView(
        seat=field(m, where, "seat", check_seat),
        phase=field(m, where, "phase", check_enum, PHASES),
        to_act=field(m, where, "to_act", check_seat),
        dealer=field(m, where, "dealer", check_seat),
        hand=field(m, where, "hand", check_hand),
        discard_pile=field(m, where, "discard_pile", check_cards),
        stock_size=field(m, where, "stock_size", check_int, 0, 52),
        opponent_hand_size=field(m, where, "opponent_hand_size", check_int, 0, 11),
        opponent_known=field(m, where, "opponent_known", check_hand),
        knock_limit=field(m, where, "knock_limit", check_int),
        multiplier=field(m, where, "multiplier", check_int, 1),
        turn=field(m, where, "turn", check_int),
        scores=field(m, where, "scores", check_pair),
        taken_card=nullable(m, where, "taken_card", check_card),
    )


def _time_control(v: Any, where: Where) -> TimeControl:
    m = check_map(v, where)
    return TimeControl(
        move_ms=field(m, where, "move_ms", check_int),
        bank_ms=field(m, where, "bank_ms", check_int),
        grace_ms=field(m, where, "grace_ms", check_int),
        startup_ms=field(m, where, "startup_ms", check_int),
    )


def _rules(v: Any, where: Where) -> Mapping[str, RuleValue]:
    m = check_map(v, where)
    for key, value in m.items():
        if type(value) is int:
            check_int(value, (where, key), -MAX_INT)
        elif value is not None and type(value) not in (str, bool):
            raise fail(
                _TYPE,
                (where, key),
                f"must be an integer, string, bool or nil, got {type(value).__name__}",
            )
    return MappingProxyType(m)


def _fault(v: Any, where: Where) -> Fault:
    m = check_map(v, where)
    return Fault(
        code=field(m, where, "code", check_str, 1), detail=field(m, where, "detail", check_str)
    )


def _flag(m: Obj, where: Where, key: str) -> bool:
    """Optional boolean field: False when absent or nil."""
    return optional(m, where, key, check_bool) is True


def _event(m: Obj, where: Where) -> Event:
    return Event(
        seat=field(m, where, "seat", check_seat), action=field(m, where, "action", parse_action)
    )


def _inline_event(v: Any, where: Where) -> Event:
    """One element of ``request.events``: a complete ``event`` message map."""
    m = check_map(v, where)
    field(m, where, "type", check_enum, ("event",))
    return _event(m, where)


def _inline_events(v: Any, where: Where) -> tuple[Event, ...]:
    """The optional ``request.events`` list: ``()`` when absent or nil."""
    return () if v is None else check_list(v, where, _inline_event)


# ------------------------------------------------------------- one parser per type


def _hello(m: Obj, p: str) -> Hello:
    return Hello(
        protocol_version=field(m, p, "protocol_version", check_int),
        name=field(m, p, "name", check_str, 1, 64),
        token=field(m, p, "token", check_str, 1, 128),
        author=optional(m, p, "author", check_str, 0, 128),
        version=optional(m, p, "version", check_str, 0, 128),
        inline_events=_flag(m, p, "inline_events"),
        multi_match=_flag(m, p, "multi_match"),
    )


def _action_msg(m: Obj, p: str) -> ActionMsg:
    return ActionMsg(
        request_id=field(m, p, "request_id", check_int), action=field(m, p, "action", parse_action)
    )


def _welcome(m: Obj, p: str) -> Welcome:
    return Welcome(
        protocol_version=field(m, p, "protocol_version", check_int),
        referee=field(m, p, "referee", check_str),
        heartbeat_ms=field(m, p, "heartbeat_ms", check_int),
        inline_events=_flag(m, p, "inline_events"),
        multi_match=_flag(m, p, "multi_match"),
    )


def _reject(m: Obj, p: str) -> Reject:
    return Reject(
        code=field(m, p, "code", check_str, 1),
        message=field(m, p, "message", check_str),
        supported_versions=field(m, p, "supported_versions", check_list, check_int),
    )


def _match_start(m: Obj, p: str) -> MatchStart:
    return MatchStart(
        match_id=field(m, p, "match_id", check_str, 1),
        seat=field(m, p, "seat", check_seat),
        opponent=field(m, p, "opponent", check_str),
        games=field(m, p, "games", check_int),
        rules=field(m, p, "rules", _rules),
        rules_hash=field(m, p, "rules_hash", check_str),
        time_control=field(m, p, "time_control", _time_control),
        seed=optional(m, p, "seed", check_str, 1, 64),
        deal_commitment=optional(m, p, "deal_commitment", check_str, 1, 128),
        deal_id=optional(m, p, "deal_id", check_str, 1, 256),
    )


def _hand_start(m: Obj, p: str) -> HandStart:
    hand_cards = field(m, p, "hand_cards", check_cards, 10, 10)
    upcard = field(m, p, "upcard", check_card)
    if upcard in hand_cards:
        raise fail(_VALUE, (p, "upcard"), f"{upcard} is also in hand_cards")
    return HandStart(
        game=field(m, p, "game", check_int),
        hand=field(m, p, "hand", check_int),
        dealer=field(m, p, "dealer", check_seat),
        hand_cards=hand_cards,
        upcard=upcard,
        scores=field(m, p, "scores", check_pair),
    )


def _request(m: Obj, p: str) -> Request:
    legal = field(m, p, "legal", check_list, parse_action)
    if not legal:
        raise fail(_VALUE, (p, "legal"), "must hold at least one action")
    return Request(
        request_id=field(m, p, "request_id", check_int),
        decision=field(m, p, "decision", check_enum, DECISIONS),
        legal=legal,
        view=field(m, p, "view", _view),
        time_left_ms=field(m, p, "time_left_ms", check_int),
        bank_ms=field(m, p, "bank_ms", check_int),
        events=_inline_events(m.get("events"), (p, "events")),
    )


def _hand_end(m: Obj, p: str) -> HandEnd:
    return HandEnd(
        game=field(m, p, "game", check_int),
        hand=field(m, p, "hand", check_int),
        termination=field(m, p, "termination", check_enum, TERMINATIONS),
        winner=nullable(m, p, "winner", check_seat),
        points=field(m, p, "points", check_int),
        hands=field(m, p, "hands", check_by_seat, check_hand),
        melds=field(m, p, "melds", check_by_seat, check_melds),
        layoffs=field(m, p, "layoffs", check_list, check_hand),
        deadwood=field(m, p, "deadwood", check_pair),
        scores=field(m, p, "scores", check_pair),
    )


def _game_end(m: Obj, p: str) -> GameEnd:
    return GameEnd(
        game=field(m, p, "game", check_int),
        winner=nullable(m, p, "winner", check_seat),
        scores=field(m, p, "scores", check_pair),
        hands_won=field(m, p, "hands_won", check_pair),
    )


def _match_end(m: Obj, p: str) -> MatchEnd:
    return MatchEnd(
        result=field(m, p, "result", check_enum, MATCH_RESULTS),
        games_won=field(m, p, "games_won", check_pair),
        points=field(m, p, "points", check_pair),
        reason=field(m, p, "reason", check_enum, MATCH_END_REASONS),
        fault=nullable(m, p, "fault", _fault),
        deal_key=optional(m, p, "deal_key", check_str, 1, 128),
    )


def _error(m: Obj, p: str) -> Error:
    return Error(
        code=field(m, p, "code", check_str, 1),
        message=field(m, p, "message", check_str),
        request_id=optional(m, p, "request_id", check_int),
    )


_PARSERS: dict[str, Callable[[Obj, str], Message]] = {
    "hello": _hello,
    "action": _action_msg,
    "pong": lambda m, p: Pong(nonce=field(m, p, "nonce", check_int)),
    "bye": lambda m, p: Bye(reason=optional(m, p, "reason", check_str)),
    "welcome": _welcome,
    "reject": _reject,
    "match_start": _match_start,
    "hand_start": _hand_start,
    "request": _request,
    "event": _event,
    "hand_end": _hand_end,
    "game_end": _game_end,
    "match_end": _match_end,
    "error": _error,
    "ping": lambda m, p: Ping(nonce=field(m, p, "nonce", check_int)),
}
assert set(_PARSERS) == set(MESSAGE_CLASSES)


def parse_message(value: Any, allowed: Collection[str] | None = None) -> Message:
    """Validate one unpacked value into a message.

    ``allowed`` restricts the accepted ``type`` values: a known type outside it raises
    ``SchemaError`` with code ``unexpected_type``; an unknown one, ``unknown_type``.
    """
    m = check_map(value, "message")
    msg_type = field(m, "message", "type", check_str)
    parser = _PARSERS.get(msg_type)
    if parser is None:
        raise fail(ErrorCode.UNKNOWN_TYPE, "message.type", f"unknown type {msg_type!r}")
    if allowed is not None and msg_type not in allowed:
        raise fail(ErrorCode.UNEXPECTED_TYPE, "message.type", f"{msg_type!r} is not accepted here")
    return parser(m, msg_type)
