"""The live page in a real headless Chromium, during a real tournament of real bot processes:
it loads, shows a game in progress with its cards face down, and updates when a game ends."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.live import LiveConfig, Spectating
from referee.tournament.config import load_config
from referee.tournament.runner import GameOutcome, TournamentRun, schedule
from tests.e2e.helpers import BOTS, RANDOM
from tests.tournament.test_tournament_e2e import write_config
from tests.view.browser import Browser, Page

pytestmark = pytest.mark.timeout(240)

PONDER = f"{sys.executable} {BOTS / 'ponder_bot.py'} 0.12"


class Background:
    """A tournament with its live page, run on an event loop in a thread; the page stays up
    until :meth:`stop`, after the last game."""

    def __init__(self, out: Path, config_path: Path) -> None:
        self.out = out
        self.config = load_config(config_path)
        self.url = ""
        self.ready = threading.Event()
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as err:  # reported to the test by stop()
            self.error = err
        finally:
            self.ready.set()
            self.finished.set()

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        games = schedule(self.config)
        live = Spectating("127.0.0.1", 0, LiveConfig(delay=0.5), self.out / "tournament.sqlite",
                          games)  # fmt: skip
        async with live:
            self.url = live.url
            self.ready.set()

            def on_game(outcome: GameOutcome) -> None:
                live.on_game(outcome)

            run = TournamentRun(self.config, self.out, on_game=on_game, observe=live.observe)
            await run.run()
            self.finished.set()
            await live.finish()  # as leaving the context does (the page stays up here)
            await self._stop.wait()

    def stop(self) -> None:
        """Close the page and join the thread; re-raise what went wrong in it."""
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)
        if self.error is not None:
            raise self.error


@pytest.fixture
def tournament(tmp_path: Path) -> Iterator[Background]:
    """Two games (a duplicate pair) of a slow greedy bot against the random one."""
    bots = [("ponder", PONDER), ("random", RANDOM)]
    path = write_config(tmp_path / "t.toml", bots, games=2, concurrency=1)
    background = Background(tmp_path / "out", path)
    assert background.ready.wait(60)
    try:
        yield background
    finally:
        background.stop()


def wait_for(page: Page, condition: str, seconds: float = 25.0, value: str = "true") -> Any:
    """Let the page check ``condition`` (a JavaScript expression) until it holds, and return
    ``value`` evaluated at that same moment (so what it reads is consistent with it)."""
    return page.eval(
        "new Promise((done, fail) => { const t0 = Date.now(); (function check() {"
        f" if ({condition}) done({value});"
        f" else if (Date.now() - t0 > {seconds * 1000})"
        f" fail(new Error('timed out: ' + {json.dumps(condition)}));"
        " else setTimeout(check, 50); })(); })"
    )  # fmt: skip


CARDS = "[...document.querySelectorAll('{0} .card')].map(c => c.dataset.card)"


def test_the_live_page_follows_a_game_and_updates_when_games_end(
    browser: Browser, tournament: Background, shots: Path
) -> None:
    page = browser.open(tournament.url)
    cards = CARDS.replace("{0}", "' + sel + '")
    snap = wait_for(
        page,
        "document.querySelectorAll('#games .live-game.playing').length === 1"
        " && document.querySelectorAll('#decisions li').length >= 4",
        value="(() => { const text = (sel) => document.querySelector(sel).innerText;"
        f" const cards = (sel) => {cards};"
        " return { status: text('#live-status'), title: text('#title'),"
        " game: text('#games .live-game.playing'),"
        " aka: document.querySelector('#games .live-game.playing').title,"
        " seat0: cards('#seat-0 .hand'), seat1: cards('#seat-1 .hand'), pile: cards('#pile'),"
        " head: text('#hand-title'),"
        " stock: text('#stock'), note: text('#live-note'), standings: text('#standings h2'),"
        " bots: [...document.querySelectorAll('#standings tr')].slice(1)"
        ".map(r => [...r.cells].map(c => c.innerText)) }; })()",
    )
    assert snap["status"] == "live"
    # The standings are there from the start: every bot, 0 games played.
    assert snap["standings"] == "Standings · 0 of 2 games played"
    assert sorted(row[1:4] for row in snap["bots"]) == [["ponder", "0", "0-0-0"],
                                                        ["random", "0", "0-0-0"]]  # fmt: skip
    # The organiser's names everywhere; what a bot calls itself is a detail (a tooltip).
    assert snap["title"] == "ponder vs random"
    assert snap["game"].startswith("ponder vs random")
    assert snap["aka"] == "random calls itself random-bot"
    assert re.search(r"playing · game 1, hand \d+$", snap["game"]), snap["game"]
    # A hand in play: both hands face down, the discard pile and the stock public.
    for seat in ("seat0", "seat1"):
        assert snap[seat] and set(snap[seat]) == {"?"}, snap
    assert "?" not in snap["pile"]  # (possibly empty: just after a take)
    assert "cards hidden" in snap["head"] and "stock" in snap["stock"]
    assert "Cards are face down while a hand is in play" in snap["note"]
    page.screenshot(shots / "live-running.png", full_page=False)
    # The first game ends and its twin, on the same cards, starts: the finished game's cards
    # stay hidden (read at the moment the twin is seen playing).
    hidden = wait_for(
        page,
        "document.querySelectorAll('#games .live-game.over').length === 1"
        " && document.querySelectorAll('#games .live-game.playing').length === 1",
        90,
        "(() => { document.querySelector('#games .live-game.over').click();"
        " return [...document.querySelectorAll('#seat-0 .hand .card, #seat-1 .hand .card')]"
        ".map(c => c.dataset.card); })()",
    )
    assert len(hidden) >= 20 and set(hidden) == {"?"}, hidden
    over = page.text("#games .live-game.over")
    assert "wins" in over or "draw" in over
    # The standings change without a reload.
    wait_for(page, "/[12] of 2 games/.test(document.querySelector('#standings h2').innerText)")
    rows = page.eval("[...document.querySelectorAll('#standings tr')].slice(1)"
                     ".map(r => r.cells[1].innerText)")  # fmt: skip
    assert sorted(rows) == ["ponder", "random"]
    # Both games over and recorded: every hand is shown face up, standings complete.
    wait_for(page, "document.querySelector('#standings h2').innerText.includes('2 of 2 games')",
             120)  # fmt: skip
    assert tournament.finished.wait(30)
    # The event is over: the page says so above the final standings, once the last hands'
    # cards are out.
    wait_for(page, "document.querySelector('#live-status').innerText.includes('event is over')")
    assert page.text("#standings h2") == "Final standings · 2 of 2 games played"
    watched = "GinLive.games.get(GinLive.watching())"
    # (the watched game's final state may still be on its way: until it arrives, it is unknown)
    wait_for(page, f"{watched}?.hands.length > 0 && {watched}.hands.every(h => !h.masked)")
    # The other game: the page watches it now (its stream sends that game's hands).
    other = page.eval("[...GinLive.games.keys()].find(id => id !== GinLive.shown())")
    page.eval(f"document.querySelector('[data-id=\"{other}\"]').click()")
    # (the page re-subscribes for that game: until its state arrives, the game may be unknown)
    wait_for(page, f"GinLive.watching() === {json.dumps(other)} && {watched}?.hands.length > 0"
             " && !document.querySelector('#seat-0 .hand .card.back')")  # fmt: skip
    assert page.eval(f"{watched}.hands.every(h => !h.masked)")
    shown = page.eval(CARDS.format("#seat-0 .hand")) + page.eval(CARDS.format("#seat-1 .hand"))
    assert len(shown) >= 20 and "?" not in shown
    assert "Match over" in page.text("#result")
    wait_for(page, "document.querySelector('#live-status').innerText.includes('event is over')")
    # Each stream the page opened watched the game it showed.
    streams = [u for u in page.requested_urls() if "/events" in u]
    assert streams[-1].endswith(f"/events?game={other}") and len(streams) >= 3, streams
    # When the referee goes away the page does not try to reconnect.
    page.screenshot(shots / "live-finished.png", full_page=False)
    tournament.stop()
    page.eval("new Promise(done => setTimeout(done, 4000))")  # past the stream's retry: 3000
    assert page.text("#live-status") == "the event is over: final standings"
    assert page.eval("liveSource.readyState") == 2  # CLOSED
    assert page.errors() == []
    assert all(url.startswith(tournament.url) for url in page.requested_urls())
