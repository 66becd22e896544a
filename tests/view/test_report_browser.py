"""The tournament report of a small real round robin, in a headless Chromium."""

from __future__ import annotations

import gzip
import math
import re
import shutil
from pathlib import Path

import pytest

from referee.cli import main
from referee.match.record_gzip import compress_record
from referee.tournament.report import compute_standings, estimate_text
from referee.tournament.store import SqliteStore
from referee.view import report_html
from referee.view.run_dir import RunData, load_run
from referee.view.svg import elo_text
from tests.e2e.helpers import GREEDY, RANDOM, bad
from tests.tournament.test_tournament_e2e import write_config
from tests.view.browser import Browser

pytestmark = pytest.mark.timeout(180)


def elo(value: float | None) -> str:
    """How the report writes an Elo value."""
    if value is None:
        return "n/a"
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def tournament(base: Path, bots: list[tuple[str, str]], games: int) -> Path:
    """The output directory of a finished real round robin of ``bots``."""
    config = write_config(base / "t.toml", bots, games=games)
    assert main(["tournament", str(config), "--out", str(base / "out")]) == 0
    return base / "out"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished round robin of greedy, random and a bot that crashes in its first hand."""
    base = tmp_path_factory.mktemp("tournament")
    bots = [("greedy", GREEDY), ("random", RANDOM), ("crasher", bad("crash", 5))]
    config = write_config(base / "t.toml", bots, games=2)
    assert main(["tournament", str(config), "--out", str(base / "out")]) == 0
    return base / "out"


def test_report_shows_standings_pairings_faults_and_links_to_every_game(
    browser: Browser, run_dir: Path, shots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir)]) == 0
    assert "6 replay page(s) written, 0 kept" in capsys.readouterr().out
    with SqliteStore.open(run_dir / "tournament.sqlite") as store:
        standings = compute_standings(store.games())
    page = browser.open((run_dir / "report.html").as_uri())
    names = page.eval("[...document.querySelectorAll('#standings tbody tr')]"
                      ".map(r => r.cells[1].innerText)")  # fmt: skip
    assert names == [b.name for b in standings.bots] and names[-1] == "crasher"
    first = page.eval(
        "[...document.querySelector('#standings tbody tr').cells].map(c => c.innerText)"
    )
    top = standings.bots[0]
    interval = "" if top.rating is None else f"[{elo(top.rating_low)}, {elo(top.rating_high)}]"
    assert first[2:] == [str(top.games), f"{top.wins}-{top.draws}-{top.losses}",
                         f"{top.score:.3f}", f"{top.points_per_game:.1f}", elo(top.rating),
                         interval, str(top.faults)]  # fmt: skip
    if standings.rating_note:
        assert page.text("#rating-note") == f"Ratings: {standings.rating_note}"
    estimates = page.eval(
        "[...document.querySelectorAll('.pairs td.estimate')].map(c => c.innerText)"
    )
    assert estimates == [estimate_text(p.elo, p.paired) for p in standings.pairings]
    # the crasher took no point: no bot has a rating, and the page says why instead of
    # drawing an empty axis (test_the_rating_plot_draws_every_rating draws one)
    assert all(b.rating is None for b in standings.bots)
    assert page.eval("document.querySelectorAll('svg.rating-plot').length") == 0
    assert page.text("#no-rating-plot").startswith("No rating plot: when a bot (or a group")
    matrix = page.eval("[...document.querySelectorAll('#matrix tbody tr')].map(r =>"
                       " [...r.cells].map(c => c.innerText))")  # fmt: skip
    assert matrix[-1] == ["crasher", "0/2", "0/2", "\u2014"]
    faults = page.text("#faults")
    assert "crasher: 4 faults (crash \u00d74)" in faults
    page.eval("document.querySelectorAll('#faults details.stderr').forEach(d => d.open = true)")
    assert "crashing on purpose" in page.text("#faults .stderr pre")
    links = page.eval("[...document.querySelectorAll('#games a')].map(a => a.getAttribute('href'))")
    assert sorted(links) == [f"viewer/g{i:06d}-a1.html" for i in range(6)]
    # games count from 1, as the replay pages and their links do (record g000000 is game 1)
    numbers = page.eval("[...document.querySelectorAll('#games tbody tr')].map(r =>"
                        " [r.id, r.cells[0].innerText, r.cells[0].title])")  # fmt: skip
    assert numbers == [[f"game-{i}", str(i + 1), f"record g{i:06d}"] for i in range(6)]
    with SqliteStore.open(run_dir / "tournament.sqlite") as store:
        crashed = sorted({int(f["game_id"]) for f in store.faults()})
    assert all(f"crash in game {gid + 1}, hand 1: " in faults for gid in crashed), faults
    page.screenshot(shots / "report.png")
    assert page.errors() == [] and page.requested_urls() == [(run_dir / "report.html").as_uri()]
    phone = browser.open((run_dir / "report.html").as_uri(), width=390, height=844, mobile=True)
    assert phone.eval("document.documentElement.scrollWidth") <= 390
    phone.screenshot(shots / "report-phone.png")
    game = browser.open((run_dir / "report.html").as_uri())
    seats = game.eval("[...document.querySelectorAll('#game-0 td.name')].slice(0, 2)"
                      ".map(td => td.innerText)")  # fmt: skip
    assert sorted(seats) == ["greedy", "random"]
    game.eval("document.querySelector('#game-0 a').click()")
    game.browser.wait_event("Page.loadEventFired", game.session)
    assert game.eval("location.pathname").endswith("/viewer/g000000-a1.html")
    assert game.text("#hand-title").startswith("Game 1, hand 1")  # the row said game 1
    # One bot, one name: the replay page names the bots as the report does (the config's
    # names); what a bot called itself is a detail.
    assert game.text("#title") == f"{seats[0]} vs {seats[1]}"
    assert "random calls itself random-bot" in game.text("#meta")
    assert game.errors() == []


def test_a_second_report_keeps_the_pages_and_games_can_be_left_out(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir)]) == 0
    capsys.readouterr()
    assert main(["report", str(run_dir)]) == 0
    assert "0 replay page(s) written, 6 kept" in capsys.readouterr().out
    out = tmp_path / "elsewhere" / "r.html"
    assert main(["report", str(run_dir), "-o", str(out), "--no-games"]) == 0
    assert out.is_file() and not (out.parent / "viewer").exists()
    assert "viewer/" not in out.read_text()


def test_past_the_page_limit_the_games_with_faults_get_pages_first(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of more games than ``--pages``: that many pages, the games with faults first, the
    rest of the table without links, and a note saying how to get them all."""
    with SqliteStore.open(run_dir / "tournament.sqlite") as store:
        faulted = sorted({int(f["game_id"]) for f in store.faults()})
    assert len(faulted) == 4
    out = tmp_path / "two" / "r.html"
    assert main(["report", str(run_dir), "-o", str(out), "--pages", "2"]) == 0
    assert "2 replay page(s) written, 0 kept, 4 game(s) over --pages 2" in capsys.readouterr().out
    assert sorted(p.name for p in (out.parent / "viewer").iterdir()) == [
        f"g{gid:06d}-a1.html" for gid in faulted[:2]
    ]
    text = out.read_text()
    assert "Replay pages for 2 of 6 recorded games" in text and "--pages all" in text
    assert set(re.findall(r'href="(viewer/[^"]+)"', text)) == {
        f"viewer/g{gid:06d}-a1.html" for gid in faulted[:2]
    }
    latest = tmp_path / "five" / "r.html"
    assert main(["report", str(run_dir), "-o", str(latest), "--pages", "5"]) == 0
    clean = sorted(set(range(6)) - set(faulted))
    assert sorted(p.name for p in (latest.parent / "viewer").iterdir()) == [
        f"g{gid:06d}-a1.html" for gid in sorted([*faulted, clean[-1]])
    ]
    every = tmp_path / "all" / "r.html"
    assert main(["report", str(run_dir), "-o", str(every), "--pages", "all"]) == 0
    assert len(list((every.parent / "viewer").iterdir())) == 6
    assert "Replay pages for" not in every.read_text()
    assert main(["report", str(run_dir), "--pages", "-1"]) == 2
    assert "--pages: expected a number (0 or more) or all, not '-1'" in capsys.readouterr().err


