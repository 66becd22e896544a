"""``gin-referee play remote:NAME``: the bot is one its author starts by hand (in a debugger,
another shell), told where to connect on stdout; the person plays it as any other."""

from __future__ import annotations

import asyncio
import os
import random
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import RANDOM
from tests.play.table import record_lines, table
from tests.play.test_no_leak import play_randomly

pytestmark = pytest.mark.timeout(120)


def test_a_bot_started_by_hand_is_told_where_to_connect_and_is_played(tmp_path: Path) -> None:
    with table(tmp_path, "--seed", "3", hands=2, bot="remote:mine") as (url, proc):
        line = proc.stdout.readline()
        assert line.startswith("remote bot mine: start it on this machine with "), line
        words = dict(w.split("=", 1) for w in line.split() if w.startswith("GIN_REFEREE_"))
        assert words["GIN_REFEREE_ENDPOINT"].startswith("tcp://127.0.0.1:")
        env = {**os.environ, **words}
        bot = subprocess.Popen(shlex.split(RANDOM), env=env, stderr=subprocess.PIPE, text=True)
        try:
            got = asyncio.run(play_randomly(url, random.Random(2)))
        finally:
            bot.wait(30)
            assert bot.stderr is not None
            bot.stderr.close()
    assert got[-1]["type"] == "match_end"
    header, *rest = record_lines(tmp_path)
    assert header["seats"] == ["you", "mine"]
    mine, bots = header["seat_time_controls"]  # the person's clock is recorded with the bot's
    assert mine["move_ms"] == 60_000 and mine["bank_ms"] == 600_000
    assert bots == header["time_control"]
    end = rest[-1]
    assert end["type"] == "match_end" and end["reason"] == "normal", end
    assert end["games_played"] == 1
    assert [line for line in rest if line["type"] == "fault"] == []
    assert sum(line["type"] == "hand" for line in rest) >= 1
