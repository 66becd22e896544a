"""Bytes <-> messages: the msgpack codec of wire protocol v1, and its limits.

``encode`` turns a :mod:`protocol.schema` message into the bytes of one ZeroMQ frame
(one msgpack map whose ``type`` key comes first). ``decode`` does the reverse for any
input bytes, raising only :class:`~protocol.errors.ProtocolError` subclasses:
:class:`~protocol.errors.MalformedMessage` when the bytes are not one acceptable msgpack
value, :class:`~protocol.errors.SchemaError` when the value has the wrong shape.

``encode`` trusts its input (it is on the referee's hot path): it does not validate
cards or ranges, so a message built with bad values encodes to bytes that ``decode``
rejects.

>>> from protocol.errors import ProtocolError
>>> data = encode(Ping(nonce=5))
>>> data.hex(" ")
'82 a4 74 79 70 65 a4 70 69 6e 67 a5 6e 6f 6e 63 65 05'
>>> decode(data)
Ping(nonce=5)
>>> try:
...     decode(b"\\x93\\x01")  # an array of 3 items holding only 1
... except ProtocolError as exc:
...     print(exc.code)
malformed
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, cast

import msgpack

from protocol.checks import MAX_INT
from protocol.errors import MalformedMessage
from protocol.parse import parse_message, simple_action
from protocol.schema import (
    BOT_MESSAGE_TYPES,
    REFEREE_MESSAGE_TYPES,
    ActionMsg,
    BotMessage,
    Bye,
    Error,
    Event,
    GameEnd,
    HandEnd,
    HandStart,
    Hello,
    MatchEnd,
    MatchStart,
    Message,
    Ping,
    Pong,
    RefereeMessage,
    Reject,
    Request,
    Welcome,
    WireAction,
    WireView,
)

__all__ = [
    "MAX_ARRAY_LEN",
    "MAX_DEPTH",
    "MAX_MAP_LEN",
    "MAX_MESSAGE_BYTES",
    "MAX_STR_BYTES",
    "decode",
    "decode_action",
    "decode_bot_message",
    "decode_referee_message",
    "encode",
    "packed_action",
]

MAX_MESSAGE_BYTES = 64 * 1024
"""Largest frame accepted (and produced). The largest real v1 message is under 2 KiB."""

MAX_STR_BYTES = 4096
"""Longest msgpack str, in UTF-8 bytes."""

MAX_ARRAY_LEN = 1024
"""Most elements in one msgpack array."""

MAX_MAP_LEN = 256
"""Most entries in one msgpack map."""

MAX_DEPTH = 16
"""Deepest nesting of arrays and maps; the top-level map is depth 1 (v1 needs 5)."""


class _ExtRefused(Exception):
    """Raised by the unpacker's ext hook: no ext type is valid in this protocol."""


def _refuse_ext(code: int, data: bytes) -> NoReturn:
    raise _ExtRefused(f"ext type {code} is not allowed")


# ------------------------------------------------------------------------ encoding


def _action(a: WireAction) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": a.kind}
    if a.card is not None:
        d["card"] = a.card
    if a.melds is not None:
        d["melds"] = a.melds
    return d


def _view(v: WireView) -> dict[str, Any]:
    return {
        "seat": v.seat,
        "phase": v.phase,
        "to_act": v.to_act,
        "dealer": v.dealer,
        "hand": v.hand,
        "discard_pile": v.discard_pile,
        "stock_size": v.stock_size,
        "opponent_hand_size": v.opponent_hand_size,
        "opponent_known": v.opponent_known,
        "knock_limit": v.knock_limit,
        "multiplier": v.multiplier,
        "turn": v.turn,
        "scores": v.scores,
        "taken_card": v.taken_card,
    }


