"""A bot that cannot start is exit 3 everywhere (README, "Exit status"): a tournament plays
every other game and then names it; ``sprt`` stops at once, with no verdict, as ``match``
does (docs/tournaments.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import gin
from tests.e2e.helpers import GREEDY, PY, RANDOM

pytestmark = pytest.mark.timeout(120)

BROKEN = f"{PY} nosuch_bot.py"


def test_a_tournament_with_a_bot_that_cannot_start_plays_on_then_exits_3_naming_it(
    tmp_path: Path,
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        '[tournament]\nname = "cup"\ngames_per_pairing = 2\nseed = 5\nconcurrency = 2\n'
        f'[[bots]]\nname = "greedy"\ncommand = "{GREEDY}"\n'
        f'[[bots]]\nname = "random"\ncommand = "{RANDOM}"\n'
        f'[[bots]]\nname = "broken"\ncommand = "{BROKEN}"\n'
    )
    out = tmp_path / "out"
    done = gin("tournament", str(config), "--out", str(out))
    assert done.returncode == 3, done.stderr
    assert "games: 6/6" in done.stdout  # every game was played: the others' count
    assert "gin-referee: 1 bot(s) could not start (each such game is a forfeit):\n" in done.stderr
    assert "  broken: 4 game(s); exited with code 2 before saying hello" in done.stderr
    assert "nosuch_bot.py" in done.stderr and "greedy:" not in done.stderr
    again = gin("tournament", str(config), "--out", str(out))  # resumed: nothing to play
    assert again.returncode == 3 and "  broken: 4 game(s)" in again.stderr, again.stderr


def test_sprt_with_a_candidate_that_cannot_start_stops_at_once_with_exit_3(
    tmp_path: Path,
) -> None:
    out = tmp_path / "sprt"
    args = ["sprt", "--candidate", BROKEN, "--baseline", RANDOM, "--out", str(out)]
    done = gin(*args)
    assert done.returncode == 3, done.stderr
    assert "gin-referee: sprt stopped, no verdict: the candidate could not start: exited" in (
        done.stderr
    ), done.stderr
    assert "nosuch_bot.py" in done.stderr
    assert "verdict:" not in done.stdout, done.stdout
    played = sorted(path.name for path in (out / "games").iterdir())
    assert len(played) <= 4, played  # the first games (2 at once), not 100 nor 2000
    again = gin(*args)  # resumed: its store holds the game it could not start
    assert again.returncode == 3 and "could not start" in again.stderr, again.stderr
    assert sorted(path.name for path in (out / "games").iterdir()) == played


def test_sprt_with_a_baseline_that_cannot_start_names_the_baseline(tmp_path: Path) -> None:
    done = gin("sprt", "--candidate", GREEDY, "--baseline", BROKEN, "--out", str(tmp_path / "s"),
               "--concurrency", "1")  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "the baseline could not start" in done.stderr, done.stderr
