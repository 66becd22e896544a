"""What a newcomer meets first: a bot that cannot start, a reused ``--out``, ``demo`` run
twice, ``replay``'s numbering and names, ``sprt --help``."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli import main
from tests.e2e.helpers import GREEDY, PY, RANDOM

pytestmark = pytest.mark.timeout(120)


def test_a_bot_that_cannot_start_exits_3_and_its_error_is_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["match", GREEDY, f"{PY} -m no_such_bot_module", "--games", "1"]) == 3
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("  fault:")]
    assert line.endswith("No module named no_such_bot_module"), line
    assert "startup" in line and "Traceback" not in line


def test_reusing_out_is_refused_and_the_earlier_run_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["match", "/nonexistent/a", "/nonexistent/b", "--out", str(tmp_path)]) == 3
    record = (tmp_path / "match.jsonl").read_text()
    log = (tmp_path / "referee.log.jsonl").read_text()
    capsys.readouterr()
    assert main(["match", GREEDY, RANDOM, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path} already holds an earlier run (match.jsonl, referee.log.jsonl" in err
    assert (tmp_path / "match.jsonl").read_text() == record
    assert (tmp_path / "referee.log.jsonl").read_text() == log
    # another match id in the same directory would still share the log: refused as well
    assert main(["match", GREEDY, RANDOM, "--out", str(tmp_path), "--match-id", "m2"]) == 2


def test_demo_twice_writes_two_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--games", "1", "--seed", "3"]) == 0
    assert main(["demo", "--games", "1", "--seed", "3"]) == 0
    first, second = (tmp_path / "runs" / name / "match.jsonl" for name in ("demo", "demo-2"))
    assert first.read_text() and second.read_text()
    out = capsys.readouterr().out
    assert f"record: {Path('runs/demo/match.jsonl')}" in out
    assert f"record: {Path('runs/demo-2/match.jsonl')}" in out


def test_replay_numbers_from_zero_and_names_the_bots_by_their_hello(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["match", GREEDY, RANDOM, "--games", "1", "--seed", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "match.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "numbered from 0, as in the protocol and the record" in out
    assert "game 0 hand 0: " in out and "game 1 " not in out
    assert "greedy-bot" in out and "random-bot" in out
    assert "sample_bots" not in out


def test_sprt_help_says_what_it_does_and_shows_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["sprt", "--help"]) == 0
    out = capsys.readouterr().out
    assert "sequential probability ratio test" in out
    for shown in ("(default: 20.0)", "(default: 0.05)", "(default: 2000)", "(default: runs/sprt)"):
        assert shown in out
    assert "(default: None)" not in out
