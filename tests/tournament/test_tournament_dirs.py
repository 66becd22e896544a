"""A tournament's bot given as a directory (``[[bots]] dir``) plays the snapshot the tournament
started with: its games run in the read-only copy, record its digest, and a tournament resumed
after the directory changed still plays the files it started with (and says so). A missing
directory, or a command naming a file outside it, is refused before anything is recorded."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import os
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.botfiles import BOT_SNAPSHOTS
from referee.tournament.config import ConfigError, load_config
from referee.tournament.games import GameOutcome
from referee.tournament.runner import TournamentRun
from referee.tournament.snapshots import scan
from referee.tournament.store import SqliteStore
from tests.e2e.helpers import PY, RANDOM

pytestmark = pytest.mark.timeout(120)

TAGGED = """import sys
from pathlib import Path
from protocol.bot import run_bot_main
from sample_bots.random_bot import RandomBot

sys.exit(run_bot_main(RandomBot(), Path("tag.txt").read_text().strip(), multi_match=True))
"""


def write(tmp_path: Path, command: str = f"{PY} bot.py", directory: str = "bots/a") -> Path:
    bot = tmp_path / "bots" / "a"
    bot.mkdir(parents=True, exist_ok=True)
    (bot / "bot.py").write_text(TAGGED)
    (bot / "tag.txt").write_text("first\n")
    config = tmp_path / "t.toml"
    config.write_text(
        '[tournament]\nname = "dirs"\ngames_per_pairing = 3\nduplicate = false\n'
        "concurrency = 1\nmax_hands_per_game = 1\nreuse_bots = false\n"
        "[time]\nmove = 1.0\nbank = 2.0\nstartup = 15.0\n"
        f'[[bots]]\nname = "a"\ndir = "{directory}"\ncommand = "{command}"\n'
        f'[[bots]]\nname = "r"\ncommand = "{RANDOM}"\n'
    )
    return config


def names(record: Path) -> tuple[list[str | None], list[str]]:
    """A record's ``files`` and the names its bots gave themselves."""
    lines = [json.loads(line) for line in gzip.decompress(record.read_bytes()).splitlines()]
    return lines[0]["files"], next(line["names"] for line in lines if line["type"] == "seats")


@pytest.mark.asyncio
async def test_a_bot_given_as_a_directory_plays_the_files_the_tournament_started_with(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path)
    config = load_config(path)
    assert config.bots[0].dir == str(tmp_path / "bots" / "a")
    digest = scan(tmp_path / "bots" / "a").digest
    out = tmp_path / "out"
    stop = asyncio.Event()

    def first_only(outcome: GameOutcome) -> None:
        stop.set()

    await TournamentRun(config, out, stop=stop, on_game=first_only).run()
    (tmp_path / "bots" / "a" / "tag.txt").write_text("changed\n")  # between the two runs
    with caplog.at_level(logging.WARNING):
        await TournamentRun(load_config(path), out).run()
    assert "bot a: " in caplog.text and "changed since the tournament started" in caplog.text
    with SqliteStore.open(out / "tournament.sqlite") as store:
        assert json.loads(store.get_meta(BOT_SNAPSHOTS) or "") == {"a": digest}
        done = [row for row in store.games() if row.status == "done"]
    assert len(done) == 3
    for row in done:
        assert row.result is not None
        seats = [row.spec.seat0, row.spec.seat1]
        files, own = names(out / "games" / Path(str(row.result["record"])).name)
        expected = [digest if name == "a" else None for name in seats]
        assert files == row.result["files"] == expected
        assert own[seats.index("a")] == "first"  # every game: the files it started with
    copy = out / "entrants" / digest / "files"
    assert (copy / "tag.txt").read_text() == "first\n" and not (copy.stat().st_mode & 0o222)


def test_a_bad_directory_or_command_is_refused_before_anything_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError, match=r"bots\[0\].dir: no such directory: .*/bots/none"):
        load_config(write(tmp_path, directory="bots/none"))
    with pytest.raises(ConfigError, match=r"bots\[0\].command: .* a file outside the bot's"):
        load_config(write(tmp_path, command=f"{PY} {tmp_path / 't.toml'}"))
    with pytest.raises(ConfigError, match=r"bots\[0\].command: no such file: \./run.sh"):
        load_config(write(tmp_path, command="./run.sh"))
    path = write(tmp_path)
    os.mkfifo(tmp_path / "bots" / "a" / "pipe")
    assert main(["tournament", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "bot 'a': pipe: a FIFO" in capsys.readouterr().err
    assert not (tmp_path / "out" / "tournament.sqlite").exists()
    # a directory that holds the tournament's own output (its records, its deal key)
    (tmp_path / "bots" / "a" / "pipe").unlink()
    path = write(tmp_path, directory=".")
    assert main(["tournament", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "holds or lies in the referee's private" in capsys.readouterr().err
    assert not (tmp_path / "out" / "tournament.sqlite").exists()
