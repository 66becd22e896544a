"""The replay data and the command line's errors, without a browser."""

from __future__ import annotations

import fnmatch
import json
import math
import tomllib
from pathlib import Path

import pytest

from referee.cli import main
from referee.match.record import RecordError, read_record_lines, replay_record
from referee.match.record_gzip import compress_record
from referee.rules import DECK
from referee.view.page import embed_json
from referee.view.replay_data import match_data
from referee.view.svg import elo_text, rating_plot

pytestmark = pytest.mark.timeout(120)


def test_every_step_holds_the_52_cards_and_the_decisions_match_the_record(record: Path) -> None:
    data = match_data(record)
    hand_lines = [rec for _, rec in read_record_lines(record) if rec["type"] == "hand"]
    # The organiser's names (here the command line's), the bots' own names as a detail.
    assert data["names"] == ["greedy_bot", "random_bot"]
    assert data["self_names"] == ["greedy-bot", "random-bot"]
    assert len(data["hands"]) == len(hand_lines) > 2
    for hand, line in zip(data["hands"], hand_lines, strict=True):
        assert len(hand["steps"]) == len(line["actions"]) + 1
        assert [[s["action"]["seat"], s["action"]["text"], s["action"]["ms"]]
                for s in hand["steps"][1:]] == [[a[0], a[1], round(a[2], 3)]
                                                for a in line["actions"]]  # fmt: skip
        for step in hand["steps"]:
            held = [c for seat in step["seats"] for m in [*seat["melds"], seat["deadwood_cards"]]
                    for c in m]  # fmt: skip
            seen = held + step["pile"]
            assert len(set(seen)) == len(seen)
            assert len(seen) + step["stock"] == len(DECK)
        result = line["result"]
        assert hand["result"] == result
        last = hand["steps"][-1]
        if result["termination"] in ("knock", "gin"):
            knocker = result["knocker"]
            assert last["seats"][knocker]["deadwood"] == result["deadwood"][knocker]
        winner = result["winner"]
        if winner is not None:
            gained = hand["scores_after"][winner] - hand["scores_before"][winner]
            assert gained == result["points"]
    draws = [s["action"] for h in data["hands"] for s in h["steps"][1:]
             if s["action"]["text"] == "draw_stock"]  # fmt: skip
    assert draws and all(len(a["card"]) == 2 for a in draws)
    assert data["match_end"]["winner"] == 0 and len(data["games"]) == 2


def test_bank_and_time_used_follow_the_clock(record: Path) -> None:
    data = match_data(record)
    move = data["time_control"]["move_ms"]
    bank = data["time_control"]["bank_ms"]
    for hand in data["hands"]:
        for step in hand["steps"][1:]:
            action = step["action"]
            assert 0 <= action["bank_ms"] <= bank
            assert action["used_ms"] >= action["ms"]
            if action["ms"] <= move:
                continue
            assert action["bank_ms"] < bank


def test_embedded_json_cannot_close_its_script_element() -> None:
    hostile = {"name": "</script><script>alert(1)</script><!--", "amp": "a&b"}
    html = embed_json(hostile, "gin-data")
    body = html.removeprefix('<script type="application/json" id="gin-data">')
    body = body.removesuffix("</script>")
    assert "<" not in body and ">" not in body and "&" not in body
    assert json.loads(body) == hostile


