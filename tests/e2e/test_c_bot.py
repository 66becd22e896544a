"""Full matches between the C starter bot (``sample_bots/c``) and the Python sample bots.

The C bot needs a C compiler, ``make``, ``pkg-config`` and Debian's ``libzmq3-dev`` and
``libmsgpack-dev`` (``.ci/run`` installs them). Missing any is a failure naming the packages,
not a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.match.record import replay_record
from tests.e2e.helpers import GREEDY, RANDOM, c_bot, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


@pytest.mark.parametrize(("c_seat", "opponent"), [(0, RANDOM), (1, GREEDY)])
async def test_c_bot_plays_a_clean_match(tmp_path: Path, c_seat: int, opponent: str) -> None:
    bots = (c_bot(), opponent) if c_seat == 0 else (opponent, c_bot())
    result = await play(*bots, tmp_path, games=2, seed=3)
    stderr = (tmp_path / f"match.seat{c_seat}.stderr").read_text(errors="replace")
    me = result.seats[c_seat]
    assert result.reason == "normal", (result, stderr)
    assert result.games_played == 2
    assert me.name == "c-starter"
    assert not me.faults, (me.faults, stderr)
    assert not result.seats[1 - c_seat].faults
    assert me.decisions > 20 and me.stale_replies == 0
    assert "match over: " in stderr  # it read match_end and left by itself, not by SIGTERM
    report = replay_record(tmp_path / "match.jsonl")
    assert report.complete and report.games == 2


async def test_c_bot_beats_random(tmp_path: Path) -> None:
    """Its strategy is more than legal: it wins most games against the random bot."""
    result = await play(c_bot(), RANDOM, tmp_path, games=6, seed=11)
    assert result.reason == "normal"
    assert result.seats[0].games_won >= 5, result.seats
