"""Hostile input: whatever the bytes, only ProtocolError subclasses escape the decoder."""

from __future__ import annotations

import struct
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.cards import ALL_CARDS
from protocol.checks import MAX_INT
from protocol.codec import (
    MAX_ARRAY_LEN,
    MAX_DEPTH,
    MAX_MAP_LEN,
    MAX_MESSAGE_BYTES,
    MAX_STR_BYTES,
    decode,
    decode_action,
    decode_bot_message,
    decode_referee_message,
    encode,
    encode_action,
    unpack,
)
from protocol.errors import ErrorCode, MalformedMessage, ProtocolError
from protocol.examples import EXAMPLES
from protocol.parse import parse_message, simple_action
from protocol.request_fast import read_request
from protocol.schema import (
    MESSAGE_CLASSES,
    REFEREE_MESSAGE_TYPES,
    ActionMsg,
    Bye,
    Message,
    Request,
    WireAction,
)
from protocol.values import ACTION_KINDS
from tests.protocol.strategies import corrupt, messages, wire_map

DECODERS = (decode, decode_bot_message, decode_referee_message)

msgpack_ints = st.integers(-(2**63), 2**64 - 1)
scalars = (
    st.none()
    | st.booleans()
    | msgpack_ints
    | st.floats()
    | st.text(max_size=20)
    | st.binary(max_size=8)
)
msgpack_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=6)
        | st.dictionaries(st.text(max_size=8) | msgpack_ints, children, max_size=6)
    ),
    max_leaves=40,
)
"""Arbitrary values msgpack can encode, including ones no message may hold."""


def _decode_all(data: bytes) -> None:
    for decoder in DECODERS:
        try:
            result = decoder(data)
        except ProtocolError as exc:
            assert exc.code in set(ErrorCode)
        else:
            assert type(result) in MESSAGE_CLASSES.values()
    fast = decode_action(data)
    if fast is not None:  # the fast path never accepts what the full decoder refuses or reads
        assert decode_bot_message(data) == ActionMsg(*fast)  # otherwise
    request = read_request(data)
    if request is not None:  # the same for the request's fast path
        assert parse_message(unpack(data), REFEREE_MESSAGE_TYPES) == request


@settings(max_examples=500)
@given(st.binary(max_size=600))
def test_arbitrary_bytes(data: bytes) -> None:
    _decode_all(data)


@settings(max_examples=300)
@given(messages, st.data())
def test_mangled_valid_messages(msg: Message, data: st.DataObject) -> None:
    raw = encode(msg)
    cut = data.draw(st.integers(0, len(raw)))
    _decode_all(raw[:cut])
    flip = data.draw(st.integers(0, len(raw) - 1))
    _decode_all(raw[:flip] + bytes([raw[flip] ^ data.draw(st.integers(1, 255))]) + raw[flip + 1 :])
    _decode_all(raw + data.draw(st.binary(min_size=1, max_size=4)))


# The action fast path reads the common reply (encode_action's layout) from its bytes: every
# request id form, every action a bot may send, and any damage to those bytes.
BOT_ACTIONS = [
    action
    for kind in ACTION_KINDS
    for card in (None, *ALL_CARDS)
    if (action := simple_action(kind, card)) is not None
]
bot_actions = st.sampled_from(BOT_ACTIONS)
request_ids = st.integers(0, 2**64 - 1) | st.sampled_from(
    [*(2**k + d for k in (7, 8, 16, 32, 53) for d in (-1, 0, 1)), 0, 2**64 - 1]
)


@settings(max_examples=500)
@given(bot_actions, request_ids)
def test_the_action_fast_path_reads_every_common_reply(action: WireAction, rid: int) -> None:
    data = encode_action(rid, action)
    fast = decode_action(data)
    if rid > MAX_INT:
        assert fast is None
        with pytest.raises(ProtocolError):
            decode_bot_message(data)
        return
    assert fast == (rid, action) and fast[1] is action
    general = decode_bot_message(data)
    assert isinstance(general, ActionMsg) and general.action is action


