"""Every valid message survives encode then decode unchanged, through every decoder."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import ALL_CARDS
from protocol.codec import (
    decode,
    decode_action,
    decode_bot_message,
    decode_referee_message,
    encode,
    encode_action,
)
from protocol.errors import ErrorCode, SchemaError
from protocol.examples import EXAMPLES, TYPICAL_REQUEST
from protocol.parse import interned_action
from protocol.schema import (
    ACTION_KINDS,
    BOT_MESSAGE_TYPES,
    MESSAGE_CLASSES,
    REFEREE_MESSAGE_TYPES,
    ActionMsg,
    Bye,
    Event,
    Hello,
    Message,
    Request,
    Welcome,
    WireAction,
)
from tests.protocol.strategies import messages


@settings(max_examples=400)
@given(messages)
def test_round_trip(msg: Message) -> None:
    data = encode(msg)
    assert decode(data) == msg
    assert type(decode(data)) is type(msg)
    unpacked = msgpack.unpackb(data)
    assert next(iter(unpacked)) == "type"
    assert unpacked["type"] == msg.TYPE


@given(messages)
def test_directional_decoders(msg: Message) -> None:
    data = encode(msg)
    for decoder, allowed in (
        (decode_bot_message, BOT_MESSAGE_TYPES),
        (decode_referee_message, REFEREE_MESSAGE_TYPES),
    ):
        if msg.TYPE in allowed:
            assert decoder(data) == msg
        else:
            with pytest.raises(SchemaError) as info:
                decoder(data)
            assert info.value.code == ErrorCode.UNEXPECTED_TYPE


def test_every_type_has_a_strategy_and_an_example() -> None:
    example_types = {m.TYPE for m in EXAMPLES.values()}
    assert example_types == set(MESSAGE_CLASSES)
    assert set(MESSAGE_CLASSES) == BOT_MESSAGE_TYPES | REFEREE_MESSAGE_TYPES
    assert {"bye"} == BOT_MESSAGE_TYPES & REFEREE_MESSAGE_TYPES


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_round_trip(name: str) -> None:
    assert decode(encode(EXAMPLES[name])) == EXAMPLES[name]


def test_optional_fields_are_omitted_and_nil_means_absent() -> None:
    assert msgpack.unpackb(encode(Bye())) == {"type": "bye"}
    assert decode(msgpack.packb({"type": "bye", "reason": None})) == Bye()
    action = {"kind": "knock", "card": "7h", "melds": None}
    data = msgpack.packb({"type": "action", "request_id": 3, "action": action})
    assert decode(data) == ActionMsg(3, WireAction.knock("7h"))


def test_inline_events_fields_are_omitted_when_unused() -> None:
    hello, welcome = EXAMPLES["hello"], EXAMPLES["welcome"]
    assert isinstance(hello, Hello) and isinstance(welcome, Welcome)
    assert hello.inline_events and welcome.inline_events
    assert msgpack.unpackb(encode(hello))["inline_events"] is True
    assert msgpack.unpackb(encode(welcome))["inline_events"] is True
    for msg in (replace(hello, inline_events=False), replace(welcome, inline_events=False)):
        wire = msgpack.unpackb(encode(msg))
        assert "inline_events" not in wire
        for value in (None, False):
            assert decode(msgpack.packb({**wire, "inline_events": value})) == msg
    data = encode(TYPICAL_REQUEST)
    assert data[0] == 0x87
    assert "events" not in msgpack.unpackb(data)
    wire = msgpack.unpackb(data)
    no_events: tuple[list[object] | None, ...] = (None, [])
    for events in no_events:
        assert decode(msgpack.packb({**wire, "events": events})) == TYPICAL_REQUEST


def test_events_inside_a_request_are_event_messages_last() -> None:
    request = EXAMPLES["request_events"]
    assert isinstance(request, Request) and len(request.events) == 2
    data = encode(request)
    wire = msgpack.unpackb(data)
    assert data[0] == 0x88
    assert list(wire)[-1] == "events"
    assert wire["events"] == [msgpack.unpackb(encode(e)) for e in request.events]
    tail = msgpack.packb("events") + b"\x92" + b"".join(encode(e) for e in request.events)
    assert data.endswith(tail), "each element is exactly the bytes of the event message"


@pytest.mark.parametrize("count", [1, 15, 16, 40])
def test_requests_with_many_events(count: int) -> None:
    discard, knock = WireAction.discard("2h"), WireAction.knock("9c", (("3c", "3d", "3h"),))
    events = tuple(Event(seat=1, action=knock if i % 7 == 3 else discard) for i in range(count))
    request = replace(TYPICAL_REQUEST, events=events)
    data = encode(request)
    assert msgpack.unpackb(data)["events"] == [msgpack.unpackb(encode(e)) for e in events]
    assert decode(data) == request


def test_unknown_fields_are_ignored() -> None:
    wire = {"type": "event", "seat": 1, "action": {"kind": "draw_stock", "x": [1, {"y": 2.5}]}}
    wire["extra"] = {"nested": [b"", None, True, 1.5]}
    assert decode(msgpack.packb(wire)) == EXAMPLES["event_draw"]


def test_request_id_is_carried_faithfully() -> None:
    for request_id in (0, 1, 17, 2**31, 2**53 - 1):
        msg = decode_bot_message(
            msgpack.packb(
                {"type": "action", "request_id": request_id, "action": {"kind": "draw_stock"}}
            )
        )
        assert isinstance(msg, ActionMsg)
        assert msg.request_id == request_id
        assert decode(encode(msg)) == msg


def test_encode_refuses_non_messages() -> None:
    with pytest.raises(TypeError):
        encode("hello")  # type: ignore[arg-type]


@settings(max_examples=300)
@given(messages)
def test_action_fast_path_reads_every_meld_free_action(msg: Message) -> None:
    fast = decode_action(encode(msg))
    if isinstance(msg, ActionMsg) and msg.action.melds is None:
        assert fast == (msg.request_id, msg.action)
        assert fast[1] is decode_bot_message(encode(msg)).action  # type: ignore[union-attr]
    else:
        assert fast is None


@settings(max_examples=500)
@given(
    st.sampled_from(sorted(ACTION_KINDS)),
    st.none() | st.sampled_from(sorted(ALL_CARDS)),
    st.integers(0, 2**64 - 1),
    messages,
)
def test_the_reply_writer_gives_the_bytes_of_encode(
    kind: str, card: str | None, request_id: int, msg: Message
) -> None:
    """For the interned actions a decoded request lists (the cached path) and for any other
    action (one a bot built itself, one with melds: the general path), ``encode_action``
    gives the bytes of ``encode``."""
    interned = interned_action(kind, card)
    actions = [WireAction(kind, card)]  # equal to an interned one, or not valid: not cached
    if interned is not None:
        actions += [interned, interned]  # the first call caches it, the second reads it
    if isinstance(msg, ActionMsg):
        actions.append(msg.action)
    for action in actions:
        expected = encode(ActionMsg(request_id, action))
        assert encode_action(request_id, action) == expected
