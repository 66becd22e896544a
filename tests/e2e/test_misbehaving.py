"""Each misbehaving bot produces its documented fault and result; the referee goes on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from referee.match.faults import FaultKind, FaultPolicy
from tests.e2e.helpers import BOTS, FAST, GREEDY, PY, bad, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


@pytest.mark.parametrize(
    ("mode", "kind", "words"),
    [
        ("sleep", FaultKind.TIMEOUT, "no reply to request"),
        ("garbage", FaultKind.MALFORMED, ""),
        ("shape", FaultKind.MALFORMED, "request_id"),
        ("multiframe", FaultKind.MALFORMED, "one frame"),
        ("illegal", FaultKind.ILLEGAL, "illegal action discard"),
        ("bye", FaultKind.STALL, "bye"),
    ],
)
async def test_policy_faults_forfeit_the_game(
    mode: str, kind: FaultKind, words: str, tmp_path: Path
) -> None:
    result = await play(GREEDY, bad(mode), tmp_path)
    faults = result.seats[1].faults
    assert [f.kind for f in faults] == [kind], faults
    assert words in faults[0].detail
    assert faults[0].game == 0 and faults[0].hand == 0
    assert result.winner == 0 and result.seats[0].games_won == 1
    assert not result.seats[0].faults
    record = (tmp_path / "match.jsonl").read_text()
    assert f'"kind":"{kind}"' in record and '"termination":"forfeit"' in record


async def test_crash_forfeits_the_match_with_exit_code_and_stderr(tmp_path: Path) -> None:
    result = await play(GREEDY, bad("crash"), tmp_path, games=3)
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.CRASH
    assert "exited with code 3" in fault.detail and "crashing on purpose" in fault.detail
    assert result.winner == 0 and result.reason == "forfeit"
    assert result.games_played == 1


async def test_never_connecting_bot_is_a_startup_fault() -> None:
    # 3 s: the greedy bot must still start in time on a loaded machine.
    result = await play(GREEDY, bad("never"), time=replace(FAST, startup=3.0))
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.STARTUP and "no hello within" in fault.detail
    assert result.winner == 0 and result.reason == "forfeit"


@pytest.mark.parametrize(
    ("mode", "code"), [("wrong_token", "bad_token"), ("old_version", "version_unsupported")]
)
async def test_rejected_hello_never_gets_a_seat(mode: str, code: str) -> None:
    result = await play(GREEDY, bad(mode))
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.STARTUP
    assert "exited with code 2" in fault.detail and code in fault.detail
    assert result.winner == 0


async def test_missing_program_is_a_startup_fault() -> None:
    result = await play(GREEDY, "/nonexistent/bot --flag")
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.STARTUP and "/nonexistent/bot" in fault.detail


async def test_both_failing_to_start_is_no_start() -> None:
    result = await play("/nonexistent/a", "/nonexistent/b")
    assert result.winner is None and result.reason == "no_start"
    assert all(len(s.faults) == 1 for s in result.seats)


async def test_double_and_stale_replies_are_dropped_not_applied() -> None:
    result = await play(GREEDY, bad("double"))
    assert not result.seats[1].faults
    assert result.seats[1].stale_replies > 0
    assert result.winner == 0 and result.reason == "normal"


async def test_flooding_is_a_protocol_fault() -> None:
    result = await play(GREEDY, bad("flood"))
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.PROTOCOL and "flooding" in fault.detail


async def test_disconnect_is_detected() -> None:
    result = await play(GREEDY, bad("disconnect"))
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.STALL
    # Closed with linger 0, the socket usually resets rather than closes.
    assert fault.detail in (
        "connection lost (connection closed by the peer)",
        "connection lost (connection reset by the peer)",
    )
    assert result.winner == 0


async def test_a_vanished_bot_is_a_stall_within_the_heartbeat_not_a_timeout() -> None:
    """A bot that goes silent with its connection open (a SIGSTOPped process, a host that
    dropped off the network) is noticed by the ZMTP heartbeat (5 heartbeats of silence), long
    before its 30 s decision clock would run out."""
    slow_clock = replace(FAST, move=10.0, bank=20.0)
    result = await play(GREEDY, bad("freeze"), time=slow_clock)
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.STALL and "heartbeat timeout" in fault.detail
    assert result.winner == 0


async def test_an_oversized_message_is_answered_too_large() -> None:
    result = await play(GREEDY, bad("oversize"))
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.MALFORMED and "too_large" in fault.detail


async def test_bot_ignoring_sigterm_is_killed_at_teardown() -> None:
    result = await play(GREEDY, bad("ignore_term", 10_000), games=1)
    assert result.reason == "normal" and not result.seats[1].faults


async def test_strike_policy_plays_a_safe_move_and_goes_on() -> None:
    result = await play(GREEDY, bad("illegal"), policy=FaultPolicy.STRIKE, strikes=3)
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.ILLEGAL
    assert result.seats[1].strikes == 1
    assert result.reason == "normal"


@pytest.mark.parametrize("mode", ["inline", "separate"])
async def test_the_opponent_is_told_of_the_safe_moves_played_for_a_faulting_bot(mode: str) -> None:
    tracker = f"{PY} {BOTS / 'tracker.py'} {mode}"  # crashes if its events do not add up
    result = await play(tracker, bad("illegal", 1), policy=FaultPolicy.STRIKE, strikes=3)
    assert result.reason == "normal" and result.seats[1].strikes == 1
    assert not result.seats[0].faults


async def test_forfeit_match_policy() -> None:
    result = await play(GREEDY, bad("illegal"), policy=FaultPolicy.FORFEIT_MATCH, games=3)
    assert result.reason == "forfeit" and result.winner == 0 and result.games_played == 1
