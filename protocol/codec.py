"""Bytes <-> messages: the msgpack codec of wire protocol v1, and its limits.

``encode`` turns a :mod:`protocol.schema` message into the bytes of one ZeroMQ frame
(one msgpack map whose ``type`` key comes first). ``decode`` does the reverse for any
input bytes, raising only :class:`~protocol.errors.ProtocolError` subclasses:
:class:`~protocol.errors.MalformedMessage` when the bytes are not one acceptable msgpack
value, :class:`~protocol.errors.SchemaError` when the value has the wrong shape.

The map of each message is derived from its description (:func:`protocol.fields.to_wire`);
the common ``action`` reply has a decoding fast path here, and the ``request`` one in
:mod:`protocol.request_fast`, each giving the same results as the general path (property
tested). ``encode`` trusts its input (the referee encodes every event with it): it
does not validate cards or ranges, so a message built with bad values encodes to bytes that
``decode`` rejects. The referee writes its per-decision ``request`` itself
(``referee/match/request.py``), from the same description.

>>> from protocol.errors import ProtocolError
>>> from protocol.schema import Ping
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

import functools
from typing import Any, NoReturn, cast

import msgpack

from protocol.cards import ALL_CARDS
from protocol.checks import MAX_INT
from protocol.errors import MalformedMessage
from protocol.fields import describe, to_wire
from protocol.parse import interned_action, parse_message, simple_action
from protocol.request_fast import read_request
from protocol.schema import (
    BOT_MESSAGE_TYPES,
    MESSAGE_CLASSES,
    REFEREE_MESSAGE_TYPES,
    ActionMsg,
    BotMessage,
    Message,
    RefereeMessage,
    WireAction,
)
from protocol.values import ACTION_KINDS

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
    "encode_action",
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

_pack = msgpack.Packer(use_bin_type=True).pack
_MESSAGE_CLASSES = frozenset(MESSAGE_CLASSES.values())


def encode(msg: Message) -> bytes:
    """The msgpack bytes of ``msg``: one map, ``type`` first, optional fields omitted.

    Raises ``TypeError`` for a non-message and ``MalformedMessage`` (``too_large``)
    if the result would exceed :data:`MAX_MESSAGE_BYTES`.
    """
    if type(msg) not in _MESSAGE_CLASSES:
        raise TypeError(f"not a protocol message: {type(msg).__name__}")
    data: bytes = _pack(to_wire(msg))
    if len(data) > MAX_MESSAGE_BYTES:
        raise MalformedMessage.too_large(len(data), MAX_MESSAGE_BYTES)
    return data


_REPLIES: dict[int, tuple[WireAction, bytes, bytes]] = {}
"""Per interned action (see :func:`protocol.parse.interned_action`), by identity: the action
(kept, so that its id is not reused), then the bytes of its ``action`` message before and
after the request id."""


def encode_action(request_id: int, action: WireAction) -> bytes:
    """``encode(ActionMsg(request_id, action))``, the bot's reply at every decision: for an
    interned action (each one of a decoded request's ``legal``) from cached fragments.
    Property-tested against :func:`encode`."""
    cached = _REPLIES.get(id(action))
    if cached is None:
        try:
            interned = interned_action(action.kind, action.card) is action
        except TypeError:  # an unhashable field: not an action a request lists
            interned = False
        if not interned:
            return encode(ActionMsg(request_id, action))
        spec = describe(ActionMsg)
        keys = spec.keys()
        head = spec.header() + spec.type_prefix() + keys["request_id"]
        cached = _REPLIES[id(action)] = (action, head, keys["action"] + _pack(to_wire(action)))
    return cached[1] + _pack(request_id) + cached[2]


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
        why = str(exc) or f"{type(exc).__name__} at first byte 0x{bytes(data[:1]).hex() or 'none'}"
        raise MalformedMessage(f"not valid msgpack: {why}") from None
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


_UINT_BYTES = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}
"""msgpack's unsigned integer markers, and the big-endian bytes after each."""


@functools.cache
def _layout() -> tuple[bytes, dict[bytes, WireAction]]:
    """The common reply's layout, as :func:`encode_action` writes it: its head (a 3-entry map,
    ``type`` ``action``, then the ``request_id`` key) and, for every meld-free action a bot
    may send, its tail (from the ``action`` key to the end, ``kind`` before ``card``) with the
    interned wire action. Made at the first :func:`decode_action` (a bot never needs it)."""
    spec = describe(ActionMsg)
    keys = spec.keys()
    tails = {}
    for kind in ACTION_KINDS:
        for card in (None, *ALL_CARDS):
            action = simple_action(kind, card)
            if action is not None:
                tails[keys["action"] + _pack(to_wire(action))] = action
    return spec.header() + spec.type_prefix() + keys["request_id"], tails


def decode_action(data: bytes) -> tuple[int, WireAction] | None:
    """Fast path of :func:`decode_bot_message` for the common reply: ``(request_id, action)``
    of a well-formed ``action`` message without melds or extra fields, else None.

    None means "use :func:`decode_bot_message`", which gives the same result for everything
    this accepts (property-tested) and the precise error for everything else. A reply laid
    out as :func:`encode_action` writes it (the SDK's, and most bots') is read from its bytes:
    the fixed head, the request id, then the rest looked up whole; any other is unpacked.
    """
    if len(data) > _FAST_ACTION_BYTES:
        return None
    head, tails = _layout()
    at = len(head)
    if data.startswith(head) and len(data) > at:
        marker = data[at]
        size = 0 if marker < 0x80 else _UINT_BYTES.get(marker, -1)
        if size >= 0:  # a positive integer: the rest must be one of the tails, exactly
            number = marker if size == 0 else int.from_bytes(data[at + 1 : at + 1 + size])
            action = tails.get(data[at + 1 + size :])
            if action is not None and number <= MAX_INT:
                return number, action
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
    request = read_request(data)  # the message of every decision: its fast path first
    if request is not None:
        return request
    return cast(RefereeMessage, parse_message(unpack(data), REFEREE_MESSAGE_TYPES))
