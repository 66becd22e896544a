"""The live page's snapshot (``GET /snapshot``): the page at one moment, drawn from the data
embedded in it, with no event stream, so that a headless browser's one-shot screenshot returns;
in a real headless Chromium, with the server on the test's event loop (the browser is driven
from a worker thread)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from referee.live import LiveConfig, LiveHub, LiveServer
from tests.live.test_hub import recorded
from tests.view.browser import Browser, chromium_path

pytestmark = pytest.mark.timeout(180)

SEEN = """(() => { const text = (sel) => document.querySelector(sel).innerText;
  const cards = (sel) => [...document.querySelectorAll(sel + ' .card')].map(c => c.dataset.card);
  return { status: text('#live-status'), title: text('#title'), standings: text('#standings h2'),
    games: [...document.querySelectorAll('#games .live-game')]
      .map(b => [b.dataset.id, b.getAttribute('aria-pressed')]),
    decisions: document.querySelectorAll('#decisions li').length,
    seat0: cards('#seat-0 .hand'), seat1: cards('#seat-1 .hand'),
    source: !!window.liveSource }; })()"""


@pytest.mark.asyncio
async def test_a_snapshot_shows_the_page_at_one_moment_and_opens_no_stream(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    _, events = await recorded(tmp_path)
    hub = LiveHub(LiveConfig(delay=0.0))
    hub.seal([events[0]["deal_id"]])  # a twin still to play: every hand stays face down
    hub.set_standings({"games_done": 1, "games_total": 2, "bots": []})
    finished, playing = hub.observer("m1"), hub.observer("m2")
    for event in events:
        finished(event)
    actions = [i for i, e in enumerate(events) if e["type"] == "action"]
    for event in events[: actions[5] + 1]:  # m2: six decisions into its first hand
        playing(event)
    server = LiveServer(hub)
    url = await server.start()
    try:
        # The one-shot screenshot of a headless browser returns (on the live page it waits
        # for the endless stream until killed).
        png = tmp_path / "snapshot.png"
        command = [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu",
                   f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900",
                   f"--screenshot={png}", "--virtual-time-budget=5000",
                   url + "snapshot"]  # fmt: skip
        shot = await asyncio.create_subprocess_exec(
            *command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        assert await asyncio.wait_for(shot.wait(), 90) == 0
        assert png.stat().st_size > 10_000
        print(f"screenshot: {png}")
        # What it shows: the game in play, face down, as far as it has been played.
        page = await asyncio.to_thread(browser.open, url + "snapshot")
        seen: dict[str, Any] = await asyncio.to_thread(page.eval, SEEN)
        assert seen["status"].startswith("snapshot at ")
        assert seen["games"] == [["m2", "true"], ["m1", "false"]]
        assert seen["title"] == " vs ".join(events[0]["seats"])
        assert seen["decisions"] == 6
        assert seen["seat0"] and set(seen["seat0"] + seen["seat1"]) == {"?"}
        assert seen["standings"] == "Standings · 1 of 2 games played"
        assert not seen["source"]
        await asyncio.to_thread(page.screenshot, shots / "live-snapshot.png", full_page=False)
        # Another game: the snapshot of the finished one, its cards still withheld.
        await asyncio.to_thread(page.eval, "document.querySelector('[data-id=m1]').click()")
        await asyncio.to_thread(browser.wait_event, "Page.loadEventFired", page.session)
        seen = await asyncio.to_thread(page.eval, SEEN)
        assert seen["games"] == [["m2", "false"], ["m1", "true"]]
        assert seen["seat0"] and set(seen["seat0"] + seen["seat1"]) == {"?"}
        assert await asyncio.to_thread(page.eval, "location.search") == "?game=m1"
        # A game not on the page: the first in play, with its hands.
        await asyncio.to_thread(page.goto, url + "snapshot?game=gone")
        seen = await asyncio.to_thread(page.eval, SEEN)
        assert seen["games"] == [["m2", "true"], ["m1", "false"]] and seen["decisions"] == 6
        assert await asyncio.to_thread(page.errors) == []
        assert all("/snapshot" in u for u in await asyncio.to_thread(page.requested_urls))
    finally:
        await server.close()
