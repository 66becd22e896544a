"""Full matches between the sample bots over real ZeroMQ and real processes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from referee.match.bots import BotSpec
from referee.match.config import MatchConfig
from referee.match.faults import FaultKind, FaultPolicy
from referee.match.hub import Hub
from referee.match.runner import play_watched, run_match
from referee.match.seat import SeatLink
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import RouterTransport, TransportConfig
from tests.e2e.helpers import BOTS, FAST, GREEDY, RANDOM, bad, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


def hand_lines(path: Path) -> list[tuple[object, ...]]:
    """Deals, actions and results of a record, without timings."""
    out: list[tuple[object, ...]] = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "hand":
            actions = [(s, a) for s, a, _ms in rec["actions"]]
            out.append((rec["deck"], rec["dealer"], actions, rec["result"]))
    return out


async def test_greedy_against_random_full_match(tmp_path: Path) -> None:
    result = await play(GREEDY, RANDOM, tmp_path, games=3)
    assert result.reason == "normal" and result.games_played == 3
    assert result.winner == 0 and result.seats[0].games_won >= 2
    assert not result.seats[0].faults and not result.seats[1].faults
    assert result.seats[0].decisions > 0 and result.seats[0].time_used > 0
    assert (tmp_path / "match.jsonl").exists()
    assert (tmp_path / "match.seat0.stderr").exists()


@pytest.mark.parametrize("modes", [("inline", "separate"), ("separate", "inline")])
async def test_events_add_up_whether_inline_or_separate(
    tmp_path: Path, modes: tuple[str, str]
) -> None:
    """Each tracker rebuilds the pile from its moves and the events and checks it against
    every request's view: one lost, duplicated or reordered event would crash it."""
    a, b = (f"{sys.executable} {BOTS / 'tracker.py'} {mode}" for mode in modes)
    # Random play seldom knocks (one game ran to 127 hands, past 90 s under CI's load): a cap of
    # 12 hands a game bounds the work and still crosses a game boundary.
    policy = FaultPolicy.FORFEIT_MATCH
    result = await play(a, b, tmp_path, games=2, max_hands_per_game=12, policy=policy)
    assert result.reason == "normal" and result.games_played == 2
    assert not result.seats[0].faults and not result.seats[1].faults
    assert all("events are flowing" in text for text in stderr_texts(tmp_path))


@pytest.mark.parametrize("local_ipc", [True, False])
async def test_started_bots_connect_over_ipc_unless_told_tcp(
    tmp_path: Path, local_ipc: bool
) -> None:
    tracker = f"{sys.executable} {BOTS / 'tracker.py'} inline"
    # Random play seldom knocks: uncapped, this game took 4.6 s on a quiet machine and past 90 s
    # on CI's loaded one. Twelve hands show the transport as well as a hundred.
    result = await play(tracker, tracker, tmp_path, local_ipc=local_ipc, max_hands_per_game=12)
    assert result.reason == "normal" and not result.seats[0].faults
    scheme = "ipc" if local_ipc else "tcp"
    assert all(f"connecting over {scheme}" in text for text in stderr_texts(tmp_path))


def stderr_texts(out: Path) -> list[str]:
    """Both seats' captured stderr."""
    return [(out / f"match.seat{seat}.stderr").read_text() for seat in (0, 1)]


async def test_same_seed_same_result(tmp_path: Path) -> None:
    first = await play(GREEDY, GREEDY, tmp_path / "a", games=2, seed=7)
    second = await play(GREEDY, GREEDY, tmp_path / "b", games=2, seed=7)
    assert hand_lines(tmp_path / "a" / "match.jsonl") == hand_lines(tmp_path / "b" / "match.jsonl")
    assert [s.points for s in first.seats] == [s.points for s in second.seats]
    other = await play(GREEDY, GREEDY, tmp_path / "c", games=2, seed=8)
    assert hand_lines(tmp_path / "c" / "match.jsonl") != hand_lines(tmp_path / "a" / "match.jsonl")
    assert other.games_played == 2


async def test_a_crashing_match_does_not_disturb_another_on_the_same_hub() -> None:
    async with RouterTransport(TransportConfig()) as transport:
        endpoint = transport.endpoint
        hub = Hub(transport)
        matches = []
        procs: list[BotProcess] = []
        try:
            for number, (a, b) in enumerate([(GREEDY, bad("crash", 2)), (GREEDY, GREEDY)]):
                links: list[SeatLink] = []
                for seat, command in enumerate((a, b)):
                    link = hub.open_seat(seat, FAST)
                    env = {"GIN_REFEREE_ENDPOINT": endpoint, "GIN_REFEREE_TOKEN": link.token}
                    procs.append(await BotProcess.start(BotCommand.parse(command), env=env))
                    links.append(link)
                config = MatchConfig(games=2, time=FAST, seed=number, match_id=f"m{number}")
                matches.append(play_watched(config, (links[0], links[1]), procs[-2:]))
            crashed, clean = await asyncio.gather(*matches)
        finally:
            await asyncio.gather(*(p.terminate(grace=0.5) for p in procs))
    assert crashed.reason == "forfeit" and crashed.seats[1].faults[0].kind is FaultKind.CRASH
    assert clean.reason == "normal" and clean.games_played == 2
    assert not clean.seats[0].faults and not clean.seats[1].faults


async def test_greedy_beats_random_in_at_least_90_percent_of_games() -> None:
    result = await play(GREEDY, RANDOM, games=20, seed=3)
    assert result.seats[0].games_won >= 18, result.seats


async def test_a_remote_seat_is_played_by_a_bot_that_connects_with_the_printed_token() -> None:
    starting: list[asyncio.Future[BotProcess]] = []

    def notice(name: str, endpoint: str, token: str) -> None:
        assert name == "alice"
        env = {"GIN_REFEREE_ENDPOINT": endpoint, "GIN_REFEREE_TOKEN": token}
        starting.append(asyncio.ensure_future(BotProcess.start(BotCommand.parse(RANDOM), env=env)))

    config = MatchConfig(games=1, time=FAST, seed=2)
    specs = (BotSpec.parse(GREEDY), BotSpec.parse("remote:alice"))
    try:
        result = await run_match(config, specs, on_token=notice)
    finally:
        for future in starting:
            await (await future).terminate(grace=0.5)
    assert result.reason == "normal" and result.seats[1].name == "random-bot"
    assert not result.seats[1].faults and result.seats[1].decisions > 0


async def test_target_points_ends_the_match_early() -> None:
    result = await play(GREEDY, RANDOM, games=50, target_points=300, seed=4)
    assert result.games_played < 50 and max(s.points for s in result.seats) >= 300
