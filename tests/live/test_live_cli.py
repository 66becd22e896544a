"""The live page as the README runs it: ``gin-referee tournament ... --spectate`` as a
subprocess, the page in a real headless Chromium. When the event is over the LIVE badge says
so, and a finished game the page never watched shows its last hand (sent at the end) rather
than "No hand was played."; the same command run again, with every game already recorded,
says there is nothing left to watch and how to watch a new run."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import RANDOM
from tests.live.test_live_browser import PONDER, wait_for
from tests.tournament.test_tournament_e2e import write_config
from tests.view.browser import Browser

pytestmark = pytest.mark.timeout(240)


def spectate(config: Path, out: Path) -> subprocess.Popen[str]:
    """``gin-referee tournament CONFIG --out OUT --spectate 127.0.0.1:0`` (a free port)."""
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "tournament", str(config), "--out", str(out),
         "--spectate", "127.0.0.1:0", "--spectate-delay", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The tournament (two games of a slow bot against the random one, one at a time) and
    its live page's address, read from the line the referee prints."""
    config = write_config(tmp_path / "t.toml", [("ponder", PONDER), ("random", RANDOM)], 2,
                          concurrency=1)  # fmt: skip
    proc = spectate(config, tmp_path / "out")
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        if line.startswith("sandbox: "):  # the bots' level, printed first
            line = proc.stderr.readline()
        assert line.startswith("spectators: http://127.0.0.1:"), line
        yield proc, line.split()[1]
    finally:
        proc.kill()
        proc.communicate()


def test_after_the_event_the_badge_says_finished_and_every_game_shows_a_hand(
    browser: Browser, referee: tuple[subprocess.Popen[str], str], shots: Path
) -> None:
    proc, url = referee
    page = browser.open(url)
    first = wait_for(page, "document.querySelectorAll('#games .live-game.playing').length === 1",
                     value="GinLive.shown()")  # fmt: skip
    assert page.eval("document.querySelector('.live-dot').textContent") == "live"
    wait_for(page, "document.querySelector('#live-status').innerText.includes('event is over')",
             180)  # fmt: skip
    assert proc.wait(60) == 0  # the referee has gone: nothing more can be loaded
    assert page.eval("document.querySelector('.live-dot').textContent") == "finished"
    assert page.eval("document.querySelector('.live-dot').classList.contains('ended')")
    # The game the page did not watch (the second) came with its last hand, face up.
    other = page.eval(f"[...GinLive.games.keys()].find(id => id !== {first!r})")
    assert other is not None
    page.eval(f"document.querySelector('[data-id=\"{other}\"]').click()")
    title = wait_for(page, "GinLive.shown() !== " + repr(first),
                     value="document.querySelector('#hand-title').innerText")  # fmt: skip
    assert title.startswith("Game 1, hand ") and "No hand was played" not in title, title
    hands = page.eval(f"GinLive.games.get({other!r}).hands.map(h => [h.masked, h.steps.length])")
    assert len(hands) == 1 and hands[0][0] is not True and hands[0][1] > 1, hands
    cards = page.eval("[...document.querySelectorAll('#seat-0 .hand .card')]"
                      ".map(c => c.dataset.card)")  # fmt: skip
    assert cards and "?" not in cards
    assert page.eval("document.querySelectorAll('#hand-select option').length") == 1
    assert "Only this game's last hand reached the page" in page.text("#live-note")
    assert "Match over" in page.text("#result")
    page.screenshot(shots / "live-cli-finished.png", full_page=False)
    assert page.errors() == []


def test_a_run_with_nothing_left_to_play_says_how_to_watch_a_new_one(tmp_path: Path) -> None:
    config = write_config(tmp_path / "t.toml", [("a", RANDOM), ("b", RANDOM)], 2)
    out = tmp_path / "out"
    first = spectate(config, out)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0 and "nothing left to play" not in err, err
    again = spectate(config, out)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    lines = [line for line in err.splitlines() if not line.startswith("sandbox: ")]
    assert lines[0].startswith("spectators: http://127.0.0.1:")
    assert lines[1] == (
        f"gin-referee: every game of t is already recorded in {out}: nothing left to play; the"
        " live page closes with this run. To watch a new run, give a new --out directory (or a"
        f" new [tournament] name); to see this one: gin-referee report {out}"
    )
