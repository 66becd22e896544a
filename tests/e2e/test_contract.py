"""docs/protocol.md's error table and docs/design/faults.md's fault table, row by row, each
played with a real bot process (``tests/bots/misbehave.py``, raw zmq + msgpack) against the
greedy sample bot. The bot writes every ``error``/``reject`` it reads to its stderr, which the
referee keeps in the seat's stderr file: the tests read what the bot was told from there, and
the fault from the result and the record.

The last test checks that every code of the error table and every kind of the fault table is
played here (or named in :data:`NOT_HERE` with the reason).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from referee.match.faults import FaultKind
from referee.match.record import MatchRecorder
from referee.match.result import MatchResult
from tests.e2e.helpers import FAST, GREEDY, PY, bad, play

pytestmark = pytest.mark.timeout(90)

DOCS = Path(__file__).resolve().parents[2] / "docs"
NOT_HERE = {
    "too_large": "the frame size limit belongs to the transport, which is being replaced",
}
"""Codes of the error table deliberately not played here, with the reason."""


def told(out: Path, seat: int = 1) -> str:
    """What the misbehaving bot of ``seat`` logged (errors, rejects, match_end)."""
    return (out / f"match.seat{seat}.stderr").read_text()


def one_fault(result: MatchResult, seat: int = 1) -> tuple[FaultKind, str]:
    """The one fault charged to ``seat``; the other seat has none."""
    (fault,) = result.seats[seat].faults
    assert not result.seats[1 - seat].faults
    return fault.kind, fault.detail


# ------------------------------------------------------------------ before hello: reject / error

REJECTS = [
    "bad_token",
    "token_in_use",
    "version_unsupported",
    "unexpected_type",
    "malformed",
    "unknown_type",
    "missing_field",
    "bad_type",
    "bad_value",
    "bad_card",
]


@pytest.mark.asyncio
@pytest.mark.parametrize("code", REJECTS)
async def test_a_stranger_gets_reject_with_the_documented_code(code: str, tmp_path: Path) -> None:
    """Rows with ``reject`` in "sent in": a connection that has not said hello sends the bad
    message; it gets ``reject`` with that code, and the seated bot plays on unharmed."""
    result = await play(GREEDY, bad(f"probe:{code}", 10_000), tmp_path)
    assert f"probe got reject {code}:" in told(tmp_path)
    assert result.reason == "normal" and not result.seats[1].faults


@pytest.mark.asyncio
async def test_unexpected_message_before_hello_is_an_error(tmp_path: Path) -> None:
    """``unexpected_message``: a valid message other than hello from a stranger."""
    result = await play(GREEDY, bad("probe:unexpected_message", 10_000), tmp_path)
    assert "probe got error unexpected_message: say hello" in told(tmp_path)
    assert result.reason == "normal" and not result.seats[1].faults


# ------------------------------------------------------------------ after hello: error + fault

AFTER_HELLO = [
    # (mode, the error code the bot is sent, the fault, words of the fault's detail)
    ("garbage", "malformed", FaultKind.MALFORMED, "not valid msgpack"),
    ("unknown_type", "unknown_type", FaultKind.MALFORMED, "unknown_type: message.type"),
    ("unexpected_type", "unexpected_type", FaultKind.MALFORMED, "unexpected_type: message.type"),
    ("missing", "missing_field", FaultKind.MALFORMED, "missing_field: action.request_id"),
    ("shape", "bad_type", FaultKind.MALFORMED, "bad_type: action.request_id"),
    # the common reply's layout, which the referee reads from its bytes, damaged:
    ("trailing", "malformed", FaultKind.MALFORMED, "trailing bytes after the message"),
    ("huge_id", "bad_value", FaultKind.MALFORMED, "action.request_id: must be in 0.."),
    ("draw_card", "bad_value", FaultKind.MALFORMED, "not allowed in a bot's draw_stock"),
    ("knock_meld", "bad_value", FaultKind.MALFORMED, "contains the knock card"),
    ("bad_card", "bad_card", FaultKind.MALFORMED, "bad_card: action.action.card"),
    ("hello_twice", "unexpected_message", FaultKind.PROTOCOL, "hello sent twice"),
    ("illegal", "illegal_action", FaultKind.ILLEGAL, "illegal action discard"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("mode", "code", "kind", "words"), AFTER_HELLO)
async def test_a_seated_bot_gets_the_error_then_the_fault(
    mode: str, code: str, kind: FaultKind, words: str, tmp_path: Path
) -> None:
    """Rows with ``error`` in "sent in", and the ``malformed``/``protocol``/``illegal`` faults:
    the bot is told the code, then charged the documented fault, and loses the game."""
    result = await play(GREEDY, bad(mode), tmp_path)
    assert one_fault(result)[0] is kind
    assert words in one_fault(result)[1]
    log = told(tmp_path)
    assert f"got error {code}:" in log
    assert log.index(f"got error {code}:") < log.index("got match_end")
    assert result.winner == 0 and result.seats[0].games_won == 1
    assert f'"kind":"{kind}"' in (tmp_path / "match.jsonl").read_text()


@pytest.mark.asyncio
async def test_request_ids_in_a_longer_form_than_needed_are_played(tmp_path: Path) -> None:
    """A reply may write its id in any msgpack integer form: every id as a uint32 (which the
    referee reads from the bytes, docs/design/performance-notes.md) is a normal reply, all game
    long."""
    result = await play(GREEDY, bad("wide_id", 1), tmp_path)
    assert result.reason == "normal" and not result.seats[1].faults
    assert not result.seats[1].stale_replies and result.seats[1].decisions > 20
    assert "got error" not in told(tmp_path)


@pytest.mark.asyncio
async def test_stale_request_is_an_error_and_no_fault(tmp_path: Path) -> None:
    result = await play(GREEDY, bad("double"), tmp_path)
    assert "got error stale_request: no request" in told(tmp_path)
    assert not result.seats[1].faults and result.seats[1].stale_replies > 0
    assert result.reason == "normal"


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["flood", "pong_flood"])
async def test_flooding_past_1000_unsolicited_messages_is_a_protocol_fault(
    mode: str, tmp_path: Path
) -> None:
    """``protocol``: 3,000 actions to no request, or 1,100 pongs that answer no ping."""
    result = await play(GREEDY, bad(mode), tmp_path)
    kind, detail = one_fault(result)
    assert kind is FaultKind.PROTOCOL and "flooding: more than 1000 unsolicited" in detail


@pytest.mark.asyncio
async def test_timeout_names_the_request_and_the_time_allowed_in_ms(tmp_path: Path) -> None:
    result = await play(GREEDY, bad("sleep"), tmp_path)
    kind, detail = one_fault(result)
    assert kind is FaultKind.TIMEOUT
    # move 1 s + bank 2 s + grace 0.05 s (FAST), less any bank already drawn on
    # (where the bot's run-queue time is measured, the charge follows: docs/tournaments.md)
    found = re.fullmatch(r"no reply to request (\d+) within (\d+) ms( \(charged .*\))?", detail)
    assert found is not None, detail
    assert 3000 < int(found[2]) <= 3050


@pytest.mark.asyncio
async def test_startup_quotes_the_last_lines_of_stderr(tmp_path: Path) -> None:
    """``startup``: a program that dies on import; its fault names the error, not the
    traceback's head."""
    # a traceback of five lines: its head ("Traceback...", the frames) is not the news
    broken = f"{PY} -c 'def start():\n    import no_such_module_for_this_test\nstart()'"
    result = await play(GREEDY, broken, tmp_path, time=replace(FAST, startup=10.0))
    kind, detail = one_fault(result)
    assert kind is FaultKind.STARTUP and result.winner == 0
    assert "ModuleNotFoundError: No module named 'no_such_module_for_this_test'" in detail
    assert "Traceback" not in detail and detail.endswith("'no_such_module_for_this_test'")
    assert "last stderr:" in detail and "before saying hello" in detail
    hint = "; Python module 'no_such_module_for_this_test' not found: run the bot with a python"
    assert hint in detail and detail.index(hint) < detail.index("last stderr:")


