"""The replay page in a real headless Chromium: what it shows, navigation, phones, no network."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.view.replay_data import match_data
from referee.view.replay_html import viewer_html
from tests.e2e.helpers import GREEDY, bad, play
from tests.view.browser import Browser, Page

pytestmark = pytest.mark.timeout(180)

SEAT_CARDS = "[...document.querySelectorAll('#seat-{seat} .hand .card')].map(c => c.dataset.card)"


@pytest.fixture(scope="module")
def page_file(record: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pages") / "match.html"
    assert main(["view", str(record), "-o", str(out)]) == 0
    return out


def open_page(browser: Browser, path: Path, fragment: str = "", **size: object) -> Page:
    page = browser.open(path.as_uri() + fragment, **size)  # type: ignore[arg-type]
    return page


def seat_cards(page: Page, seat: int) -> list[str]:
    return sorted(page.eval(SEAT_CARDS.format(seat=seat)))


def snapshot_cards(step: dict[str, object], seat: int) -> list[str]:
    s = step["seats"][seat]  # type: ignore[index]
    return sorted([c for m in s["melds"] for c in m] + s["deadwood_cards"])


def test_the_page_shows_the_deal_and_steps_through_the_decisions(
    browser: Browser, record: Path, page_file: Path, shots: Path
) -> None:
    data = match_data(record)
    first = data["hands"][0]
    page = open_page(browser, page_file)
    assert page.text("#title") == "greedy_bot vs random_bot"  # the names the referee was given
    aka = "greedy_bot calls itself greedy-bot; random_bot calls itself random-bot"
    assert page.eval("document.querySelector('#title').title") == aka
    assert page.text("#meta").startswith(aka.replace("; ", " \u00b7 "))
    assert page.text("#step-label") == f"step 0 / {len(first['steps']) - 1}"
    for seat in (0, 1):
        assert seat_cards(page, seat) == snapshot_cards(first["steps"][0], seat)
    assert page.eval("document.querySelectorAll('#decisions li').length") == len(first["steps"]) - 1
    assert (
        page.eval("document.querySelectorAll('#decisions li.future').length")
        == len(first["steps"]) - 1
    )
    assert f"upcard {first['upcard']}" in page.text("#hand-title")
    assert f"stock {first['steps'][0]['stock']}" in page.text("#stock")
    page.screenshot(shots / "viewer-deal.png")
    for step in (1, 2, 3):
        page.key("ArrowRight")
        assert page.text("#step-label").startswith(f"step {step} /")
        action = first["steps"][step]["action"]
        assert data["names"][action["seat"]] in page.text("#last-action")
        for seat in (0, 1):
            assert seat_cards(page, seat) == snapshot_cards(first["steps"][step], seat)
    assert page.eval("location.hash") == "#g1-h1-s3"
    assert page.eval("document.querySelector('#decisions li.current').dataset.step") == "3"
    current = page.text("#decisions li.current")
    assert data["names"][first["steps"][3]["action"]["seat"]] in current
    page.key("End")
    result = first["result"]
    text = page.text("#result")
    assert f"scores {result['points']}" in text
    winner = data["names"][result["winner"]]
    assert f"{winner} scores" in text
    assert f"Game 1 score: greedy_bot {first['scores_after'][0]}" in text
    for meld in result["melds"][result["knocker"]]:
        assert f"[{','.join(meld.split())}]" in json.dumps(
            page.eval("[...document.querySelectorAll('#result .meld')].map(m => "
                      "[...m.querySelectorAll('.card')].map(c => c.dataset.card))")
        ).replace(" ", "").replace('"', "")  # fmt: skip
    assert page.text("#scoreboard").split() == [
        "GAMES", "WON", "GAME", "1", "greedy_bot", "0", str(first["scores_after"][0]),
        "random_bot", "0", str(first["scores_after"][1]),
    ]  # fmt: skip
    page.screenshot(shots / "viewer-hand-end.png")
    page.key("ArrowRight")
    second = data["hands"][1]
    assert page.eval("location.hash") == f"#{second['id']}"
    assert page.text("#hand-title").startswith(
        f"Game {second['game'] + 1}, hand {second['hand'] + 1}"
    )
    page.key("ArrowLeft")
    assert page.text("#step-label") == f"step {len(first['steps']) - 1} / {len(first['steps']) - 1}"
    assert page.errors() == []
    assert page.requested_urls() == [page_file.as_uri()]


def test_a_hand_link_keys_and_buttons_reach_every_hand(
    browser: Browser, record: Path, page_file: Path, shots: Path
) -> None:
    data = match_data(record)
    last = data["hands"][-1]
    page = open_page(browser, page_file, f"#{last['id']}-s4")
    assert page.text("#hand-title").startswith(f"Game {last['game'] + 1}, hand {last['hand'] + 1}")
    assert page.text("#step-label").startswith("step 4 /")
    for seat in (0, 1):
        assert seat_cards(page, seat) == snapshot_cards(last["steps"][4], seat)
    page.key("End")
    assert "Match over: greedy_bot wins the match" in page.text("#result")
    games_won = data["match_end"]["games_won"]
    assert f"games won {games_won[0]}\u2013{games_won[1]}" in page.text("#result")
    page.key("Home")
    assert page.text("#step-label").startswith("step 0 /")
    page.key("PageUp")
    previous = data["hands"][-2]
    assert page.eval("location.hash") == f"#{previous['id']}"
    page.eval("document.getElementById('next-hand').click()")
    assert page.eval("location.hash") == f"#{last['id']}"
    page.eval("new Promise(r => { addEventListener('hashchange', () => r(true), {once: true});"
              " location.hash = '#g1-h2'; })")  # fmt: skip
    assert page.text("#hand-title").startswith("Game 1, hand 2")
    page.eval("const s = document.getElementById('slider'); s.value = 5;"
              "s.dispatchEvent(new Event('input'))")  # fmt: skip
    assert page.text("#step-label").startswith("step 5 /")
    links = page.eval("[...document.querySelectorAll('#hand-list a')].map(a => a.hash)")
    assert links == [f"#{h['id']}" for h in data["hands"]]
    assert page.errors() == []


def test_the_page_fits_a_phone(browser: Browser, page_file: Path, shots: Path) -> None:
    page = open_page(browser, page_file, "#g1-h1-s6", width=390, height=844, mobile=True)
    assert page.eval("document.documentElement.scrollWidth") <= 390
    columns = page.eval("getComputedStyle(document.querySelector('.layout')).gridTemplateColumns")
    assert len(columns.split()) == 1
    page.screenshot(shots / "viewer-phone.png")
    page = open_page(browser, page_file, "#g1-h1-s6", width=1280, height=800)
    columns = page.eval("getComputedStyle(document.querySelector('.layout')).gridTemplateColumns")
    assert len(columns.split()) == 2
    page.screenshot(shots / "viewer-laptop.png", full_page=False)


def test_faults_and_forfeits_are_shown_and_names_stay_text(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    result = asyncio.run(play(GREEDY, bad("crash", 6), tmp_path))
    assert result.record_path is not None
    record = Path(result.record_path)
    hostile = "<img src=x onerror=window.pwned=1>"  # an organiser's name, and a bot's own
    own = "<img src=y onerror=window.pwned=2>"
    recs = [json.loads(line) for line in record.read_text().splitlines()]
    for rec in recs:
        if rec["type"] == "header":
            rec["seats"] = ["greedy", hostile]
        elif rec["type"] == "seats":
            rec["names"] = ["greedy-bot", own]
    record.write_text("".join(json.dumps(rec) + "\n" for rec in recs))
    out = tmp_path / "fault.html"
    assert main(["view", str(record), "-o", str(out)]) == 0
    page = open_page(browser, out)
    assert page.text("#title") == f"greedy vs {hostile}"
    assert f"{hostile} calls itself {own}" in page.text("#meta")
    page.key("End")
    faults = page.text("#hand-faults")
    assert f"Fault: {hostile} \u2014 crash" in faults and "crashing on purpose" in faults
    assert "Forfeit: greedy wins the hand" in page.text("#result")
    assert page.eval("window.pwned === undefined && document.querySelectorAll('img').length === 0")
    page.screenshot(shots / "viewer-fault.png")
    assert page.errors() == []


RANK_SEEN = """[...document.querySelectorAll('{0}')].filter(c => c.dataset.card[0] === 'T')
  .map(c => {{ const next = c.nextElementSibling;
    const rank = c.querySelector('.rank').getBoundingClientRect();
    const edge = next ? next.getBoundingClientRect().left : c.getBoundingClientRect().right;
    return [c.dataset.card, rank.width > 0 && rank.right <= edge + 0.5]; }})"""
"""Each 10 in the overlapped cards (``{0}``): whether its whole rank shows left of the next."""


def ten_everywhere(record: Path, tmp_path: Path) -> Path:
    """The page of ``record`` with every card of the first hand's discard piles a 10."""
    data = match_data(record)
    tens = ["Tc", "Td", "Th", "Ts"]
    for step in data["hands"][0]["steps"]:
        step["pile"] = [tens[i % 4] for i in range(len(step["pile"]) + 3)]
        for seat in step["seats"]:
            seat["deadwood_cards"] = tens + seat["deadwood_cards"][4:]
    out = tmp_path / "tens.html"
    out.write_text(viewer_html(data))
    return out


