"""Field checkers: each validates one unpacked value and returns it typed, or raises.

Every checker takes the value and its field path (:data:`Where`) and raises
:class:`~protocol.errors.SchemaError` with the code and the dotted path of the offending
field. A path is a cheap ``(parent, key)`` tuple chain, turned into text such as
``request.legal[3].card`` only when an error is raised, so checking costs little.

>>> check_cards(("As", "Td"), "hand_start.hand_cards")
('As', 'Td')
>>> check_card("1h", (("event", "action"), "card"))
Traceback (most recent call last):
...
protocol.errors.SchemaError: bad_card: event.action.card: not a card: '1h'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from protocol.cards import CARD_SET
from protocol.errors import ErrorCode, SchemaError

if TYPE_CHECKING:
    from protocol.values import Cards, IntPair, Melds, RuleValue

__all__ = [
    "MAX_INT",
    "Obj",
    "Where",
    "check_array",
    "check_bool",
    "check_by_seat",
    "check_card",
    "check_cards",
    "check_enum",
    "check_hand",
    "check_int",
    "check_list",
    "check_map",
    "check_melds",
    "check_pair",
    "check_rules",
    "check_seat",
    "check_str",
    "fail",
    "field",
    "optional",
    "path_text",
]

MAX_INT = 2**53 - 1
"""Largest integer allowed in any field (exactly representable as a JavaScript number)."""

Where: TypeAlias = "str | tuple[Where, str | int]"
"""A field path: a root name, or (parent path, map key or array index)."""

Obj: TypeAlias = dict[str, Any]
"""An unpacked msgpack map."""

_MISSING = ErrorCode.MISSING_FIELD
_TYPE = ErrorCode.BAD_TYPE
_VALUE = ErrorCode.BAD_VALUE


def path_text(where: Where) -> str:
    """The dotted text of a field path, e.g. ``request.legal[3].card``."""
    if isinstance(where, str):
        return where
    parent, key = where
    return f"{path_text(parent)}[{key}]" if isinstance(key, int) else f"{path_text(parent)}.{key}"


def fail(code: ErrorCode, where: Where, problem: str) -> SchemaError:
    """The error to raise for the field at ``where``."""
    return SchemaError(code, path_text(where), problem)


def _tname(v: Any) -> str:
    return "nil" if v is None else type(v).__name__


# ------------------------------------------------------------------ value checkers


def check_int(v: Any, where: Where, lo: int = 0, hi: int = MAX_INT) -> int:
    """An integer (not a bool) in ``lo..hi``."""
    if type(v) is not int:
        raise fail(_TYPE, where, f"must be an integer, got {_tname(v)}")
    if not lo <= v <= hi:
        raise fail(_VALUE, where, f"must be in {lo}..{hi}, got {v}")
    return v


def check_bool(v: Any, where: Where) -> bool:
    """A boolean (not an integer).

    >>> check_bool(True, "hello.inline_events")
    True
    >>> check_bool(1, "hello.inline_events")
    Traceback (most recent call last):
    ...
    protocol.errors.SchemaError: bad_type: hello.inline_events: must be a boolean, got int
    """
    if type(v) is not bool:
        raise fail(_TYPE, where, f"must be a boolean, got {_tname(v)}")
    return v


def check_seat(v: Any, where: Where) -> int:
    """A seat: 0 or 1."""
    return check_int(v, where, 0, 1)


def check_str(v: Any, where: Where, lo: int = 0, hi: int | None = None) -> str:
    """A string of ``lo`` to ``hi`` code points."""
    if type(v) is not str:
        raise fail(_TYPE, where, f"must be a string, got {_tname(v)}")
    if len(v) < lo or (hi is not None and len(v) > hi):
        limit = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
        raise fail(_VALUE, where, f"length must be {limit}, got {len(v)}")
    return v


def check_enum(v: Any, where: Where, choices: Collection[str]) -> str:
    """One of the strings ``choices``."""
    if v not in choices or type(v) is not str:
        check_str(v, where)
        raise fail(_VALUE, where, f"must be one of {', '.join(choices)}; got {v!r}")
    return v


def check_map(v: Any, where: Where) -> Obj:
    """A map."""
    if type(v) is not dict:
        raise fail(_TYPE, where, f"must be a map, got {_tname(v)}")
    return v


def check_array(v: Any, where: Where) -> tuple[Any, ...]:
    """An array (unpacked as a tuple)."""
    if type(v) is not tuple:
        raise fail(_TYPE, where, f"must be an array, got {_tname(v)}")
    return v


def check_card(v: Any, where: Where) -> str:
    """A canonical card string."""
    if type(v) is not str:
        raise fail(_TYPE, where, f"must be a card string, got {_tname(v)}")
    if v not in CARD_SET:
        raise fail(ErrorCode.BAD_CARD, where, f"not a card: {v!r}")
    return v


def check_cards(v: Any, where: Where, lo: int = 0, hi: int = 52) -> Cards:
    """A list of distinct cards, ``lo`` to ``hi`` of them."""
    arr = check_array(v, where)
    for i, c in enumerate(arr):
        if type(c) is not str or c not in CARD_SET:
            check_card(c, (where, i))
    if not lo <= len(arr) <= hi:
        raise fail(_VALUE, where, f"must hold {lo}..{hi} cards, got {len(arr)}")
    if len(set(arr)) != len(arr):
        raise fail(_VALUE, where, "holds the same card twice")
    return arr


def check_hand(v: Any, where: Where) -> Cards:
    """Up to eleven distinct cards."""
    return check_cards(v, where, 0, 11)


def check_meld_cards(v: Any, where: Where) -> Cards:
    """One meld's cards: 3 to 13 distinct cards (a run extended by layoffs may hold 13)."""
    return check_cards(v, where, 3, 13)