@settings(max_examples=500)
@given(bot_actions, request_ids, st.data())
def test_a_damaged_common_reply_is_read_as_the_general_decoder_reads_it(
    action: WireAction, rid: int, data: st.DataObject
) -> None:
    raw = encode_action(rid, action)
    at = data.draw(st.integers(0, len(raw) - 1))
    _decode_all(raw[:at])
    _decode_all(raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1 :])
    _decode_all(raw[:at] + data.draw(st.binary(min_size=1, max_size=3)) + raw[at:])
    _decode_all(raw + data.draw(st.binary(min_size=1, max_size=3)))


def test_the_common_reply_is_read_from_its_bytes_without_unpacking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What makes the fast path fast: no msgpack unpacking for the common reply, whatever
    the id's form and the action."""
    replies = [
        (rid, action, encode_action(rid, action))
        for rid in (0, 127, 128, 255, 256, 65_535, 65_536, 2**32 - 1, 2**32, MAX_INT)
        for action in BOT_ACTIONS
    ]

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("unpacked")

    monkeypatch.setattr(msgpack, "unpackb", refuse)
    for rid, action, data in replies:
        assert decode_action(data) == (rid, action)


def test_a_request_id_in_a_longer_form_than_needed_is_read_alike() -> None:
    action = simple_action("discard", "Qh")
    assert action is not None
    raw = encode_action(5, action)
    at = raw.index(b"request_id") + len(b"request_id")
    for marker, size in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
        wide = bytes([marker]) + (5).to_bytes(size, "big")
        data = raw[:at] + wide + raw[at + 1 :]
        assert decode_action(data) == (5, action)
        assert decode_bot_message(data) == ActionMsg(5, action)


@settings(max_examples=200)
@given(msgpack_values)
def test_arbitrary_msgpack_values(value: Any) -> None:
    _decode_all(msgpack.packb(value))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(messages, st.data())
def test_valid_messages_with_one_field_corrupted(msg: Message, data: st.DataObject) -> None:
    wire = corrupt(wire_map(msg), data, msgpack_values)
    _decode_all(msgpack.packb(wire))


def test_oversized_input_is_rejected_before_unpacking(monkeypatch: pytest.MonkeyPatch) -> None:
    def unpack_called(*args: object, **kwargs: object) -> None:
        raise AssertionError("the unpacker must not see an oversized frame")

    monkeypatch.setattr(msgpack, "unpackb", unpack_called)
    data = msgpack.packb({"type": "bye", "reason": "x" * MAX_MESSAGE_BYTES})
    for decoder in DECODERS:
        with pytest.raises(MalformedMessage) as info:
            decoder(data)
        assert info.value.code == ErrorCode.TOO_LARGE
        with pytest.raises(MalformedMessage):
            decoder(b"\x00" * (MAX_MESSAGE_BYTES + 1))


def test_message_of_exactly_the_maximum_size_is_accepted() -> None:
    chunks = ["y" * 4000] * 16  # unknown field, each string under MAX_STR_BYTES
    base = len(msgpack.packb({"type": "bye", "pad": chunks}))
    chunks.append("z" * (MAX_MESSAGE_BYTES - base - 3))  # str16 header: 3 bytes
    data = msgpack.packb({"type": "bye", "pad": chunks})
    assert len(data) == MAX_MESSAGE_BYTES
    assert decode(data) == Bye()
    with pytest.raises(MalformedMessage):
        decode(data + b"\xc0")
    with pytest.raises(MalformedMessage) as info:
        encode(Bye(reason="z" * MAX_MESSAGE_BYTES))
    assert info.value.code == ErrorCode.TOO_LARGE


@pytest.mark.timeout(5)
@pytest.mark.parametrize(
    "data",
    [
        b"\x91" * 100_000 + b"\xc0",  # 10^5 nested arrays
        b"\x81\xa1k" * 30_000 + b"\xc0",  # 3*10^4 nested maps
        b"\xdc\x00\x01" * 20_000 + b"\xc0",  # array16 headers
    ],
    ids=["arrays", "maps", "array16"],
)
def test_deep_nesting_is_rejected_quickly(data: bytes) -> None:
    for decoder in DECODERS:
        with pytest.raises(MalformedMessage) as info:
            decoder(data[:MAX_MESSAGE_BYTES])
        assert info.value.code == ErrorCode.MALFORMED


