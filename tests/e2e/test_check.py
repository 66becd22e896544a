"""``gin-referee check`` against real bot processes: every sample bot passes every item, and
bots with one deliberate mistake fail exactly the item that names it (with its reason)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from referee.cli import main
from referee.net.process import BotCommand
from referee.toolkit.check import CHECK_TIME, CheckOptions, CheckReport, run_check
from tests.e2e.helpers import BOTS, GREEDY, PY, RANDOM, bad, c_bot, cpp_bot, node_bot

pytestmark = [pytest.mark.timeout(90)]

# A loaded CI machine may take a while to start a Python bot, and a few seconds to let it exit.
LENIENT = CheckOptions(time=replace(CHECK_TIME, startup=15.0), exit_grace=5.0, kill_grace=0.5)
EVERY_ITEM = {
    "start", "hello", "first_upcard_nondealer", "first_upcard_dealer", "first_upcard_draw_only",
    "draw", "discard", "knock_offered", "gin_offered", "big_gin_offered", "knock_played",
    "request_ids", "error_survived", "heartbeat", "hand_end", "multi_match", "exit",
    "decision_time",
}  # fmt: skip


def sloppy(mode: str) -> str:
    """Command line of the bot with one small mistake."""
    return f"{PY} {BOTS / 'sloppy.py'} {mode}"


async def check(command: str, options: CheckOptions = LENIENT) -> CheckReport:
    report = await run_check(BotCommand.parse(command), name="bot", options=options)
    assert {i.key for i in report.items} == EVERY_ITEM
    return report


def status(report: CheckReport) -> dict[str, str]:
    return {i.key: i.status for i in report.items}


def failed(report: CheckReport) -> dict[str, str]:
    return {i.key: i.detail for i in report.items if i.status == "fail"}


def assert_every_situation(report: CheckReport) -> None:
    """The battery makes every situation arise for a bot that plays legally."""
    seen = status(report)
    for key in ("first_upcard_nondealer", "first_upcard_dealer", "draw", "discard"):
        assert seen[key] == "pass", report.lines()
    for key in ("knock_offered", "gin_offered", "big_gin_offered", "request_ids"):
        assert seen[key] == "pass", report.lines()
    for key in ("error_survived", "heartbeat", "hand_end", "exit", "decision_time"):
        assert seen[key] == "pass", report.lines()


@pytest.mark.asyncio
@pytest.mark.parametrize("bot", [RANDOM, GREEDY], ids=["random", "greedy"])
async def test_python_sample_bots_pass(bot: str) -> None:
    report = await check(bot)
    assert report.ok, report.lines()
    assert_every_situation(report)
    # The SDK asks for multi_match and inline_events: the second match is played.
    assert status(report)["multi_match"] == "pass"
    assert "inline_events and multi_match" in report.item("hello").detail
    assert report.max_ms is not None and report.median_ms is not None
    # The times are what the referee charges: a reply that came while its loop was busy is
    # stamped at that busy turn's start, so on a loaded machine most can be 0 (the median too).
    assert 0 <= report.median_ms <= report.max_ms and report.max_ms > 0


@pytest.mark.asyncio
async def test_node_sample_bot_passes() -> None:
    report = await check(node_bot())
    assert report.ok, report.lines()
    assert_every_situation(report)
    assert status(report)["multi_match"] == "pass"


@pytest.mark.asyncio
@pytest.mark.parametrize("build", [c_bot, cpp_bot], ids=["c", "cpp"])
async def test_starter_bots_pass(build: Callable[[], str]) -> None:
    report = await check(build())
    assert report.ok, report.lines()
    assert_every_situation(report)
    assert status(report)["multi_match"] == "pass"  # kept between a tournament's games
    assert report.item("exit").detail.startswith("exited 0")
    assert "after the referee's bye" in report.item("exit").detail


@pytest.mark.asyncio
async def test_answering_twice_fails_request_ids() -> None:
    report = await check(bad("double", 3))
    assert not report.ok
    assert "a second time" in failed(report)["request_ids"]


@pytest.mark.asyncio
async def test_resending_after_an_error_fails() -> None:
    report = await check(sloppy("resend"))
    problems = failed(report)
    assert set(problems) == {"request_ids", "error_survived"}, report.lines()
    assert "answered request" in problems["error_survived"]
    assert "a second time" in problems["error_survived"]


@pytest.mark.asyncio
async def test_exiting_on_an_error_fails() -> None:
    report = await check(sloppy("error_exit"))
    problems = failed(report)
    assert "error_survived" in problems and "hand_end" in problems, report.lines()
    assert "crash" in problems["hand_end"]


@pytest.mark.asyncio
async def test_ignoring_pings_fails_heartbeat() -> None:
    report = await check(sloppy("no_pong"))
    problems = failed(report)
    assert "heartbeat" in problems, report.lines()
    # The puppet thinks for 4 heartbeats: about 3 pings, none answered (the count is timing).
    assert re.fullmatch(r"answered 0 of \d+ pings", problems["heartbeat"]), problems


@pytest.mark.asyncio
async def test_not_leaving_after_match_end_fails_exit() -> None:
    options = replace(LENIENT, exit_grace=1.0)
    report = await check(sloppy("no_bye"), options)
    assert failed(report) == {"exit": "still running 1 s after match_end"}, report.lines()


@pytest.mark.asyncio
async def test_nonzero_exit_status_fails_exit() -> None:
    report = await check(sloppy("bye_exit1"))
    assert set(failed(report)) == {"exit"}
    assert failed(report)["exit"] == "after match_end: exited with code 1"


@pytest.mark.asyncio
async def test_bad_melds_fail_knock_played() -> None:
    report = await check(sloppy("melds"))
    problems = failed(report)
    assert "knock_played" in problems, report.lines()
    assert "not a valid meld" in problems["knock_played"] or "meld" in problems["knock_played"]


@pytest.mark.asyncio
async def test_slow_decision_is_reported_against_the_move_time() -> None:
    report = await check(sloppy("late"))
    assert report.ok, report.lines()
    item = report.item("decision_time")
    assert "drew on the bank" in item.detail and "move time 1000 ms" in item.detail
    assert report.max_ms is not None and report.max_ms >= 1500


@pytest.mark.asyncio
async def test_wrong_protocol_version_fails_start_and_hello() -> None:
    options = replace(LENIENT, time=replace(CHECK_TIME, startup=4.0))
    report = await check(bad("old_version"), options)
    problems = failed(report)
    assert set(problems) == {"start", "hello"}, report.lines()
    assert problems["hello"].startswith("version_unsupported")
    assert status(report)["exit"] == "skip"


@pytest.mark.asyncio
async def test_crash_is_reported_with_stderr() -> None:
    report = await check(bad("crash", 2))
    problems = failed(report)
    assert "hand_end" in problems and "crash" in problems["hand_end"], report.lines()
    # at its second decision: the first hand, numbered from 1 as replay and the pages do
    assert problems["hand_end"].startswith("fault crash in game 1 hand 1: "), problems
    assert "exit" in problems


def test_cli_json_and_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", sloppy("no_bye"), "--json", "--exit-time", "0.5", "--sandbox", "none"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["ok"] is False
    by_key = {i["key"]: i for i in out["items"]}
    assert by_key["exit"]["status"] == "fail"
    assert by_key["request_ids"]["status"] == "pass"
    assert out["move_ms"] == 1000 and out["decisions"] > 10
    code = main(["check", RANDOM, "--exit-time", "5", "--startup-time", "15"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "all checks passed" in text and "[PASS] heartbeat" in text
    assert main(["check", "./bot", "--limit", "nonsense"]) == 2
    assert "gin-referee: error:" in capsys.readouterr().err


def test_the_docs_table_lists_every_item() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    section = doc.split("## Checking your bot")[1].split("\n## ")[0]
    rows = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `")]
    keys = {key for row in rows for key in re.findall(r"`(\w+)`", row)}
    assert keys == EVERY_ITEM
