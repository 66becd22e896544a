"""A person plays by clicking, in a real headless Chromium, against the random sample bot.

The "person" is this test: it reads only what the page shows (the action buttons, the hand, the
knock panel), clicks the cards and buttons a greedy player would, and keeps what it clicked.
The match's record must hold exactly those moves for the person's seat; the seeded deal gives
it a gin and knocks with arrangements it chose.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.rules import parse_action
from tests.live.test_live_browser import wait_for
from tests.play.table import record_lines, table
from tests.view.browser import Browser, Page

pytestmark = pytest.mark.timeout(180)

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
READY = "GinPlay.over || GinPlay.summary || (GinPlay.pending && !GinPlay.knock)"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = Browser()
    try:
        yield chromium
    finally:
        chromium.close()


def click(page: Page, selector: str) -> None:
    """Click the element (its ``click()``, as a mouse click or the Enter key dispatches)."""
    found = page.eval(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
        " if (!e || e.disabled) return false; e.click(); return true; })()"
    )
    assert found, f"nothing to click at {selector}"


def compact(action: dict[str, str]) -> str:
    """An action as the page writes it in ``data-action`` (``JSON.stringify``)."""
    return json.dumps(action, separators=(",", ":"))


def buttons(page: Page) -> list[dict[str, Any]]:
    """The actions the page offers now."""
    found = page.eval(
        "[...document.querySelectorAll('#actions button')].map(b => b.dataset.action)"
    )
    return [json.loads(a) for a in found]


def deadwood_without(page: Page, card: str, extra: str | None = None) -> int:
    cards = f"GinPlay.hand.filter(c => c !== {json.dumps(card)})"
    if extra is not None:
        cards = f"{cards}.concat([{json.dumps(extra)}])"
    return int(page.eval(f"GinPlay.bestMelds({cards}).dead"))


def play_turn(page: Page, clicked: list[str], *, shots: Path | None = None) -> None:
    """One decision, as a greedy person makes it by clicking."""
    pending = page.eval("GinPlay.pending")
    legal = pending["legal"]
    if pending["decision"] != "discard":
        top = pending["view"]["discard_pile"][-1]
        better = min(deadwood_without(page, c, top) for c in page.eval("GinPlay.hand"))
        take = {"kind": "take_discard"} in legal and better < page.eval(
            "GinPlay.bestMelds(GinPlay.hand).dead"
        )
        want = "take_discard" if take else ("draw_stock" if {"kind": "draw_stock"} in legal
                                            else "pass_upcard")  # fmt: skip
        offered = [a["kind"] for a in buttons(page)]
        assert sorted(offered) == sorted(a["kind"] for a in legal)  # only the legal moves
        click(page, f"#actions button[data-action='{compact({'kind': want})}']")
        clicked.append(want)
        return
    knocks = [a["card"] for a in legal if a["kind"] == "knock"]
    discards = [a["card"] for a in legal if a["kind"] == "discard"]
    if knocks:
        card = min(knocks, key=lambda c: deadwood_without(page, c))
        click(page, f"#hand .card[data-card='{card}']")
        click(page, "#actions button[data-action*='knock']")
        wait_for(page, "!document.querySelector('#knock').hidden")
        options = pending["knocks"][card]["options"]
        assert page.eval("document.querySelector('#knock-options input:checked').value") == "0"
        # Gin when the best arrangement leaves no deadwood; else the person's own arrangement
        # (the last offered) when there is another.
        choice = 0 if options[0]["deadwood"] == 0 else len(options) - 1
        if shots is not None and not (shots / "knock.png").exists():
            page.screenshot(shots / "knock.png", full_page=False)
        click(page, f"#knock-options input[value='{choice}']")
        click(page, "#knock-go")
        melds = " | ".join(" ".join(m) for m in options[choice]["melds"])
        clicked.append(f"knock {card} melds {melds}" if melds else f"knock {card}")
        return
    card = min(discards, key=lambda c: deadwood_without(page, c))
    click(page, f"#hand .card[data-card='{card}']")
    assert all(a["kind"] in ("discard", "knock", "big_gin") for a in buttons(page))
    if shots is not None and len(clicked) > 4 and not (shots / "discard.png").exists():
        page.screenshot(shots / "discard.png", full_page=False)
    click(page, f"#actions button[data-action='{compact({'kind': 'discard', 'card': card})}']")
    clicked.append(f"discard {card}")


def test_a_person_plays_whole_games_by_clicking(tmp_path: Path, browser: Browser) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    clicked: list[str] = []
    knocked = ended = 0
    # Seed 11: this player's second hand is a gin (found by playing seeds 1-29 this way).
    with table(tmp_path / "run", "--seed", "11", games=2, hands=3) as (url, _):
        page = browser.open(url)
        while True:
            state = wait_for(
                page, READY, value="({over: !!GinPlay.over, summary: GinPlay.summary})"
            )
            if state["over"]:
                break
            if state["summary"]:
                ended += 1
                if ended == 1:
                    page.screenshot(shots / "hand-end.png")
                click(page, "#continue")
                continue
            play_turn(page, clicked, shots=shots)
            knocked += clicked[-1].startswith("knock")
        assert page.eval("document.querySelector('#final').hidden") is False
        replay = page.eval("document.querySelector('#replay').href")
        page.goto(replay)
        assert "gin-referee" in page.eval("document.title")
        assert not page.errors()
        assert all(u.startswith(url.split("/?")[0]) for u in page.requested_urls())
    lines = record_lines(tmp_path / "run")
    seat = lines[0]["seats"].index("you")
    recorded = [a[1] for h in lines if h["type"] == "hand" for a in h["actions"] if a[0] == seat]
    assert [parse_action(a) for a in recorded] == [parse_action(a) for a in clicked]
    assert knocked >= 2 and ended >= 2
    results = [h["result"] for h in lines if h["type"] == "hand"]
    assert [r for r in results if r.get("knocker") == seat and r["termination"] == "gin"]
    assert [r for r in results if r.get("knocker") == seat and r["termination"] != "gin"]
    assert not [line for line in lines if line["type"] == "fault"]
    for name in ("discard.png", "knock.png", "hand-end.png"):
        assert (shots / name).exists()


def test_an_illegal_move_cannot_be_sent(tmp_path: Path, browser: Browser) -> None:
    with table(tmp_path / "run", "--seed", "3", hands=1) as (url, _):
        page = browser.open(url, width=390, height=844, mobile=True)
        wait_for(page, "GinPlay.pending && GinPlay.pending.decision === 'first_upcard'")
        while page.eval("GinPlay.pending.legal.some(a => a.kind === 'take_discard')") is not True:
            click(page, "#actions button")  # the dealer passes until it may take: never here
        upcard = page.eval("GinPlay.pile[GinPlay.pile.length - 1]")
        page.key("t")  # the keyboard: take the upcard
        wait_for(page, "GinPlay.pending && GinPlay.pending.decision === 'discard'")
        # The card just taken may not be discarded: the page offers no button for it.
        click(page, f"#hand .card[data-card='{upcard}']")
        assert page.eval(f"document.querySelector(\"#hand .card[data-card='{upcard}']\")"
                         ".classList.contains('locked')")  # fmt: skip
        assert not [a for a in buttons(page) if a.get("card") == upcard]
        page.screenshot(tmp_path / "phone.png")
        # Sent anyway, on the page's own socket, it is refused and never reaches the referee.
        rid = page.eval("GinPlay.pending.request_id")
        forged = {"request_id": rid, "action": {"kind": "discard", "card": upcard}}
        page.eval(f"GinPlay.ws.send({json.dumps(json.dumps(forged))})")
        first = "GinPlay.received.find(m => m.type === 'refused')"
        refused = wait_for(page, f"!!{first}", value=f"{first}.reason")
        assert refused == "not a legal move"
        legal = page.eval("GinPlay.pending.legal.find(a => a.kind === 'discard').card")
        steps = page.eval(f"(GinPlay.hand.indexOf('{legal}') - GinPlay.sel + 11) % 11")
        for _ in range(steps):  # the keyboard: choose the card, then discard it
            page.key("ArrowRight")
        assert page.eval("GinPlay.hand[GinPlay.sel]") == legal
        page.key("d")
        while not wait_for(page, READY, value="!!(GinPlay.over || GinPlay.summary)"):
            play_turn(page, [])  # the rest of the hand, played on
    lines = record_lines(tmp_path / "run")
    seat = lines[0]["seats"].index("you")
    mine = [a[1] for h in lines if h["type"] == "hand" for a in h["actions"] if a[0] == seat]
    assert mine[:2] == ["take_discard", f"discard {legal}"]
    assert not [line for line in lines if line["type"] == "fault"]
