"""A version is exactly the files it was added with. The race that credited a superseded
version with a game its new file played (a pair chosen, then the entrant's file changed and the
entrant added again, then the game's program started) is run at every pair of a real ladder:
each time a pair with a racer is scheduled, the racer's source directory is changed and added
again before the pair's game starts. Every game's bot reports the version it is (the tag in its
directory) and when it started; the test asserts that the race really happened (each racer's
program started after its version had been superseded and its source changed), then that no
game was credited to a version whose files it did not play: the tag it reports is its credited
version's, and its record and result name that version's files' digest."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

from referee.tournament.ladder import LadderBook
from referee.tournament.store import SqliteStore
from tests.tournament.ladder_inproc import PY, add_entrant, python_bot, run_ladder

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

RACER = """import sys, time
from pathlib import Path
from protocol.bot import run_bot_main
from sample_bots.random_bot import RandomBot

tag = Path("tag.txt").read_text().strip()
sys.exit(run_bot_main(RandomBot(), f"{tag}@{time.time():.6f}", multi_match=True))
"""
RACERS = ("racer-a", "racer-b", "racer-c")
TRIES = 8
"""Pairs played: each has one or two racers (three racers and one house bot): a try each."""


def seats_line(record: Path) -> tuple[dict[str, object], list[str]]:
    """A record's header and the names its bots gave themselves."""
    lines = [json.loads(line) for line in gzip.decompress(record.read_bytes()).splitlines()]
    names = next(line["names"] for line in lines if line["type"] == "seats")
    return lines[0], names


async def test_no_game_is_credited_to_a_version_whose_files_it_did_not_play(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    location = out / "tournament.sqlite"
    sources = {name: python_bot(tmp_path / "src" / name, RACER) for name in RACERS}
    tags: dict[str, str] = {}
    for name, source in sources.items():
        (source / "tag.txt").write_text(f"{name}-1\n")
        tags[add_entrant(location, out, name, f"{PY} bot.py", source)] = f"{name}-1"
    add_entrant(location, out, "house", f"{PY} -m sample_bots.random_bot", None)
    superseded: dict[str, float] = {}

    def race(pair: object) -> None:  # the pair is chosen: its racers change and are added again
        for player in pair.players:  # type: ignore[attr-defined]
            entrant, _, version = player.rpartition(".v")
            if entrant in sources:
                tag = f"{entrant}-{int(version) + 1}"
                (sources[entrant] / "tag.txt").write_text(tag + "\n")
                tags[add_entrant(location, out, entrant, f"{PY} bot.py", sources[entrant])] = tag
                superseded[player] = time.time()

    await run_ladder(out, TRIES, on_scheduled=race, concurrency=2)
    with LadderBook.open(location) as book:
        files = {p.player: p.files for p in book.players()}
    with SqliteStore.open(location) as store:
        done = [row for row in store.games() if row.status == "done"]
    raced = 0
    for row in done:
        assert row.result is not None
        header, names = seats_line(out / "games" / Path(str(row.result["record"])).name)
        players = [row.spec.seat0, row.spec.seat1]
        credited = [files[p] for p in players]
        assert header["files"] == row.result["files"] == credited  # the digests it recorded
        for player, name in zip(players, names, strict=True):
            if player.startswith("racer"):
                tag, _, started = name.partition("@")
                raced += float(started) > superseded[player]  # it started after the re-add
                assert tag == tags[player], (player, name)  # it played its own version's files
    assert len(done) >= TRIES and raced >= TRIES, (len(done), raced)


@pytest.mark.expect_error_log
async def test_a_copy_changed_on_disk_is_not_played(tmp_path: Path) -> None:
    """A version's copy changed after it was written (an operator's slip, a disk's fault): its
    game is not played (the machine's fault, not the bot's: no result), it is chosen no more,
    and the others play on."""
    out = tmp_path / "out"
    location = out / "tournament.sqlite"
    players = {}
    for name in ("a", "b", "c"):
        source = python_bot(tmp_path / "src" / name, RACER)
        (source / "tag.txt").write_text(f"{name}\n")
        players[name] = add_entrant(location, out, name, f"{PY} bot.py", source)
    with LadderBook.open(location) as book:
        digest = next(p.files for p in book.players() if p.entrant == "a")
    copy = out / "entrants" / str(digest) / "files"
    copy.chmod(0o755)
    (copy / "tag.txt").chmod(0o644)
    (copy / "tag.txt").write_text("tampered\n")
    failed: dict[int, str] = {}
    pairs = await run_ladder(out, 3, concurrency=1, failed=failed)
    assert failed, "a.v1 was never chosen"  # its game was tried
    assert all("a.v1's files" in why and "changed since" in why for why in failed.values())
    assert all("a.v1" not in pair.players for pair in pairs)  # chosen no more, once failed
    with SqliteStore.open(location) as store:
        done = [row for row in store.games() if row.status == "done"]
    assert done and all("a.v1" not in (row.spec.seat0, row.spec.seat1) for row in done)
