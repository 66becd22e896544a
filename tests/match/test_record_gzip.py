"""Compressed records: written whole or not at all, read like plain ones, hostile ones refused."""

from __future__ import annotations

import gzip
import json
import logging
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.cli import main
from referee.match.record import RecordError, read_record_lines
from referee.match.record_gzip import compress_record, record_lines, record_stem
from referee.match.result import MatchResult, SeatSummary
from referee.tournament.games import compress_record_of
from tests.e2e.helpers import GREEDY, RANDOM

LINES = [{"type": "header", "match_id": "g000001-a0"}] + [
    {"type": "hand", "hand": n, "actions": [[n % 2, "draw stock", 0.1]] * 40} for n in range(30)
]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The record of a real one-game match of the sample bots."""
    out = tmp_path_factory.mktemp("played")
    command = ["match", GREEDY, RANDOM, "--games", "1", "--seed", "3", "--sandbox", "none", "--out"]
    assert main([*command, str(out)]) == 0
    return out / "match.jsonl"


def _record(path: Path) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    return path


def test_a_compressed_record_reads_as_the_plain_one_and_replaces_it(tmp_path: Path) -> None:
    plain = _record(tmp_path / "g000001-a0.jsonl")
    original = plain.read_bytes()
    packed = compress_record(plain)
    assert packed == tmp_path / "g000001-a0.jsonl.gz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g000001-a0.jsonl.gz"]  # no .tmp
    assert len(packed.read_bytes()) * 5 < len(original)
    assert b"".join(record_lines(packed)) == original == gzip.decompress(packed.read_bytes())
    assert [line for _, line in read_record_lines(packed)] == LINES
    again = compress_record(_record(tmp_path / "again.jsonl"))
    assert again.read_bytes() == packed.read_bytes()  # no name or time in the header


def test_plain_records_are_read_as_before(tmp_path: Path) -> None:
    plain = _record(tmp_path / "match.jsonl")
    assert b"".join(record_lines(plain)) == plain.read_bytes()
    assert [line for _, line in read_record_lines(plain)] == LINES


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[: len(data) // 2], "cut short"),
        (lambda data: data[:10] + bytes(b ^ 0x55 for b in data[10:40]) + data[40:], "damaged"),
        (lambda data: data[:3] + b"\xff" + data[4:], "damaged"),  # reserved header flags
    ],
)
def test_damaged_gzip_is_refused_naming_the_problem(
    played: Path,
    tmp_path: Path,
    damage: Callable[[bytes], bytes],
    reason: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plain = tmp_path / "g000002-a0.jsonl"
    plain.write_bytes(played.read_bytes())
    packed = compress_record(plain)
    packed.write_bytes(damage(packed.read_bytes()))
    with pytest.raises(RecordError, match=reason) as caught:
        list(read_record_lines(packed))
    assert caught.value.path == str(packed)
    assert main(["replay", str(packed), "--quiet"]) == 2  # unreadable: bad input
    assert reason in capsys.readouterr().err


def test_a_gzip_bomb_is_refused_holding_one_line_at_a_time(tmp_path: Path) -> None:
    """64 MiB of short lines in a 64 KiB file, read with a 4 MiB limit: refused once past it,
    and the reader never held more than a line and a read buffer."""
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"{}\n" * ((64 << 20) // 3), 9))
    assert bomb.stat().st_size < 128 << 10
    limit = 4 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"more than {limit} bytes"):
            for _ in record_lines(bomb, limit):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


@pytest.mark.parametrize("packed", [False, True])
def test_a_line_past_the_line_limit_is_refused_before_it_is_held(
    tmp_path: Path, packed: bool
) -> None:
    """One 64 MiB line (plain, or 64 KiB of gzip), read with a 1 MiB line limit: refused after
    1 MiB of it, whichever form."""
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"a" * (64 << 20))
    if packed:
        path = compress_record(path)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"a line longer than {1 << 20} bytes"):
            next(record_lines(path, line_limit=1 << 20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak


def test_a_hostile_record_costs_replay_one_line_of_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """256 MiB of ``ab`` lines in a small gzip file (what took a whole-file reader to 6.5 GB):
    ``replay`` refuses it at line 1 having read a line."""
    bomb = tmp_path / "g000009-a1.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"ab\n" * ((256 << 20) // 3), 9))
    tracemalloc.start()
    try:
        assert main(["replay", str(bomb), "--quiet"]) == 2  # not a record: bad input
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"{bomb}:1: not JSON" in capsys.readouterr().err
    assert peak < 4 << 20, peak


def test_replay_reads_a_record_from_a_pipe(played: Path, tmp_path: Path) -> None:
    """``gin-referee replay /dev/stdin`` with a real record piped in, plain or gzip, verifies
    it: the gzip magic is peeked, not read and sought back (a pipe cannot seek)."""
    packed = tmp_path / "m.jsonl.gz"
    packed.write_bytes(gzip.compress(played.read_bytes()))
    for source in (played, packed):
        done = subprocess.run(
            [sys.executable, "-m", "referee", "replay", "/dev/stdin", "--quiet"],
            input=source.read_bytes(),
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert b"verified: " in done.stdout and b"complete" in done.stdout


def test_a_record_that_cannot_be_compressed_stays_plain_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plain = _record(tmp_path / "g000003-a0.jsonl")
    (tmp_path / "g000003-a0.jsonl.gz.tmp").mkdir()  # the temporary file cannot be written
    seats = (SeatSummary("a"), SeatSummary("b"))
    result = MatchResult("g000003-a0", 0, "normal", 1, seats, record_path=str(plain))
    with caplog.at_level(logging.WARNING):
        kept = compress_record_of(result)
    assert kept.record_path == str(plain) and plain.is_file()
    assert not (tmp_path / "g000003-a0.jsonl.gz").exists()
    assert "left uncompressed" in caplog.text
    (tmp_path / "g000003-a0.jsonl.gz.tmp").rmdir()
    packed = compress_record_of(result)
    assert packed.record_path == str(plain) + ".gz" and not plain.exists()


def test_record_stem() -> None:
    assert record_stem("g000004-a1.jsonl.gz") == "g000004-a1"
    assert record_stem("g000004-a1.jsonl") == "g000004-a1"
    assert record_stem("notes.txt") == "notes"


def test_a_planted_link_at_the_temporary_name_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    """Whatever sits at ``NAME.gz.tmp`` (a crash's leftover, or a link someone planted to a
    file the referee may write) is removed, never opened: the link's target is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    plain = _record(tmp_path / "g000005-a1.jsonl")
    (tmp_path / "g000005-a1.jsonl.gz.tmp").symlink_to(victim)
    packed = compress_record(plain)
    assert victim.read_text() == "keep me"
    assert [line for _, line in read_record_lines(packed)] == LINES
    assert not (tmp_path / "g000005-a1.jsonl.gz.tmp").exists()