def _optional(d: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Add the fields that are not None (optional fields are omitted when absent)."""
    for key, value in fields.items():
        if value is not None:
            d[key] = value
    return d


def _flag(value: bool) -> bool | None:
    """An optional boolean field's wire value: written only when True."""
    return True if value else None


def _hello(m: Hello) -> dict[str, Any]:
    d = {"type": "hello", "protocol_version": m.protocol_version, "name": m.name}
    d["token"] = m.token
    return _optional(d, author=m.author, version=m.version, inline_events=_flag(m.inline_events))


def _welcome(m: Welcome) -> dict[str, Any]:
    d = {"type": "welcome", "protocol_version": m.protocol_version, "referee": m.referee}
    d["heartbeat_ms"] = m.heartbeat_ms
    return _optional(d, inline_events=_flag(m.inline_events))


def _event(m: Event) -> dict[str, Any]:
    return {"type": "event", "seat": m.seat, "action": _action(m.action)}


def _request(m: Request) -> dict[str, Any]:
    d = {
        "type": "request",
        "request_id": m.request_id,
        "decision": m.decision,
        "legal": [_action(a) for a in m.legal],
        "view": _view(m.view),
        "time_left_ms": m.time_left_ms,
        "bank_ms": m.bank_ms,
    }
    if m.events:
        d["events"] = [_event(e) for e in m.events]
    return d


def _match_start(m: MatchStart) -> dict[str, Any]:
    tc = m.time_control
    return {
        "type": "match_start",
        "match_id": m.match_id,
        "seat": m.seat,
        "opponent": m.opponent,
        "games": m.games,
        "rules": dict(m.rules),
        "rules_hash": m.rules_hash,
        "time_control": {
            "move_ms": tc.move_ms,
            "bank_ms": tc.bank_ms,
            "grace_ms": tc.grace_ms,
            "startup_ms": tc.startup_ms,
        },
    }


def _hand_end(m: HandEnd) -> dict[str, Any]:
    return {
        "type": "hand_end",
        "game": m.game,
        "hand": m.hand,
        "termination": m.termination,
        "winner": m.winner,
        "points": m.points,
        "hands": m.hands,
        "melds": m.melds,
        "layoffs": m.layoffs,
        "deadwood": m.deadwood,
        "scores": m.scores,
    }


def _match_end(m: MatchEnd) -> dict[str, Any]:
    f = m.fault
    return {
        "type": "match_end",
        "result": m.result,
        "games_won": m.games_won,
        "points": m.points,
        "reason": m.reason,
        "fault": None if f is None else {"code": f.code, "detail": f.detail},
    }


_ENCODERS: dict[type[Any], Callable[[Any], dict[str, Any]]] = {
    Hello: _hello,
    ActionMsg: lambda m: {
        "type": "action",
        "request_id": m.request_id,
        "action": _action(m.action),
    },
    Pong: lambda m: {"type": "pong", "nonce": m.nonce},
    Bye: lambda m: _optional({"type": "bye"}, reason=m.reason),
    Welcome: _welcome,
    Reject: lambda m: {
        "type": "reject",
        "code": m.code,
        "message": m.message,
        "supported_versions": m.supported_versions,
    },
    MatchStart: _match_start,
    HandStart: lambda m: {
        "type": "hand_start",
        "game": m.game,
        "hand": m.hand,
        "dealer": m.dealer,
        "hand_cards": m.hand_cards,
        "upcard": m.upcard,
        "scores": m.scores,
    },
    Request: _request,
    Event: _event,
    HandEnd: _hand_end,
    GameEnd: lambda m: {
        "type": "game_end",
        "game": m.game,
        "winner": m.winner,
        "scores": m.scores,
        "hands_won": m.hands_won,
    },
    MatchEnd: _match_end,
    Error: lambda m: _optional(
        {"type": "error", "code": m.code, "message": m.message}, request_id=m.request_id
    ),
    Ping: lambda m: {"type": "ping", "nonce": m.nonce},
}


def to_wire(msg: Message) -> dict[str, Any]:
    """The plain msgpack-ready map of ``msg`` (what ``encode`` packs)."""
    try:
        to_map = _ENCODERS[type(msg)]
    except KeyError:
        raise TypeError(f"not a protocol message: {type(msg).__name__}") from None
    return to_map(msg)


_pack = msgpack.Packer(use_bin_type=True).pack
_ACTION_BYTES: dict[WireAction, bytes] = {}
_EVENT_BYTES: dict[Event, bytes] = {}
_REQUEST_HEAD = b"\x87" + _pack("type") + _pack("request") + _pack("request_id")
_REQUEST_HEAD_EVENTS = b"\x88" + _REQUEST_HEAD[1:]
_K_DECISION, _K_LEGAL, _K_VIEW = _pack("decision"), _pack("legal"), _pack("view")
_K_TIME_LEFT, _K_BANK, _K_EVENTS = _pack("time_left_ms"), _pack("bank_ms"), _pack("events")


def packed_action(action: WireAction) -> bytes:
    """The msgpack bytes of one action map (as inside a request's ``legal`` list); the finite
    set of meld-free actions is cached."""
    data = _ACTION_BYTES.get(action)
    if data is None:
        data = _pack(_action(action))
        if action.melds is None:
            _ACTION_BYTES[action] = data
    return data


def _packed_event(event: Event) -> bytes:
    """The msgpack bytes of one event map (as inside a request's ``events`` list, and equal
    to ``encode(event)``); the finite set of meld-free events is cached."""
    data = _EVENT_BYTES.get(event)
    if data is None:
        data = _pack(_event(event))
        if event.action.melds is None:
            _EVENT_BYTES[event] = data
    return data


def _array_header(count: int) -> bytes:
    """The msgpack header of an array of ``count`` elements."""
    if count < 16:
        return bytes((0x90 | count,))
    if count <= 0xFFFF:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def _encode_request(m: Request) -> bytes:
    """Fast path for the per-decision message: the same bytes as packing :func:`_request`'s
    map (same key order, ``events`` last and only when there are some), with the packed
    forms of the legal actions and of the events taken from caches."""
    events = m.events
    return b"".join(
        (
            _REQUEST_HEAD_EVENTS if events else _REQUEST_HEAD,
            _pack(m.request_id),
            _K_DECISION,
            _pack(m.decision),
            _K_LEGAL,
            _array_header(len(m.legal)),
            *[packed_action(a) for a in m.legal],
            _K_VIEW,
            _pack(_view(m.view)),
            _K_TIME_LEFT,
            _pack(m.time_left_ms),
            _K_BANK,
            _pack(m.bank_ms),
            *(
                (_K_EVENTS, _array_header(len(events)), *map(_packed_event, events))
                if events
                else ()
            ),
        )
    )


def encode(msg: Message) -> bytes:
    """The msgpack bytes of ``msg``: one map, ``type`` first, optional fields omitted.

    Raises ``TypeError`` for a non-message and ``MalformedMessage`` (``too_large``)
    if the result would exceed :data:`MAX_MESSAGE_BYTES`.
    """
    if type(msg) is Request:
        data = _encode_request(msg)
    else:
        data = msgpack.packb(to_wire(msg), use_bin_type=True)
    if len(data) > MAX_MESSAGE_BYTES:
        raise MalformedMessage.too_large(len(data), MAX_MESSAGE_BYTES)
    return data


# ------------------------------------------------------------------------ decoding


def _check_tree(root: Any) -> None:
    """Enforce :data:`MAX_DEPTH` and string map keys, without recursion."""
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise MalformedMessage(f"nested deeper than {MAX_DEPTH} levels")
        if type(node) is dict:
            for key, value in node.items():
                if type(key) is not str:
                    raise MalformedMessage("map keys must be strings")
                if type(value) is dict or type(value) is tuple:
                    stack.append((value, depth + 1))
        else:
            stack.extend((v, depth + 1) for v in node if type(v) is dict or type(v) is tuple)


def unpack(data: bytes | bytearray | memoryview) -> Any:
    """Unpack one frame with every limit applied (maps become dicts, arrays tuples)."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise MalformedMessage.too_large(len(data), MAX_MESSAGE_BYTES)
    try:
        value = msgpack.unpackb(
            data,
            use_list=False,
            raw=False,
            strict_map_key=True,
            ext_hook=_refuse_ext,
            max_str_len=MAX_STR_BYTES,
            max_bin_len=0,
            max_array_len=MAX_ARRAY_LEN,
            max_map_len=MAX_MAP_LEN,
            max_ext_len=0,
        )
    except msgpack.ExtraData:
        raise MalformedMessage("trailing bytes after the message") from None
    except msgpack.StackError:
        raise MalformedMessage(f"nested deeper than {MAX_DEPTH} levels") from None
    except _ExtRefused as exc:
        raise MalformedMessage(str(exc)) from None
    except Exception as exc:  # any other unpacker failure: the bytes are not acceptable
        raise MalformedMessage(f"not valid msgpack: {exc}") from None
    if type(value) is dict or type(value) is tuple:
        _check_tree(value)
    return value


def decode(data: bytes | bytearray | memoryview) -> Message:
    """The message held by ``data``, of any type; raises only ``ProtocolError``."""
    return parse_message(unpack(data))


def decode_bot_message(data: bytes | bytearray | memoryview) -> BotMessage:
    """Decode bytes sent by a bot: ``hello``, ``action``, ``pong`` or ``bye``.

    A referee-only type raises ``SchemaError`` with code ``unexpected_type``.
    """
    return cast(BotMessage, parse_message(unpack(data), BOT_MESSAGE_TYPES))


_FAST_ACTION_BYTES = 128
"""Longest payload the action fast path looks at (a meld-free action is about 60 bytes)."""


def decode_action(data: bytes) -> tuple[int, WireAction] | None:
    """Fast path of :func:`decode_bot_message` for the common reply: ``(request_id, action)``
    of a well-formed ``action`` message without melds or extra fields, else None.

    None means "use :func:`decode_bot_message`", which gives the same result for everything
    this accepts (property-tested) and the precise error for everything else.
    """
    if len(data) > _FAST_ACTION_BYTES:
        return None
    try:
        m = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=False, max_bin_len=0)
    except Exception:  # any bytes the full decoder must explain
        return None
    if type(m) is not dict or len(m) != 3 or m.get("type") != "action":
        return None
    rid, a = m.get("request_id"), m.get("action")
    if type(rid) is not int or not 0 <= rid <= MAX_INT or type(a) is not dict:
        return None
    kind, card = a.get("kind"), a.get("card")
    if len(a) != (1 if card is None else 2):
        return None
    action = simple_action(kind, card)
    if action is None:
        return None
    return rid, action


def decode_referee_message(data: bytes | bytearray | memoryview) -> RefereeMessage:
    """Decode bytes sent by the referee (everything but ``hello``, ``action``, ``pong``).

    A bot-only type raises ``SchemaError`` with code ``unexpected_type``.
    """
    return cast(RefereeMessage, parse_message(unpack(data), REFEREE_MESSAGE_TYPES))
