"""One realistic example of every message, and the renderer of docs/protocol.md's examples.

The doc shows each example as JSON-like text and as the hex of its msgpack bytes,
between ``<!-- example: NAME -->`` and ``<!-- /example -->`` markers. A test checks that
every block equals :func:`render_example`; after changing the codec or an example, run
``python -m protocol.examples docs/protocol.md`` to rewrite the blocks in place.

>>> print(render_example("ping"))
```json
{"type": "ping", "nonce": 42}
```
```text
msgpack, 18 bytes:
82 a4 74 79 70 65 a4 70 69 6e 67 a5 6e 6f 6e 63
65 2a
```
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import msgpack

from protocol.codec import encode
from protocol.schema import (
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
    TimeControl,
    Welcome,
    WireAction,
    WireView,
)

__all__ = [
    "EXAMPLES",
    "QUICK_REQUEST",
    "QUICK_START",
    "REQUEST_WITH_EVENTS",
    "TYPICAL_REQUEST",
    "main",
    "render_example",
    "rewrite_doc",
]

_HAND = ("3c", "3d", "3h", "4s", "5s", "6s", "9c", "Td", "Jd", "Qd", "2h")

TYPICAL_REQUEST = Request(
    request_id=17,
    decision="discard",
    legal=(
        *(WireAction.discard(card) for card in _HAND),
        WireAction.knock("9c"),
        WireAction.knock("2h"),
    ),
    view=WireView(
        seat=0,
        phase="discard",
        to_act=0,
        dealer=1,
        hand=_HAND,
        discard_pile=("8h", "Kc", "7d"),
        stock_size=26,
        opponent_hand_size=10,
        opponent_known=("Jc",),
        knock_limit=10,
        multiplier=1,
        turn=7,
        scores=(25, 12),
        taken_card=None,
    ),
    time_left_ms=31000,
    bank_ms=30000,
)
"""A discard decision with 11 discards and 2 knocks: the benchmark's typical request."""

REQUEST_WITH_EVENTS = Request(
    request_id=16,
    decision="draw",
    legal=(WireAction.take_discard(), WireAction.draw_stock()),
    view=replace(TYPICAL_REQUEST.view, phase="draw", hand=_HAND[:-1], stock_size=27),
    time_left_ms=31000,
    bank_ms=30000,
    events=(
        Event(seat=1, action=WireAction.take_discard("Jc")),
        Event(seat=1, action=WireAction.discard("7d")),
    ),
)
"""The draw decision before :data:`TYPICAL_REQUEST`, for a bot granted ``inline_events``: it
carries the opponent's two moves since (it took the ``Jc`` from the pile, discarded ``7d``)."""

_QUICK_HAND = ("2c", "3c", "4c", "7d", "7h", "9s", "Td", "Jh", "Qs", "Kd")

QUICK_REQUEST = Request(
    request_id=1,
    decision="first_upcard",
    legal=(WireAction.take_discard(), WireAction.pass_upcard()),
    view=WireView(
        seat=0,
        phase="first_upcard",
        to_act=0,
        dealer=1,
        hand=_QUICK_HAND,
        discard_pile=("5c",),
        stock_size=31,
        opponent_hand_size=10,
        opponent_known=(),
        knock_limit=10,
        multiplier=1,
        turn=0,
        scores=(0, 0),
        taken_card=None,
    ),
    time_left_ms=31000,
    bank_ms=30000,
)
"""The quick start's request: the first decision of a hand, for the non-dealer."""

QUICK_START: Mapping[str, Message] = {
    "quick_hello": Hello(1, "my-bot", "3f9c2e71b0a84d55"),
    "quick_request": QUICK_REQUEST,
    "quick_action": ActionMsg(request_id=1, action=WireAction.take_discard()),
    "quick_ping": Ping(nonce=7),
    "quick_pong": Pong(nonce=7),
    "quick_match_end": MatchEnd("win", (1, 0), (131, 0), "normal", None),
    "quick_bye": Bye(),
}
"""The quick start's examples: what a minimal bot sends and the messages it must handle."""

