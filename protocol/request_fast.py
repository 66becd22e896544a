"""The fast path of decoding a ``request``, the message a bot receives at every decision.

The general decoder (:func:`protocol.codec.unpack` then :func:`protocol.parse.parse_message`)
walks the unpacked tree to bound its depth, then checks every field through the parsers built
from the schema's descriptions: about 50 µs for a typical request in CPython, most of a
Python bot's own CPU per decision. :func:`read_request` reads the common shape directly:
the ``type`` key first (as every encoder of this package writes it), no unknown field, every
action without melds. It returns the :class:`~protocol.schema.Request` the general decoder
would give, or None for anything else, and the caller then runs the general decoder, which
gives the same result for every input accepted here and the precise error for every input it
refuses (property-tested in ``tests/protocol/test_request_fast.py``).

Exact key sets stand in for the depth walk: every value is then checked for its exact type, so
nothing can be nested deeper than the schema allows. The unpacker's limits are the codec's.
"""

from __future__ import annotations

from typing import Any

import msgpack

from protocol.cards import CARD_SET
from protocol.checks import MAX_INT
from protocol.parse import interned_action
from protocol.schema import DECISIONS, PHASES, Event, Request, WireAction, WireView

__all__ = ["read_request"]

_MAX_BYTES = 64 * 1024
"""As :data:`protocol.codec.MAX_MESSAGE_BYTES` (the codec imports this module)."""

_PREFIXES = tuple(bytes([0x80 | n]) + b"\xa4type\xa7request" for n in (7, 8))
"""A fixmap of 7 or 8 entries whose first key is ``type`` and first value ``request``."""

_REQUEST_KEYS = frozenset(
    ("type", "request_id", "decision", "legal", "view", "time_left_ms", "bank_ms")
)
_REQUEST_KEYS_EVENTS = _REQUEST_KEYS | {"events"}
_VIEW_KEYS = frozenset(
    (
        "seat",
        "phase",
        "to_act",
        "dealer",
        "hand",
        "discard_pile",
        "stock_size",
        "opponent_hand_size",
        "opponent_known",
        "knock_limit",
        "multiplier",
        "turn",
        "scores",
        "taken_card",
    )
)
_EVENT_KEYS = frozenset(("type", "seat", "action"))


def _int(v: Any, lo: int = 0, hi: int = MAX_INT) -> bool:
    return type(v) is int and lo <= v <= hi


def _seat(v: Any) -> bool:
    return type(v) is int and 0 <= v <= 1


def _cards(v: Any, most: int) -> bool:
    """A tuple of at most ``most`` distinct card strings."""
    if type(v) is not tuple or len(v) > most:
        return False
    try:  # (only a str can equal a card string: no other unpacked value is in CARD_SET)
        return CARD_SET.issuperset(v) and len(set(v)) == len(v)
    except TypeError:  # an unhashable item (a map): not a card
        return False


def _action(v: Any) -> WireAction | None:
    """The interned action of a meld-free action map, as the general parser gives it."""
    if type(v) is not dict or len(v) > 2:
        return None
    kind, card = v.get("kind"), v.get("card")
    if type(kind) is not str or (card is not None and type(card) is not str):
        return None
    if len(v) != (1 if "card" not in v else 2):
        return None  # a key other than kind and card (melds, or unknown)
    return interned_action(kind, card)


def _view(v: Any) -> WireView | None:
    if type(v) is not dict or v.keys() != _VIEW_KEYS:
        return None
    seat, phase, to_act, dealer = v["seat"], v["phase"], v["to_act"], v["dealer"]
    hand, pile, known, scores = v["hand"], v["discard_pile"], v["opponent_known"], v["scores"]
    taken = v["taken_card"]
    if not (
        _seat(seat)
        and type(phase) is str
        and phase in PHASES
        and _seat(to_act)
        and _seat(dealer)
        and _cards(hand, 11)
        and _cards(pile, 52)
        and _int(v["stock_size"], 0, 52)
        and _int(v["opponent_hand_size"], 0, 11)
        and _cards(known, 11)
        and _int(v["knock_limit"])
        and _int(v["multiplier"], 1)
        and _int(v["turn"])
        and type(scores) is tuple
        and len(scores) == 2
        and _int(scores[0])
        and _int(scores[1])
        and (taken is None or (type(taken) is str and taken in CARD_SET))
    ):
        return None
    return WireView(
        seat,
        phase,
        to_act,
        dealer,
        hand,
        pile,
        v["stock_size"],
        v["opponent_hand_size"],
        known,
        v["knock_limit"],
        v["multiplier"],
        v["turn"],
        scores,
        taken,
    )


def _events(v: Any) -> tuple[Event, ...] | None:
    if type(v) is not tuple:
        return None
    events = []
    for item in v:
        if type(item) is not dict or item.keys() != _EVENT_KEYS or item["type"] != "event":
            return None
        seat, action = item["seat"], _action(item["action"])
        if action is None or not _seat(seat):
            return None
        events.append(Event(seat, action))
    return tuple(events)


def read_request(data: bytes | bytearray | memoryview) -> Request | None:
    """The ``request`` in ``data`` if it has the common shape (see the module docstring),
    else None: then decode it with :func:`protocol.codec.decode_referee_message`'s general
    path, which gives the same message for everything this accepts."""
    if len(data) > _MAX_BYTES or bytes(data[:14]) not in _PREFIXES:
        return None
    try:
        m = msgpack.unpackb(
            data,
            use_list=False,
            raw=False,
            strict_map_key=True,
            max_str_len=4096,
            max_bin_len=0,
            max_array_len=1024,
            max_map_len=256,
            max_ext_len=0,
        )
    except Exception:  # the general path explains it
        return None
    keys = m.keys()
    events: tuple[Event, ...] = ()
    if keys == _REQUEST_KEYS_EVENTS:
        got = _events(m["events"])
        if got is None:
            return None
        events = got
    elif keys != _REQUEST_KEYS:
        return None
    rid, decision, legal_maps = m["request_id"], m["decision"], m["legal"]
    if not (
        _int(rid)
        and type(decision) is str
        and decision in DECISIONS
        and type(legal_maps) is tuple
        and legal_maps
        and _int(m["time_left_ms"])
        and _int(m["bank_ms"])
    ):
        return None
    legal = []
    for item in legal_maps:
        action = _action(item)
        if action is None:
            return None
        legal.append(action)
    view = _view(m["view"])
    if view is None:
        return None
    return Request(rid, decision, tuple(legal), view, m["time_left_ms"], m["bank_ms"], events)
