"""The attack: the person at the table keeps every byte the page is sent. No card the seat may
not see (the opponent's hidden cards, the stock) may reach the page before the rules reveal it.

A real ``gin-referee play`` process plays a real random bot; a real WebSocket client (the page's
protocol) plays the person's seat with random legal moves and keeps everything it receives. The
record's decks and moves are then replayed through the rules engine: while a hand is played, a
message may name only cards the person held or saw face up in that hand; its ``hand_end`` may
add the opponent's final cards; a card that stayed in the stock never appears.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from referee.rules import PRESETS
from tests.play.table import cards_in, record_lines, seen_by, table

pytestmark = pytest.mark.timeout(120)


async def play_randomly(url: str, rng: random.Random) -> list[dict[str, Any]]:
    """Play the seat to the end with random legal moves; every message received, in order."""
    ws_url = url.replace("http://", "ws://").replace("/?t=", "/ws?t=")
    got: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as session, session.ws_connect(ws_url) as ws:
        async for frame in ws:
            message = json.loads(frame.data)
            got.append(message)
            if message["type"] == "request":
                action = dict(rng.choice(message["legal"]))
                if action["kind"] == "knock":
                    options = message["knocks"][action["card"]]["options"]
                    action["melds"] = rng.choice(options)["melds"]
                await ws.send_str(
                    json.dumps({"request_id": message["request_id"], "action": action})
                )
            if message["type"] == "match_end":
                break
    return got


def test_the_page_never_receives_a_card_the_seat_may_not_see(tmp_path: Path) -> None:
    with table(tmp_path, "--seed", "11", hands=4) as (url, _):
        got = asyncio.run(play_randomly(url, random.Random(5)))
    lines = record_lines(tmp_path)
    header = lines[0]
    rules = PRESETS[header["rules"]["name"]]
    seat = header["seats"].index("you")
    hands = {(h["game"], h["hand"]): h for h in lines if h["type"] == "hand"}
    assert hands and got[-1]["type"] == "match_end"
    current: tuple[int, int] | None = None
    checked = revealed = 0
    for message in got:
        if message["type"] == "hand_start":
            current = (message["game"], message["hand"])
        named = cards_in(message)
        if current is None:
            assert not named, message  # before the first deal: no card at all
            continue
        seen, held = seen_by(hands[current], rules, seat)
        hidden = held - seen
        never = set(hands[current]["deck"]) - held - seen
        assert not named & never, (message, named & never)  # a stock card never drawn
        if message["type"] == "hand_end":
            revealed += len(named & hidden)  # the rules show the opponent's hand now
            current = None
            continue
        assert not named & hidden, (message, named & hidden)
        checked += 1
    # The attack happened: many messages checked, and the opponent's hidden cards existed and
    # were shown only by the hand_end (so the check above could have caught them).
    assert checked > 20 and revealed > 0
