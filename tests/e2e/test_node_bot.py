"""Full matches between the Node.js sample bot and the Python sample bots.

The Node bot needs ``node`` on PATH and its packages installed (``.ci/run`` does
``npm ci`` in ``sample_bots/node``). Missing either is a failure, not a skip: a skip
would hide a broken setup.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.match.record import replay_record
from referee.match.result import MatchResult
from tests.e2e.helpers import GREEDY, RANDOM, node_bot, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


def check_clean_match(result: MatchResult, node_seat: int, games: int, out: Path) -> None:
    """The match ran to its end, the Node seat behaved, and the record replays."""
    node = result.seats[node_seat]
    stderr = (out / f"match.seat{node_seat}.stderr").read_text(errors="replace")
    assert result.reason == "normal", (result, stderr)
    assert result.games_played == games
    assert node.name == "node-bot"
    assert not node.faults, (node.faults, stderr)
    assert node.decisions > 0
    assert not result.seats[1 - node_seat].faults
    report = replay_record(out / "match.jsonl")
    assert report.complete
    assert report.games == games and report.hands > 0


async def test_node_bot_against_random(tmp_path: Path) -> None:
    result = await play(node_bot(), RANDOM, tmp_path, games=2)
    check_clean_match(result, node_seat=0, games=2, out=tmp_path)


async def test_node_bot_against_greedy(tmp_path: Path) -> None:
    result = await play(GREEDY, node_bot(), tmp_path, seed=5)
    check_clean_match(result, node_seat=1, games=1, out=tmp_path)