def check_pair(v: Any, where: Where) -> IntPair:
    """Two non-negative integers, one per seat."""
    arr = check_array(v, where)
    if len(arr) != 2:
        raise fail(_VALUE, where, f"must hold 2 integers (one per seat), got {len(arr)}")
    return (check_int(arr[0], (where, 0)), check_int(arr[1], (where, 1)))


def check_melds(v: Any, where: Where, also: str | None = None) -> Melds:
    """A meld arrangement; no card may appear twice in it (nor equal ``also``)."""
    melds = tuple(check_hand(m, (where, i)) for i, m in enumerate(check_array(v, where)))
    seen = [c for meld in melds for c in meld]
    if len(set(seen)) != len(seen):
        twice = sorted({c for c in seen if seen.count(c) > 1})
        raise fail(_VALUE, where, f"holds the same card twice: {', '.join(twice)}")
    if also is not None and also in seen:
        raise fail(_VALUE, where, f"contains the knock card {also}: it is discarded, not melded")
    return melds


def field(m: Obj, where: Where, key: str, check: Callable[..., Any], *args: Any) -> Any:
    """Required field ``key`` of map ``m``, validated by ``check(value, path, *args)``."""
    try:
        v = m[key]
    except KeyError:
        raise fail(_MISSING, (where, key), "required field is missing") from None
    return check(v, (where, key), *args)


def optional(m: Obj, where: Where, key: str, check: Callable[..., Any], *args: Any) -> Any:
    """Optional (or nullable) field: ``None`` when absent or nil, else checked."""
    v = m.get(key)
    return None if v is None else check(v, (where, key), *args)


def check_by_seat(v: Any, where: Where, item: Callable[[Any, Where], Any]) -> tuple[Any, Any]:
    """Two entries, one per seat, each checked by ``item``."""
    arr = check_array(v, where)
    if len(arr) != 2:
        raise fail(_VALUE, where, f"must hold 2 entries (one per seat), got {len(arr)}")
    return (item(arr[0], (where, 0)), item(arr[1], (where, 1)))


def check_list(v: Any, where: Where, item: Callable[[Any, Where], Any]) -> tuple[Any, ...]:
    """An array whose entries are each checked by ``item``."""
    return tuple(item(x, (where, i)) for i, x in enumerate(check_array(v, where)))


def check_rules(v: Any, where: Where) -> Mapping[str, RuleValue]:
    """A map of rule names to integers, strings, booleans or nil (read-only once checked)."""
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