@pytest.mark.parametrize("size", [{"width": 1280, "height": 800},
                                  {"width": 390, "height": 844, "mobile": True}])  # fmt: skip
def test_a_ten_shows_both_digits_in_the_pile_and_in_a_phone_hand(
    browser: Browser, record: Path, tmp_path: Path, shots: Path, size: dict[str, object]
) -> None:
    page = open_page(browser, ten_everywhere(record, tmp_path), "#g1-h1-s4", **size)
    pile = page.eval(RANK_SEEN.format("#pile .fan .card"))
    hands = page.eval(RANK_SEEN.format("#seat-0 .hand .card, #seat-1 .hand .card"))
    assert len(pile) >= 4 and len(hands) >= 8
    assert all(seen for _, seen in pile + hands), pile + hands
    page.screenshot(shots / f"viewer-tens-{size['width']}.png", full_page=False)


def test_every_control_fits_a_phone(browser: Browser, page_file: Path, shots: Path) -> None:
    page = open_page(browser, page_file, "#g1-h1-s6", width=390, height=844, mobile=True)
    outside = page.eval("[...document.querySelectorAll('.controls button, .controls select,"
                        " .controls input')].filter(e => { const r = e.getBoundingClientRect();"
                        " return r.left < 0 || r.right > 390; }).map(e => e.id)")  # fmt: skip
    assert outside == []
    page.screenshot(shots / "viewer-phone-controls.png", full_page=False)


def test_the_meta_line_names_no_default_match_id(browser: Browser, record: Path) -> None:
    data = match_data(record)
    assert data["match_id"] == "match"  # what `gin-referee match` calls a match by default
    out = record.parent / "meta.html"
    out.write_text(viewer_html(data))
    meta = open_page(browser, out).text("#meta")
    assert "match id" not in meta and "standard rules" in meta
    out.write_text(viewer_html({**data, "match_id": "g000004-a1"}))
    assert "match id g000004-a1" in open_page(browser, out).text("#meta")
