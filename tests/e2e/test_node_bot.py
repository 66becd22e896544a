"""Full matches between the Node.js sample bot and the Python sample bots.

The Node bot needs ``node`` on PATH and its packages installed (``.ci/run`` does
``npm ci`` in ``sample_bots/node``). Missing either is a failure, not a skip: a skip
would hide a broken setup.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from referee.match_config import MatchResult
from referee.match_record import replay_record
from tests.e2e.helpers import GREEDY, RANDOM, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]

NODE_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "node"
BOT_JS = NODE_DIR / "bot.js"
INSTALL = f"cd {NODE_DIR} && npm ci"


def node_bot() -> str:
    """Command line of the Node bot; fails the test if Node or its packages are missing."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"`node` is not on PATH: install Node.js >= 18, then run: {INSTALL}")
    for package in ("zeromq", "@msgpack/msgpack"):
        if not (NODE_DIR / "node_modules" / package).is_dir():
            pytest.fail(f"the Node bot's package {package!r} is not installed; run: {INSTALL}")
    return f"{shlex.quote(node)} {shlex.quote(str(BOT_JS))}"


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
