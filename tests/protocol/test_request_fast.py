"""The ``request`` fast path gives exactly what the general decoder gives, or steps aside."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import codec, request_fast
from protocol.codec import decode_referee_message, encode, unpack
from protocol.errors import ProtocolError
from protocol.examples import EXAMPLES, REQUEST_WITH_EVENTS, TYPICAL_REQUEST
from protocol.parse import parse_message
from protocol.request_fast import read_request
from protocol.schema import REFEREE_MESSAGE_TYPES, Event, Request, WireAction
from tests.protocol.strategies import corrupt, described, wire_map


def general(data: bytes) -> Any:
    """The general path alone: unpack with every limit, then the schema's parsers."""
    return parse_message(unpack(data), REFEREE_MESSAGE_TYPES)


def meld_free(request: Request) -> bool:
    """No melds anywhere (a defend request's knocker_melds included): the fast path's."""
    actions = [*request.legal, *(event.action for event in request.events)]
    return request.knocker_melds is None and all(action.melds is None for action in actions)


def test_the_examples_take_the_fast_path() -> None:
    for request in (TYPICAL_REQUEST, REQUEST_WITH_EVENTS):
        data = encode(request)
        assert read_request(data) == request == general(data)
    others = [m for m in EXAMPLES.values() if not isinstance(m, Request)]
    assert others and all(read_request(encode(m)) is None for m in others)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(described(Request))
def test_every_meld_free_request_is_read_as_the_general_path_reads_it(request: Request) -> None:
    data = encode(request)
    fast = read_request(data)
    if meld_free(request):
        assert fast == request == general(data)
        assert fast is not None and decode_referee_message(data) is not None
    else:  # a knock with melds in the legal list or an event: the general path reads it
        assert fast is None
        assert decode_referee_message(data) == request


def test_what_the_fast_path_leaves_to_the_general_path() -> None:
    wire = wire_map(REQUEST_WITH_EVENTS)
    cases: list[dict[str, Any]] = [
        {**wire, "future_field": 1},  # unknown fields: ignored by the general path
        {**wire, "events": None},  # nil for an optional field
        {**wire, "view": {**wire["view"], "future": True}},
        {**wire, "legal": [{**wire["legal"][0], "melds": None}]},
        {**wire, "events": [{**wire["events"][0], "extra": 0}]},
    ]
    for case in cases:
        data = msgpack.packb(case)
        assert read_request(data) is None
        assert decode_referee_message(data) == general(data)
    # type not first (another encoder's order): still decoded, by the general path
    reordered = msgpack.packb(dict(reversed(list(wire.items()))))
    assert read_request(reordered) is None
    assert decode_referee_message(reordered) == REQUEST_WITH_EVENTS


@pytest.mark.parametrize("field", ["hand", "discard_pile", "opponent_known"])
@pytest.mark.parametrize(
    "bad",
    [
        ("As", "As"),  # a card twice
        ("As", 1),  # not a string
        ("As", "1s"),  # not a canonical card
        ("As", {"card": "Td"}),  # a map (unhashable)
        ("As", ("Td",)),  # an array
    ],
)
def test_a_bad_card_list_is_left_to_the_general_path(field: str, bad: tuple[Any, ...]) -> None:
    wire = wire_map(TYPICAL_REQUEST)
    raw = msgpack.packb({**wire, "view": {**wire["view"], field: list(bad)}})
    assert read_request(raw) is None
    with pytest.raises(ProtocolError):
        general(raw)


HOSTILE = (
    st.none()
    | st.booleans()
    | st.integers(-3, 2**53 + 1)
    | st.sampled_from(["As", "Td", "Td", "1h", "draw", "discard", "event", "knock"])
    | st.lists(st.sampled_from(["As", "Td", "2c", "As"]), max_size=12)
    | st.floats(allow_nan=False)
)
"""Small values close to valid ones: bad cards, repeated cards, ints out of range, floats."""


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(described(Request), st.data())
def test_a_corrupted_request_is_never_accepted_differently(
    request: Request, data: st.DataObject
) -> None:
    raw = msgpack.packb(corrupt(wire_map(request), data, HOSTILE))
    fast = read_request(raw)
    if fast is not None:  # accepted: the general path accepts it too, and reads the same
        assert fast == general(raw)


def test_the_limits_are_the_codecs() -> None:
    assert request_fast._MAX_BYTES == codec.MAX_MESSAGE_BYTES
    big = msgpack.packb(wire_map(replace(TYPICAL_REQUEST, legal=(WireAction.draw_stock(),) * 8000)))
    assert len(big) > codec.MAX_MESSAGE_BYTES and read_request(big) is None
    many = encode(replace(TYPICAL_REQUEST, legal=(WireAction.draw_stock(),) * 1025))
    assert read_request(many) is None  # more entries than MAX_ARRAY_LEN
    events = tuple(Event(1, WireAction.draw_stock()) for _ in range(codec.MAX_ARRAY_LEN))
    at_limit = encode(replace(TYPICAL_REQUEST, events=events))
    assert read_request(at_limit) == general(at_limit)