def test_view_writes_a_page_beside_the_record(
    record: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "m.jsonl"
    copy.write_bytes(record.read_bytes())
    assert main(["view", str(copy)]) == 0
    page = tmp_path / "m.html"
    assert capsys.readouterr().out.strip() == str(page)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and 'id="gin-data"' in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "src=" not in text


def test_view_reads_a_compressed_record_as_the_plain_one(
    record: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tournament's ``gNNNNNN-aK.jsonl.gz`` gives the same page as its plain record, named
    ``gNNNNNN-aK.html``."""
    plain = tmp_path / "g000004-a1.jsonl"
    plain.write_bytes(record.read_bytes())
    assert main(["view", str(plain), "-o", str(tmp_path / "plain.html")]) == 0
    packed = compress_record(plain)
    assert main(["view", str(packed)]) == 0
    page = tmp_path / "g000004-a1.html"
    assert capsys.readouterr().out.split()[-1] == str(page)
    assert page.read_text() == (tmp_path / "plain.html").read_text()
    assert match_data(packed) == match_data(record)


@pytest.mark.parametrize(
    ("damage", "expected", "code"),
    [
        (lambda lines: [*lines[:3], lines[3][: len(lines[3]) // 2]], ":4: not JSON (", 2),
        (lambda lines: ["garbage", *lines[1:]], ":1: not JSON (", 2),
        (lambda lines: [], ":1: empty record", 1),
        (
            lambda lines: [*lines[:2], lines[2].replace('"discard ', '"discard 2x', 1), *lines[3:]],
            ":3:",
            1,
        ),
        (
            lambda lines: [lines[0].replace('"rules_hash":"', '"rules_hash":"0', 1), *lines[1:]],
            ":1: rules hash mismatch",
            1,
        ),
    ],
    ids=["truncated", "garbled", "empty", "bad-action", "bad-header"],
)
def test_a_bad_record_is_refused_with_its_file_and_line(
    record: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: object,
    expected: str,
    code: int,
) -> None:
    lines = record.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(damage(lines)) + "\n")  # type: ignore[operator]
    # a file that cannot be read as a record is bad input (2); one that does not verify, 1
    assert main(["view", str(bad), "-o", str(tmp_path / "out.html")]) == code
    err = capsys.readouterr().err
    assert str(bad) in err and expected in err and "Traceback" not in err
    assert not (tmp_path / "out.html").exists()
    with pytest.raises(RecordError):
        match_data(bad)


def test_view_and_report_of_missing_things(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl: no such record file" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'tournament.sqlite'}: no tournament store here" in err
    assert not (tmp_path / "tournament.sqlite").exists()
    (tmp_path / "tournament.sqlite").write_text("not a database at all, but long enough" * 40)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "tournament.sqlite" in err and "not a SQLite database" in err
    assert main(["report", str(tmp_path / "nodir")]) == 2
    assert "nodir: no such directory" in capsys.readouterr().err


def test_the_page_assets_are_package_data() -> None:
    """``pip install .`` installs what ``referee.view.page.asset`` reads."""
    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["referee"]
    static = root / "referee" / "view" / "static"
    files = sorted(p.relative_to(root / "referee").as_posix() for p in static.iterdir())
    assert {"view/static/viewer.js", "view/static/viewer.css", "view/static/report.css"} <= set(
        files
    )
    for name in files:
        assert any(fnmatch.fnmatch(name, g) for g in globs), f"{name} is not package data"


def test_the_rating_plot_draws_what_exists() -> None:
    svg = rating_plot(
        [("a", 50.0, 10.0, 90.0), ("b", None, None, None), ("<c>", -50.0, -math.inf, 0.0)]
    )
    assert svg.count('class="rating"') == 2
    assert svg.count('class="interval"') == 2
    assert svg.count('class="open"') == 1
    assert "&lt;c&gt;" in svg and "<c>" not in svg
    assert [elo_text(v) for v in (12.4, None, math.inf, -math.inf)] == [
        "+12",
        "n/a",
        "+inf",
        "-inf",
    ]


def test_replay_names_the_seats_as_the_organiser_did(record: Path) -> None:
    lines = replay_record(record).lines
    assert "greedy_bot calls itself greedy-bot" in lines
    assert "random_bot calls itself random-bot" in lines
    hands = [line for line in lines if line.startswith("game 1 hand 1:")]
    assert hands and "greedy_bot: " in hands[0] and "random_bot: " in hands[0]
    assert not any("greedy-bot:" in line or "(random-bot)" in line for line in lines)
