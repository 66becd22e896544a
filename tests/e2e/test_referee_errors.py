"""A referee bug is never a bot's fault and never a hang (docs/design/faults.md, Infrastructure
errors): bugs injected into real code paths, played with real bot processes. The match ends
at once with reason ``error``; ``match`` exits 70 (not 2, the usage error); a tournament's
other games go on."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.match.clock import Clock
from referee.rules import RulesError, record_hand
from referee.toolkit import feed
from referee.tournament.store import SqliteStore
from tests.e2e.helpers import GREEDY, bad, play
from tests.tournament.test_tournament_e2e import write_config

pytestmark = [pytest.mark.timeout(120), pytest.mark.expect_error_log]


class Injected(RuntimeError):
    """The bug the tests plant."""


def fail_on_call(original: Callable[..., Any], nth: int, error: Exception) -> Callable[..., Any]:
    """``original``, except that its ``nth`` call overall raises ``error`` (once)."""
    calls = 0

    def patched(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth:
            raise error
        return original(*args, **kwargs)

    return patched


def logged_errors(handler: Any) -> list[BaseException | None]:
    """The exceptions of the ERROR records the autouse fixture collected."""
    records: list[logging.LogRecord] = handler.records
    return [r.exc_info[1] if r.exc_info else None for r in records]


@pytest.mark.asyncio
async def test_a_clock_that_raises_on_the_fifth_reply_ends_the_match_as_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_error_logs: Any
) -> None:
    bug = Injected("injected clock bug")
    monkeypatch.setattr(Clock, "charge", fail_on_call(Clock.charge, 5, bug))
    result = await play(GREEDY, bad("plain", 10_000), tmp_path, games=3)
    assert result.reason == "error" and result.winner is None
    assert result.error == "referee error: Injected: injected clock bug"
    assert not result.seats[0].faults and not result.seats[1].faults  # nobody's fault
    assert result.to_dict()["error"] == result.error
    end = json.loads((tmp_path / "match.jsonl").read_text().splitlines()[-1])
    assert end["type"] == "match_end" and end["reason"] == "error"
    assert end["error"] == result.error
    assert "got match_end aborted" in (tmp_path / "match.seat1.stderr").read_text()
    assert bug in logged_errors(no_error_logs)


def test_match_exits_70_on_a_referee_bug_even_a_rules_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_error_logs: Any,
) -> None:
    """RulesError is a ValueError: it once left ``main`` as a usage error (2)."""
    bug = RulesError("injected scoring bug")
    monkeypatch.setattr("referee.match.games.record_hand", fail_on_call(record_hand, 1, bug))
    out = tmp_path / "out"
    argv = ["match", GREEDY, GREEDY, "--games", "2", "--seed", "1", "--out", str(out)]
    assert main(argv) == 70
    err = capsys.readouterr().err
    assert "match match failed: referee error: RulesError: injected scoring bug" in err
    assert bug in logged_errors(no_error_logs)


def test_a_tournament_goes_on_past_a_game_a_referee_bug_ended(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_error_logs: Any,
) -> None:
    bug = Injected("injected clock bug")
    monkeypatch.setattr(Clock, "charge", fail_on_call(Clock.charge, 5, bug))
    config = write_config(tmp_path / "t.toml", [("a", GREEDY), ("b", GREEDY)], 4, concurrency=1)
    out = tmp_path / "out"
    assert main(["tournament", str(config), "--out", str(out)]) == 70
    err = capsys.readouterr().err
    assert "1 game(s) not played because of a referee error" in err
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        status = sorted(r.status for r in store.games())
        (pending,) = [r.spec.game_id for r in store.games() if r.status == "pending"]
    finally:
        store.close()
    assert status == ["done", "done", "done", "pending"]
    # numbered from 1, as the report's games, with the record's name (from 0)
    assert f"  game {pending + 1} (g{pending:06d}): " in err
    assert bug in logged_errors(no_error_logs)
    monkeypatch.undo()  # the bug fixed: the same command plays the game left
    assert main(["tournament", str(config), "--out", str(out)]) == 0
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        assert all(r.status == "done" for r in store.games())
    finally:
        store.close()


def test_check_exits_70_on_a_referee_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_error_logs: Any
) -> None:
    """``check`` plays a real bot, then a bug in judging what it saw: 70, not a traceback
    (exit 1, which ``check`` uses for a failed item); the bot is gone (no leak)."""
    bug = Injected("injected checklist bug")

    def evaluate(observed: Any) -> Any:
        raise bug

    monkeypatch.setattr("referee.toolkit.check.evaluate", evaluate)
    assert main(["check", GREEDY]) == 70
    assert "internal error (a referee bug): Injected('injected checklist bug')" in (
        capsys.readouterr().err
    )
    assert bug in logged_errors(no_error_logs)


def test_replay_feed_exits_70_on_a_referee_bug(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_error_logs: Any,
) -> None:
    out = tmp_path / "m"
    assert main(["match", GREEDY, GREEDY, "--games", "1", "--seed", "3", "--out", str(out)]) == 0
    bug = Injected("injected feed bug")
    monkeypatch.setattr(feed, "_wire", fail_on_call(feed._wire, 2, bug))
    argv = ["replay", str(out / "match.jsonl"), "--seat", "0", "--feed", GREEDY]
    assert main(argv) == 70
    assert "injected feed bug" in capsys.readouterr().err
    assert bug in logged_errors(no_error_logs)


def test_check_blames_no_item_on_the_bot_for_a_referee_bug_during_its_games(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_error_logs: Any
) -> None:
    """A bug mid-battery once read as the bot's ``hand_end`` failure ("the match stopped after
    0 game(s): error"): now the command exits 70 and prints no checklist."""
    bug = Injected("injected clock bug")
    monkeypatch.setattr(Clock, "charge", fail_on_call(Clock.charge, 5, bug))
    assert main(["check", GREEDY]) == 70
    captured = capsys.readouterr()
    assert "RefereeError('referee error: Injected: injected clock bug')" in captured.err
    assert "hand_end" not in captured.out + captured.err
    assert bug in logged_errors(no_error_logs)
