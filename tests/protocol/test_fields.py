"""The description of each message (protocol.fields) against the encoder and the parser.

Every message is drawn from its description (tests/protocol/strategies.py), so these hold
for every field of every type, including one added later, without naming any field here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import decode, encode
from protocol.errors import ErrorCode, SchemaError
from protocol.fields import describe, map_header, to_wire
from protocol.schema import MESSAGE_CLASSES, Message
from tests.protocol.strategies import messages


def _written(msg: Message) -> list[str]:
    """The keys the description says ``msg`` is written with, in order."""
    spec = describe(type(msg))
    names = ["type"]
    for f in spec.fields:
        value = getattr(msg, f.name)
        if f.presence != "optional" or value != f.default:
            names.append(f.name)
    return names


@settings(max_examples=300)
@given(messages)
def test_keys_follow_the_description(msg: Message) -> None:
    data = encode(msg)
    assert list(msgpack.unpackb(data)) == _written(msg)
    assert data.startswith(map_header(len(_written(msg))))


@settings(max_examples=300)
@given(messages, st.data())
def test_a_missing_required_field_is_named(msg: Message, data: st.DataObject) -> None:
    required = [f.name for f in describe(type(msg)).fields if f.presence != "optional"]
    if not required:
        return
    name = data.draw(st.sampled_from(required))
    wire = to_wire(msg)
    del wire[name]
    with pytest.raises(SchemaError) as info:
        decode(msgpack.packb(wire))
    assert info.value.code == ErrorCode.MISSING_FIELD
    assert info.value.field == f"{msg.TYPE}.{name}"


@settings(max_examples=300)
@given(messages)
def test_nil_decodes_to_the_default_of_optional_fields_and_to_none_of_nullable_ones(
    msg: Message,
) -> None:
    wire: dict[str, Any] = to_wire(msg)
    expected = {}
    for f in describe(type(msg)).fields:
        if f.presence in ("optional", "nullable"):
            wire[f.name] = None
            expected[f.name] = f.default
    assert {k: getattr(decode(msgpack.packb(wire)), k) for k in expected} == expected


@pytest.mark.parametrize("cls", list(MESSAGE_CLASSES.values()), ids=list(MESSAGE_CLASSES))
def test_every_field_has_a_wire_type_and_a_check(cls: type[Any]) -> None:
    spec = describe(cls)
    assert spec.type == cls.TYPE
    assert [f.name for f in spec.fields] == [f.name for f in dataclasses.fields(cls)]
    header = spec.header()
    assert header == map_header(1 + len(spec.always))
    assert spec.keys()["type"] == msgpack.packb("type")


@given(messages)
def test_a_wrong_type_in_any_field_is_named(msg: Message) -> None:
    wire = to_wire(msg)
    fields = describe(type(msg)).fields
    for f in fields:
        broken = {**wire, f.name: 1.5}  # no field of the protocol holds a float
        with pytest.raises(SchemaError) as info:
            decode(msgpack.packb(broken))
        assert info.value.code == ErrorCode.BAD_TYPE, (f.name, info.value)
        assert info.value.field == f"{msg.TYPE}.{f.name}"