@pytest.mark.asyncio
async def test_crash_quotes_the_last_lines_of_stderr(tmp_path: Path) -> None:
    result = await play(GREEDY, bad("crash"), tmp_path, games=3)
    kind, detail = one_fault(result)
    assert kind is FaultKind.CRASH and result.reason == "forfeit"
    assert detail == "exited with code 3; last stderr: crashing on purpose"


@pytest.mark.asyncio
async def test_an_idle_bot_silent_for_5_heartbeats_stalls(tmp_path: Path) -> None:
    """``stall``: the bot goes silent (no pongs) after a discard, while its opponent thinks
    4 s a move: more than five heartbeats of 0.5 s."""
    time = replace(FAST, bank=30.0)
    result = await play(bad("slow", 2), bad("mute", 2), tmp_path, time=time)
    kind, detail = one_fault(result)
    assert kind is FaultKind.STALL and "no answer to heartbeats" in detail
    assert result.winner == 0 and result.reason == "forfeit"


@pytest.mark.asyncio
async def test_bye_mid_match_is_a_stall(tmp_path: Path) -> None:
    result = await play(GREEDY, bad("bye"), tmp_path)
    kind, detail = one_fault(result)
    assert kind is FaultKind.STALL and "bot said bye mid-match" in detail
    assert result.reason == "forfeit"


