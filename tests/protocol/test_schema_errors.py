"""Every schema violation yields its documented error code and field path (table-driven)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack
import pytest

from protocol.codec import decode, decode_bot_message, decode_referee_message, encode
from protocol.errors import ErrorCode, MalformedMessage, ProtocolError, SchemaError, VersionMismatch
from protocol.examples import EXAMPLES
from protocol.schema import Hello, check_version
from tests.protocol.strategies import wire_map

DELETE = object()
"""Marker value: remove the field instead of setting it."""


@dataclass(frozen=True)
class Case:
    """Example ``example`` with the value at ``path`` replaced, and the error it must give."""

    example: str
    path: tuple[str | int, ...]
    value: Any
    code: ErrorCode
    field: str

    def wire(self) -> dict[str, Any]:
        wire = wire_map(EXAMPLES[self.example])
        parent: Any = wire
        for key in self.path[:-1]:
            parent = parent[key]
        if self.value is DELETE:
            del parent[self.path[-1]]
        else:
            parent[self.path[-1]] = self.value
        return wire


M, T, V, C = ErrorCode.MISSING_FIELD, ErrorCode.BAD_TYPE, ErrorCode.BAD_VALUE, ErrorCode.BAD_CARD
BIG = 2**53

CASES = [
    # The envelope.
    Case("ping", ("type",), DELETE, M, "message.type"),
    Case("ping", ("type",), 5, T, "message.type"),
    Case("ping", ("type",), "pingg", ErrorCode.UNKNOWN_TYPE, "message.type"),
    Case("ping", ("type",), "PING", ErrorCode.UNKNOWN_TYPE, "message.type"),
    # hello
    Case("hello", ("name",), "", V, "hello.name"),
    Case("hello", ("name",), "n" * 65, V, "hello.name"),
    Case("hello", ("name",), 5, T, "hello.name"),
    Case("hello", ("token",), DELETE, M, "hello.token"),
    Case("hello", ("token",), "t" * 129, V, "hello.token"),
    Case("hello", ("protocol_version",), "1", T, "hello.protocol_version"),
    Case("hello", ("protocol_version",), -1, V, "hello.protocol_version"),
    Case("hello", ("author",), 7, T, "hello.author"),
    Case("hello", ("inline_events",), 1, T, "hello.inline_events"),
    Case("hello", ("inline_events",), 0, T, "hello.inline_events"),
    Case("hello", ("inline_events",), "true", T, "hello.inline_events"),
    Case("hello", ("inline_events",), [True], T, "hello.inline_events"),
    # action and the action map
    Case("action", ("request_id",), DELETE, M, "action.request_id"),
    Case("action", ("request_id",), -1, V, "action.request_id"),
    Case("action", ("request_id",), BIG, V, "action.request_id"),
    Case("action", ("request_id",), True, T, "action.request_id"),
    Case("action", ("request_id",), 17.0, T, "action.request_id"),
    Case("action", ("action",), "discard", T, "action.action"),
    Case("action", ("action",), DELETE, M, "action.action"),
    Case("action", ("action", "kind"), DELETE, M, "action.action.kind"),
    Case("action", ("action", "kind"), "play", V, "action.action.kind"),
    Case("action", ("action", "kind"), 3, T, "action.action.kind"),
    Case("action", ("action", "card"), DELETE, M, "action.action.card"),
    Case("action", ("action", "card"), None, M, "action.action.card"),
    Case("action", ("action", "card"), "10h", C, "action.action.card"),
    Case("action", ("action", "card"), "2H", C, "action.action.card"),
    Case("action", ("action", "card"), "h2", C, "action.action.card"),
    Case("action", ("action", "card"), " 2h", C, "action.action.card"),
    Case("action", ("action", "card"), 2, T, "action.action.card"),
    Case("action", ("action", "card"), ["2h"], T, "action.action.card"),
    Case("action", ("action", "melds"), [["3c", "3d", "3h"]], V, "action.action.melds"),
    Case("action_knock", ("action", "melds"), "3c3d3h", T, "action.action.melds"),
    Case("action_knock", ("action", "melds", 1), ["4s", "5s", "3c"], V, "action.action.melds"),
    Case("action_knock", ("action", "melds", 1), ["4s", "9c"], V, "action.action.melds"),
    Case(
        "action_knock", ("action", "melds", 1), ["4s", "5s", "6S"], C, "action.action.melds[1][2]"
    ),
    Case("action_knock", ("action", "melds", 2), "Td", T, "action.action.melds[2]"),
    Case("event", ("action", "kind"), "pass_upcard", V, "event.action.card"),
    Case("event", ("action", "kind"), "big_gin", V, "event.action.card"),
    Case("event_draw", ("action", "melds"), [], V, "event.action.melds"),
    # event
    Case("event", ("seat",), 2, V, "event.seat"),
    Case("event", ("seat",), None, T, "event.seat"),
    # welcome / reject
    Case("welcome", ("heartbeat_ms",), DELETE, M, "welcome.heartbeat_ms"),
    Case("welcome", ("inline_events",), 1, T, "welcome.inline_events"),
    Case("reject", ("supported_versions",), 1, T, "reject.supported_versions"),
    Case("reject", ("supported_versions", 0), "1", T, "reject.supported_versions[0]"),
    Case("reject", ("code",), "", V, "reject.code"),
    # match_start
    Case("match_start", ("seat",), 2, V, "match_start.seat"),
    Case("match_start", ("match_id",), "", V, "match_start.match_id"),
    Case("match_start", ("rules",), [], T, "match_start.rules"),
    Case("match_start", ("rules", "knock_limit"), [10], T, "match_start.rules.knock_limit"),
    Case("match_start", ("rules", "knock_limit"), 1.5, T, "match_start.rules.knock_limit"),
    Case("match_start", ("rules", "knock_limit"), BIG, V, "match_start.rules.knock_limit"),
    Case(
        "match_start", ("time_control", "grace_ms"), DELETE, M, "match_start.time_control.grace_ms"
    ),
    Case("match_start", ("time_control", "move_ms"), -5, V, "match_start.time_control.move_ms"),
    # hand_start
    Case("hand_start", ("hand_cards",), ["3c"] * 10, V, "hand_start.hand_cards"),
    Case("hand_start", ("hand_cards", 9), DELETE, V, "hand_start.hand_cards"),
    Case("hand_start", ("hand_cards", 0), "Xx", C, "hand_start.hand_cards[0]"),
    Case("hand_start", ("upcard",), "3c", V, "hand_start.upcard"),
    Case("hand_start", ("upcard",), None, T, "hand_start.upcard"),
    Case("hand_start", ("scores",), [1, 2, 3], V, "hand_start.scores"),
    Case("hand_start", ("scores", 1), -1, V, "hand_start.scores[1]"),
    Case("hand_start", ("dealer",), 2, V, "hand_start.dealer"),
    # request and the view map
    Case("request", ("legal",), [], V, "request.legal"),
    Case("request", ("legal", 12, "card"), "ZZ", C, "request.legal[12].card"),
    Case("request", ("decision",), "hand_over", V, "request.decision"),
    Case("request", ("time_left_ms",), DELETE, M, "request.time_left_ms"),
    Case("request", ("view",), None, T, "request.view"),
    Case("request", ("view", "hand"), DELETE, M, "request.view.hand"),
    Case("request", ("view", "hand", 0), "3d", V, "request.view.hand"),
    Case("request", ("view", "hand"), [r + "s" for r in "A23456789TJQ"], V, "request.view.hand"),
    Case("request", ("view", "taken_card"), DELETE, M, "request.view.taken_card"),
    Case("request", ("view", "taken_card"), "Zz", C, "request.view.taken_card"),
    Case("request", ("view", "multiplier"), 0, V, "request.view.multiplier"),
    Case("request", ("view", "phase"), "play", V, "request.view.phase"),
    Case("request", ("view", "scores"), [1], V, "request.view.scores"),
    Case("request", ("view", "stock_size"), 53, V, "request.view.stock_size"),
    Case("request", ("view", "discard_pile", 1), "8h", V, "request.view.discard_pile"),
    Case("request", ("view", "opponent_known", 0), 5, T, "request.view.opponent_known[0]"),
    # request.events: each element is a complete event message
    Case("request_events", ("events",), {"seat": 1}, T, "request.events"),
    Case("request_events", ("events",), True, T, "request.events"),
    Case("request_events", ("events", 0), "take_discard", T, "request.events[0]"),
    Case(
        "request_events", ("events", 0), {"type": "ping", "nonce": 1}, V, "request.events[0].type"
    ),
    Case("request_events", ("events", 1, "type"), "request", V, "request.events[1].type"),
    Case("request_events", ("events", 0, "type"), 5, T, "request.events[0].type"),
    Case("request_events", ("events", 0, "type"), DELETE, M, "request.events[0].type"),
    Case("request_events", ("events", 0, "seat"), DELETE, M, "request.events[0].seat"),
    Case("request_events", ("events", 1, "seat"), 2, V, "request.events[1].seat"),
    Case("request_events", ("events", 0, "action"), None, T, "request.events[0].action"),
    Case(
        "request_events",
        ("events", 1, "action", "card"),
        "7D",
        C,
        "request.events[1].action.card",
    ),
    Case(
        "request_events",
        ("events", 0, "action", "kind"),
        "pass_upcard",
        V,
        "request.events[0].action.card",
    ),
    # hand_end
    Case("hand_end", ("termination",), "resign", V, "hand_end.termination"),
    Case("hand_end", ("winner",), DELETE, M, "hand_end.winner"),
    Case("hand_end", ("winner",), 2, V, "hand_end.winner"),
    Case("hand_end", ("hands",), [["2c"]], V, "hand_end.hands"),
    Case("hand_end", ("hands", 1, 0), "2c", V, "hand_end.hands[1]"),
    Case("hand_end", ("melds", 0, 0), ["4s"], V, "hand_end.melds[0]"),
    Case("hand_end", ("layoffs",), [["3s", "3s"]], V, "hand_end.layoffs[0]"),
    Case("hand_end", ("layoffs",), None, T, "hand_end.layoffs"),
    Case("hand_end", ("deadwood",), [2, "3"], T, "hand_end.deadwood[1]"),
    # game_end / match_end
    Case("game_end", ("hands_won",), DELETE, M, "game_end.hands_won"),
    Case("game_end", ("winner",), "0", T, "game_end.winner"),
    Case("match_end", ("result",), "tie", V, "match_end.result"),
    Case("match_end", ("reason",), "bored", V, "match_end.reason"),
    Case("match_end", ("fault",), DELETE, M, "match_end.fault"),
    Case("match_end", ("fault",), "timeout", T, "match_end.fault"),
    Case("match_end_fault", ("fault", "code"), DELETE, M, "match_end.fault.code"),
    Case("match_end_fault", ("fault", "detail"), 3, T, "match_end.fault.detail"),
    # error, ping, pong, bye
    Case("error", ("code",), "", V, "error.code"),
    Case("error", ("request_id",), -3, V, "error.request_id"),
    Case("ping", ("nonce",), "42", T, "ping.nonce"),
    Case("pong", ("nonce",), DELETE, M, "pong.nonce"),
    Case("bye", ("reason",), ["match over"], T, "bye.reason"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.field}={c.value!r:.12}"[:60] for c in CASES])
def test_schema_violation(case: Case) -> None:
    with pytest.raises(SchemaError) as info:
        decode(msgpack.packb(case.wire()))
    assert (info.value.code, info.value.field) == (case.code, case.field), str(info.value)
    assert str(info.value).startswith(f"{case.code}: {case.field}: ")


@pytest.mark.parametrize("value", [None, 5, "hello", [{"type": "ping", "nonce": 1}], True])
def test_top_level_must_be_a_map(value: Any) -> None:
    with pytest.raises(SchemaError) as info:
        decode(msgpack.packb(value))
    assert (info.value.code, info.value.field) == (ErrorCode.BAD_TYPE, "message")


def test_direction_checks() -> None:
    request = encode(EXAMPLES["request"])
    hello = encode(EXAMPLES["hello"])
    unknown = msgpack.packb({"type": "telemetry"})
    with pytest.raises(SchemaError) as info:
        decode_bot_message(request)
    assert info.value.code == ErrorCode.UNEXPECTED_TYPE
    with pytest.raises(SchemaError) as info:
        decode_referee_message(hello)
    assert info.value.code == ErrorCode.UNEXPECTED_TYPE
    for decoder in (decode, decode_bot_message, decode_referee_message):
        with pytest.raises(SchemaError) as info:
            decoder(unknown)
        assert info.value.code == ErrorCode.UNKNOWN_TYPE


def test_unsupported_version_in_hello_still_decodes() -> None:
    wire = wire_map(EXAMPLES["hello"])
    wire["protocol_version"] = 2
    hello = decode_bot_message(msgpack.packb(wire))
    assert isinstance(hello, Hello)
    with pytest.raises(VersionMismatch) as info:
        check_version(hello.protocol_version)
    assert info.value.code == ErrorCode.VERSION_UNSUPPORTED
    assert (info.value.offered, info.value.supported) == (2, (1,))


def test_error_hierarchy() -> None:
    for cls in (MalformedMessage, SchemaError, VersionMismatch):
        assert issubclass(cls, ProtocolError)
    assert MalformedMessage.too_large(70000, 65536).code == "too_large"
    assert {c.value for c in ErrorCode} >= {
        "bad_token",
        "token_in_use",
        "version_unsupported",
        "unexpected_message",
        "unexpected_type",
        "stale_request",
        "illegal_action",
        "too_large",
        "malformed",
        "unknown_type",
        "missing_field",
        "bad_type",
        "bad_value",
        "bad_card",
        "timeout",
        "shutdown",
    }
    assert all(code.doc and "\n" not in code.doc for code in ErrorCode)