EXAMPLES: Mapping[str, Message] = {
    **QUICK_START,
    "hello": Hello(
        1,
        "random-bot",
        "3f9c2e71b0a84d55",
        author="Ada",
        version="1.0.0",
        inline_events=True,
        multi_match=True,
    ),
    "welcome": Welcome(
        protocol_version=1,
        referee="gin-referee 0.1.0",
        heartbeat_ms=1000,
        inline_events=True,
        multi_match=True,
    ),
    "reject": Reject("version_unsupported", "protocol version 2 is not supported", (1,)),
    "match_start": MatchStart(
        match_id="m-0007",
        seat=0,
        opponent="greedy-bot",
        games=3,
        rules={
            "name": "standard",
            "knock_limit": 10,
            "oklahoma": False,
            "spade_doubles": False,
            "gin_bonus": 25,
            "big_gin_bonus": 31,
            "undercut_bonus": 25,
            "target": 100,
            "game_bonus": 100,
            "box_bonus": 25,
            "shutout_bonus": 100,
            "next_dealer": "winner",
            "turn_cap": 200,
            "knock_hindsight": False,
        },
        rules_hash="fea56fe0a7c76ae0",
        time_control=TimeControl(move_ms=1000, bank_ms=30000, grace_ms=50, startup_ms=10000),
        seed="161803398874",
        deal_commitment="3d98127073bb24575391dbfadf7a3ceaf08aaf60ebcb4b5feda519a65ad62be2",
        deal_id="m-0007",
    ),
    "hand_start": HandStart(
        game=0,
        hand=3,
        dealer=1,
        hand_cards=("3c", "3d", "3h", "4s", "5s", "6s", "9c", "Td", "Jd", "Qd"),
        upcard="Kc",
        scores=(25, 12),
    ),
    "request": TYPICAL_REQUEST,
    "request_events": REQUEST_WITH_EVENTS,
    "action": ActionMsg(request_id=17, action=WireAction.discard("2h")),
    "action_knock": ActionMsg(
        request_id=17,
        action=WireAction.knock("9c", (("3c", "3d", "3h"), ("4s", "5s", "6s"), ("Td", "Jd", "Qd"))),
    ),
    "event": Event(seat=1, action=WireAction.take_discard("9c")),
    "event_draw": Event(seat=1, action=WireAction.draw_stock()),
    "hand_end": HandEnd(
        game=0,
        hand=3,
        termination="knock",
        winner=0,
        points=1,
        hands=(
            ("3c", "3d", "3h", "4s", "5s", "6s", "Td", "Jd", "Qd", "2h"),
            ("7c", "7d", "7h", "Jc", "Jh", "Js", "3s", "Kd", "Ah", "2c"),
        ),
        melds=(
            (("3c", "3d", "3h"), ("4s", "5s", "6s"), ("Td", "Jd", "Qd")),
            (("7c", "7d", "7h"), ("Jc", "Jh", "Js")),
        ),
        layoffs=(("3s", "4s", "5s", "6s"), ("Kd", "Td", "Jd", "Qd")),
        deadwood=(2, 3),
        scores=(26, 12),
        layoff_melds=(("3s", "4s", "5s", "6s"), ("Td", "Jd", "Qd", "Kd")),
    ),
    "game_end": GameEnd(game=0, winner=0, scores=(231, 40), hands_won=(5, 2)),
    "match_end": MatchEnd(
        "win",
        games_won=(2, 1),
        points=(512, 300),
        reason="normal",
        fault=None,
        deal_key="9f1c2a7be04d3c58a6e1f0b2d47c9e38115a6b7c8d9e0f1a2b3c4d5e6f708192",
    ),
    "match_end_fault": MatchEnd(
        "loss",
        games_won=(0, 1),
        points=(12, 100),
        reason="your_fault",
        fault=Fault("timeout", "no reply to request 17 within 31050 ms"),
    ),
    "error": Error("stale_request", "request 16 is no longer outstanding", request_id=16),
    "ping": Ping(nonce=42),
    "pong": Pong(nonce=42),
    "bye": Bye(reason="match over"),
}
"""Example messages by name; every message type has at least one."""

_WIDTH = 88


def _pretty(value: Any, indent: int = 0) -> str:
    """JSON text: a value on one line if it fits in the width, else one entry per line."""
    flat = json.dumps(value, ensure_ascii=False)
    if indent + len(flat) <= _WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {_pretty(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + _pretty(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def _hex(data: bytes) -> str:
    rows = [data[i : i + 16].hex(" ") for i in range(0, len(data), 16)]
    return "\n".join(rows)


def render_example(name: str) -> str:
    """The markdown shown between the markers of example ``name``."""
    data = encode(EXAMPLES[name])
    text = _pretty(msgpack.unpackb(data))
    return f"```json\n{text}\n```\n```text\nmsgpack, {len(data)} bytes:\n{_hex(data)}\n```"


EXAMPLE_BLOCK = re.compile(r"<!-- example: (\w+) -->\n(.*?)\n<!-- /example -->", re.DOTALL)
"""A doc example block: group 1 is the name, group 2 the rendered markdown."""


def rewrite_doc(text: str) -> str:
    """``text`` with every example block re-rendered from :data:`EXAMPLES`."""

    def block(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"<!-- example: {name} -->\n{render_example(name)}\n<!-- /example -->"

    return EXAMPLE_BLOCK.sub(block, text)


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the example blocks of the markdown files named on the command line."""
    paths = list(sys.argv[1:] if argv is None else argv)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = rewrite_doc(old)
        if new != old:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
