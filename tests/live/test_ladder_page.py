"""A ladder's live page: a pair's deal sealed from its scheduling to its rating, the
leaderboard as an event (first to every new spectator) and as ``/leaderboard.json``."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import aiohttp
import pytest

from referee.live import LiveConfig, LiveHub, LiveServer
from referee.live.hub import LEADERBOARD_ROWS
from referee.live.ladder import LadderSpectating
from referee.rules import RuleSet
from referee.tournament.ladder import Pair
from tests.match.fakes import VirtualTimer
from tests.view.browser import Browser

pytestmark = pytest.mark.timeout(60)


def board(players: int) -> dict[str, Any]:
    rows = [{"rank": i + 1, "player": f"p{i}.v1", "entrant": f"p{i}", "version": 1,
             "status": "active", "mu": 30.0 - i, "sigma": 2.0, "rank_value": 24.0 - i,
             "pairs": 3, "games": 6, "wins": 3, "draws": 0, "losses": 3, "elo": None,
             "fingerprint": "f" * 16} for i in range(players)]  # fmt: skip
    return {"ladder": "l", "sorted_by": "rank_value", "pairs_rated": 5, "games": 10,
            "players": rows}  # fmt: skip


@pytest.mark.asyncio
async def test_the_ladder_page_seals_pairs_and_serves_the_leaderboard() -> None:
    boards = [board(3), board(LEADERBOARD_ROWS + 5)]
    computed = asyncio.Event()

    def compute() -> dict[str, Any]:
        data = boards.pop(0) if len(boards) > 1 else boards[0]
        computed.set()
        return data

    live = LadderSpectating("127.0.0.1", 0, LiveConfig(), compute)
    async with live, aiohttp.ClientSession() as session:
        await asyncio.wait_for(computed.wait(), 10)  # the first leaderboard, at start
        await asyncio.wait_for(live.feed.close(), 10)
        async with session.get(live.url + "leaderboard.json") as reply:
            assert reply.status == 200 and reply.content_type == "application/json"
            assert (await reply.json())["players"][0]["player"] == "p0.v1"
        pair = Pair("ladder/0", ("p0.v1", "p1.v1"), [])
        live.on_scheduled(pair)
        assert "ladder/0" in live.hub.sealed  # no card of the first game before the second
        computed.clear()
        live.on_pair(pair)
        assert "ladder/0" not in live.hub.sealed
        await asyncio.wait_for(computed.wait(), 10)
        await asyncio.wait_for(live.feed.close(), 10)
        _, first = live.hub.subscribe()
        event = next(p for p in first.split(b"\n\n") if p.startswith(b"event: leaderboard"))
        page = json.loads(event.split(b"data: ", 1)[1])
        assert page["shown"] == LEADERBOARD_ROWS and page["total"] == LEADERBOARD_ROWS + 5
        assert "fingerprint" not in page["players"][0]  # the page shows only its columns
        async with session.get(live.url + "leaderboard.json") as reply:
            assert len((await reply.json())["players"]) == LEADERBOARD_ROWS + 5
        async with session.get(live.url + "snapshot") as reply:  # the page at one moment
            assert reply.status == 200
            text = await reply.text()
        assert "leaderboard" in text and "p0.v1" in text and "fingerprint" not in text


@pytest.mark.asyncio
async def test_the_ladder_page_runs_its_lag_behind_the_ladder() -> None:
    """With a lag, nothing the page shows is newer than the lag: a game's start, a pair's
    unsealing, a leaderboard after a pair (the first, at the start, at once); in order."""
    timer = VirtualTimer()
    boards = [board(2), board(3)]
    computed = asyncio.Event()

    def compute() -> dict[str, Any]:
        computed.set()
        return boards.pop(0) if len(boards) > 1 else boards[0]

    live = LadderSpectating("127.0.0.1", 0, LiveConfig(), compute, lag=30.0, timer=timer)
    async with live, aiohttp.ClientSession() as session:
        await asyncio.wait_for(computed.wait(), 10)
        await asyncio.wait_for(live.feed.close(), 10)
        assert len(json.loads(live.hub.leaderboard_json)["players"]) == 2  # the start: at once
        pair = Pair("ladder/4", ("a.v1", "b.v1"), [])
        live.on_scheduled(pair)
        assert "ladder/4" in live.hub.sealed  # sealed at once
        header = {"type": "header", "match_id": "g000004-a1", "seats": ["a.v1", "b.v1"],
                  "rules": RuleSet.preset("standard").to_dict(), "deal_id": "ladder/4"}  # fmt: skip
        live.observe("g000004-a1")(header)
        async with session.get(live.url + "snapshot") as reply:
            assert "a.v1" not in await reply.text()  # the game in play is not shown yet
        computed.clear()
        timer.advance(10.0)
        live.on_pair(pair)  # 10 s later the pair closes
        await asyncio.wait_for(computed.wait(), 10)
        await asyncio.wait_for(live.feed.close(), 10)
        assert "ladder/4" in live.hub.sealed and not live.hub.matches
        assert len(json.loads(live.hub.leaderboard_json)["players"]) == 2
        timer.advance(20.0)  # the game's start is 30 s old: shown; its pair's close is not
        assert list(live.hub.matches) == ["g000004-a1"] and "ladder/4" in live.hub.sealed
        async with session.get(live.url + "snapshot") as reply:
            assert "a.v1" in await reply.text()
        timer.advance(10.0)  # the close is 30 s old: unsealed, and its leaderboard shown
        assert "ladder/4" not in live.hub.sealed
        assert len(json.loads(live.hub.leaderboard_json)["players"]) == 3
        assert live.lag.pending == 0


@pytest.mark.asyncio
async def test_a_tournament_page_has_no_leaderboard() -> None:
    server = LiveServer(LiveHub(LiveConfig()))
    url = await server.start()
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(url + "leaderboard.json") as reply,
        ):
            assert reply.status == 404
    finally:
        await server.close()


def test_the_leaderboard_in_a_real_browser(browser: Browser) -> None:
    """The page draws the leaderboard, and shows every version or each entrant's best or
    latest one, without a script error."""
    data = board(4)
    data["players"][1].update(player="p0.v2", entrant="p0", version=2)  # p0: v1 best, v2 latest
    data["entrants"] = [{"entrant": "p0", "best": "p0.v1", "latest": "p0.v2"},
                        {"entrant": "p2", "best": "p2.v1", "latest": "p2.v1"},
                        {"entrant": "p3", "best": "p3.v1", "latest": "p3.v1"}]  # fmt: skip
    ready, stop = threading.Event(), threading.Event()
    urls: list[str] = []

    async def serve() -> None:
        async with LadderSpectating("127.0.0.1", 0, LiveConfig(), lambda: data) as live:
            urls.append(live.url)
            ready.set()
            await asyncio.to_thread(stop.wait)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        page = browser.open(urls[0])
        rows = (
            "[...document.querySelectorAll('#leaderboard tr')].slice(1)"
            ".map(r => r.cells[1].innerText)"
        )
        shown = page.eval(
            "new Promise(done => { (function check() {"
            " if (document.querySelectorAll('#leaderboard tr').length > 1) done(" + rows + ");"
            " else setTimeout(check, 50); })(); })"
        )
        assert shown == ["p0.v1", "p0.v2", "p2.v1", "p3.v1"]
        assert "sorted by rank_value" in page.text("#leaderboard h2")
        for view, expected in (("latest", ["p0.v2", "p2.v1", "p3.v1"]),
                               ("best", ["p0.v1", "p2.v1", "p3.v1"])):  # fmt: skip
            got = page.eval(
                "(() => { const s = document.querySelector('#leaderboard select');"
                f" s.value = '{view}'; s.dispatchEvent(new Event('change')); return {rows}; }})()"
            )
            assert got == expected, (view, got)
        stop.set()  # the ladder stops: the page says so, above its last leaderboard
        thread.join(30)
        status = page.eval(
            "new Promise(done => { (function check() {"
            " const t = document.querySelector('#live-status').innerText;"
            " if (t.includes('stopped')) done(t); else setTimeout(check, 50); })(); })"
        )
        assert status == "the ladder has stopped: the last leaderboard"
        assert page.errors() == []
    finally:
        stop.set()
        thread.join(30)