@pytest.mark.asyncio
async def test_shutdown_is_sent_before_match_end_when_the_referee_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``shutdown``: the referee stops (SIGTERM sets this event) in the middle of the first
    hand, as soon as both are seated: both bots get ``error`` ``shutdown``, then
    ``match_end`` ``aborted``, and nobody is charged a fault."""
    stop = asyncio.Event()
    write = MatchRecorder.write

    def write_and_stop(self: MatchRecorder, record: dict[str, Any]) -> None:
        write(self, record)
        if record.get("type") == "seats":
            stop.set()

    monkeypatch.setattr(MatchRecorder, "write", write_and_stop)
    result = await play(bad("plain", 10_000), bad("plain", 10_000), tmp_path, stop=stop)
    assert stop.is_set() and result.interrupted and result.reason == "aborted"
    assert not result.seats[0].faults and not result.seats[1].faults
    for seat in (0, 1):
        log = told(tmp_path, seat)
        assert log.index("got error shutdown:") < log.index("got match_end aborted"), log


# ------------------------------------------------------------------ every row is played

PLAYED = {
    *REJECTS,
    "unexpected_message",
    *(code for _mode, code, _kind, _words in AFTER_HELLO),
    "stale_request",
    "timeout",
    "startup",
    "crash",
    "stall",
    "protocol",
    "illegal",
    "shutdown",
}


def _table_codes(text: str, heading: str) -> list[str]:
    """First-column codes of the first table under ``heading``."""
    section = text.split(heading, 1)[1]
    rows = re.findall(r"^\| `([a-z_]+)` \|", section.split("\n## ", 1)[0], re.MULTILINE)
    assert rows, f"no table under {heading!r}"
    return rows


def test_every_row_of_the_error_and_fault_tables_is_played() -> None:
    errors = _table_codes((DOCS / "protocol.md").read_text(), "\n## Errors\n")
    kinds = _table_codes((DOCS / "design" / "faults.md").read_text(), "\n## Taxonomy\n")
    assert set(kinds) == {str(k) for k in FaultKind}
    assert set(errors) - set(NOT_HERE) <= PLAYED, set(errors) - set(NOT_HERE) - PLAYED
    assert set(kinds) <= PLAYED