def _nested(depth: int) -> Any:
    """A value whose arrays nest ``depth`` levels deep."""
    value: Any = None
    for _ in range(depth):
        value = [value]
    return value


def test_depth_limit_is_exact() -> None:
    # The top-level map is level 1, so a field may hold MAX_DEPTH - 1 levels of arrays.
    ok = msgpack.packb({"type": "bye", "x": _nested(MAX_DEPTH - 1)})
    assert decode(ok) == Bye()
    too_deep = msgpack.packb({"type": "bye", "x": _nested(MAX_DEPTH)})
    with pytest.raises(MalformedMessage, match="nested deeper"):
        decode(too_deep)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "incomplete"),
        (b"\xc1", "not valid msgpack"),
        (msgpack.packb({"type": "ping", "nonce": 1}) + b"\xc0", "trailing"),
        (b"\x82\xa4type\xa3bye\xa1x\xd6\x05abcd", "max_ext_len"),
        (b"\x82\xa4type\xa3bye\xa1x\xc7\x00\x05", "ext type 5 is not allowed"),  # empty ext
        (b"\x81\xa4type\xd6\xff\x00\x00\x00\x00", "max_ext_len"),  # timestamp ext
        (b"\x82\xa4type\xa3bye\xa1x\xc4\x01z", "not valid msgpack"),  # bin
        (b"\x82\xa4type\xa3bye\xc4\x00\xc0", "map keys must be strings"),  # empty bin key
        (b"\x82\xa4type\xa3bye\x01\xc0", "not valid msgpack"),  # int key
        (b"\x81\xa4type\xa3b\xffe", "not valid msgpack"),  # invalid UTF-8
        (b"\x81\xa4type\xdb\xff\xff\xff\xff", "not valid msgpack"),  # 4 GiB string header
        (b"\x81\xa4type\xdd\xff\xff\xff\xff", "not valid msgpack"),  # 4G-element array
        (b"\x81\xa4type\xdf\xff\xff\xff\xff", "not valid msgpack"),  # 4G-entry map
        (b"\x81\xa4type\xda" + struct.pack(">H", MAX_STR_BYTES + 1), "not valid msgpack"),
        (b"\x81\xa4type\xdc" + struct.pack(">H", MAX_ARRAY_LEN + 1), "not valid msgpack"),
        (b"\x81\xa4type\xde" + struct.pack(">H", MAX_MAP_LEN + 1), "not valid msgpack"),
    ],
    ids=[
        "empty",
        "reserved-byte",
        "trailing",
        "ext",
        "empty-ext",
        "timestamp",
        "bin",
        "bin-key",
        "int-key",
        "utf8",
        "huge-str",
        "huge-array",
        "huge-map",
        "str-limit",
        "array-limit",
        "map-limit",
    ],
)
def test_malformed_bytes(data: bytes, match: str) -> None:
    for decoder in DECODERS:
        with pytest.raises(MalformedMessage, match=match) as info:
            decoder(data)
        assert info.value.code == ErrorCode.MALFORMED


def test_limits_leave_room_for_every_example() -> None:
    for msg in EXAMPLES.values():
        assert len(encode(msg)) < MAX_MESSAGE_BYTES // 16


def test_request_events_are_bounded_by_the_array_limit() -> None:
    wire = wire_map(EXAMPLES["request_events"])
    event = wire["events"][0]
    wire["events"] = [event] * MAX_ARRAY_LEN
    request = decode(msgpack.packb(wire))
    assert isinstance(request, Request) and len(request.events) == MAX_ARRAY_LEN
    wire["events"].append(event)
    for decoder in (decode, decode_referee_message):
        with pytest.raises(MalformedMessage) as info:
            decoder(msgpack.packb(wire))
        assert info.value.code == ErrorCode.MALFORMED