def test_a_record_compressed_while_the_report_is_made_still_gets_its_page(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game that ends while ``report`` runs has its plain record (listed when the run was
    read) replaced by its ``.jsonl.gz``: the page is made from that, not refused, and the
    report is written."""
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    packed = copy / "games" / "g000003-a1.jsonl.gz"
    plain = packed.with_name("g000003-a1.jsonl")
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    packed.unlink()

    def load_then_finish(directory: Path) -> RunData:
        run = load_run(directory)
        assert run.records[3] == plain
        compress_record(plain)  # the tournament finishes the game now
        return run

    monkeypatch.setattr(report_html, "load_run", load_then_finish)
    summary = report_html.write_report(copy, pages=None, rebuild=True)
    assert summary.problems == {} and summary.pages_written == 6
    assert (copy / "viewer" / "g000003-a1.html").is_file() and summary.report.is_file()


def test_the_header_says_how_the_deals_were_made(
    browser: Browser, run_dir: Path, tmp_path: Path
) -> None:
    run = load_run(run_dir)
    path = tmp_path / "report.html"
    path.write_text(report_html.render_report(run, {}))
    assert "seed 5" in browser.open(path.as_uri()).text("header .meta")
    run.config["seed"] = None  # a tournament without a public seed: secret deals
    path.write_text(report_html.render_report(run, {}))
    meta = browser.open(path.as_uri()).text("header .meta")
    assert "None" not in meta and "seed" not in meta and "secret deals" in meta


def test_the_rating_plot_draws_every_rating(
    browser: Browser, tmp_path: Path, shots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two random bots share the points (seed 5): finite ratings, a dot and an interval each,
    and a caption that promises no arrow (no interval is open)."""
    out = tournament(tmp_path, [("random", RANDOM), ("random2", RANDOM)], games=4)
    assert main(["report", str(out), "--no-games"]) == 0
    with SqliteStore.open(out / "tournament.sqlite") as store:
        standings = compute_standings(store.games())
    assert all(b.rating is not None for b in standings.bots), capsys.readouterr().out
    page = browser.open((out / "report.html").as_uri())
    circles = page.eval("document.querySelectorAll('svg.rating-plot circle.rating').length")
    assert circles == 2 and page.eval("document.querySelectorAll('svg path.open').length") == 0
    values = page.eval("[...document.querySelectorAll('svg.rating-plot text.value')]"
                       ".map(t => t.textContent)")  # fmt: skip
    assert values == [elo_text(b.rating) for b in standings.bots]
    labels = page.eval("[...document.querySelectorAll('svg.rating-plot text.name')]"
                       ".map(t => t.textContent)")  # fmt: skip
    assert labels == [b.name for b in standings.bots]
    caption = page.text("figure.plot figcaption")
    assert caption.startswith("Rating (Elo, 0 is the field's mean) with its 95% interval")
    assert "arrow" not in caption and "no dot" not in caption
    page.screenshot(shots / "report-ratings.png")


def test_a_bot_that_won_every_game_is_described_in_words(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    """greedy wins all 10 games against random (5 duplicate pairs, seed 5): no rating exists,
    which the page says in words, and the head-to-head names the perfect record and what it
    shows: a 95% bound of Elo > -15, too few pairs to call greedy the stronger."""
    out = tournament(tmp_path, [("greedy", GREEDY), ("random", RANDOM)], games=10)
    assert main(["report", str(out), "--no-games"]) == 0
    page = browser.open((out / "report.html").as_uri())
    assert page.eval("document.querySelectorAll('svg.rating-plot').length") == 0
    why = page.text("#no-rating-plot")
    assert "took every point against the others" in why
    assert f"gin-referee results {out} --prior-draws 2" in why
    (estimate,) = page.eval(
        "[...document.querySelectorAll('.pairs td.estimate')].map(c => c.innerText)"
    )
    assert estimate == (
        "won every pair (5 of 5), too few to say it is stronger at 95% (6 of 6 would; the "
        "bound is Elo > -15)"
    )
    assert "n/a" not in page.text("#standings tbody tr td:nth-child(8)")
    page.screenshot(shots / "report-perfect.png")
