"""Full matches between the C++ starter bot (``sample_bots/cpp``) and the Python sample bots.

The C++ bot needs ``g++``, ``make``, ``pkg-config`` and Debian's ``libzmq3-dev``,
``cppzmq-dev`` and ``libmsgpack-cxx-dev`` (``.ci/run`` installs them). Missing any is a
failure naming the packages, not a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.match.record import replay_record
from referee.net.keys import KeyPair
from tests.e2e.helpers import GREEDY, RANDOM, cpp_bot, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


@pytest.mark.parametrize(("seat", "opponent"), [(0, RANDOM), (1, GREEDY)])
async def test_cpp_bot_plays_a_clean_match(tmp_path: Path, seat: int, opponent: str) -> None:
    bots = (cpp_bot(), opponent) if seat == 0 else (opponent, cpp_bot())
    result = await play(*bots, tmp_path, games=2, seed=4)
    stderr = (tmp_path / f"match.seat{seat}.stderr").read_text(errors="replace")
    me = result.seats[seat]
    assert result.reason == "normal", (result, stderr)
    assert result.games_played == 2
    assert me.name == "cpp-starter"
    assert not me.faults and not result.seats[1 - seat].faults, (me.faults, stderr)
    assert me.decisions > 10 and me.stale_replies == 0
    assert "match over: " in stderr  # it read match_end and left by itself, not by SIGTERM
    assert replay_record(tmp_path / "match.jsonl").complete


async def test_cpp_bot_started_over_tcp_uses_the_keys_the_referee_gives_it(
    tmp_path: Path,
) -> None:
    """Over ``tcp://`` the referee requires CURVE and hands its local bots a key pair in
    ``GIN_BOT_PUBLIC_KEY``/``GIN_BOT_SECRET_KEY``: the starter plays with them."""
    curve = KeyPair.generate()
    result = await play(cpp_bot(), GREEDY, tmp_path, games=1, seed=5, local_ipc=False, curve=curve)
    stderr = (tmp_path / "match.seat0.stderr").read_text(errors="replace")
    assert result.reason == "normal", (result, stderr)
    assert result.seats[0].name == "cpp-starter" and not result.seats[0].faults, stderr
