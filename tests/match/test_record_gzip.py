"""Compressed records: written whole or not at all, read like plain ones, hostile ones refused."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.cli import main
from referee.match.record import RecordError, read_record_lines
from referee.match.record_gzip import compress_record, read_record_bytes, record_stem
from referee.match.result import MatchResult, SeatSummary
from referee.tournament.games import compress_record_of

LINES = [{"type": "header", "match_id": "g000001-a0"}] + [
    {"type": "hand", "hand": n, "actions": [[n % 2, "draw stock", 0.1]] * 40} for n in range(30)
]


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
    assert read_record_bytes(packed) == original == gzip.decompress(packed.read_bytes())
    assert [line for _, line in read_record_lines(packed)] == LINES
    again = compress_record(_record(tmp_path / "again.jsonl"))
    assert again.read_bytes() == packed.read_bytes()  # no name or time in the header


def test_plain_records_are_read_as_before(tmp_path: Path) -> None:
    plain = _record(tmp_path / "match.jsonl")
    assert read_record_bytes(plain) == plain.read_bytes()
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
    tmp_path: Path,
    damage: Callable[[bytes], bytes],
    reason: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    packed = compress_record(_record(tmp_path / "g000002-a0.jsonl"))
    packed.write_bytes(damage(packed.read_bytes()))
    with pytest.raises(RecordError, match=reason) as caught:
        list(read_record_lines(packed))
    assert caught.value.path == str(packed)
    assert main(["replay", str(packed), "--quiet"]) == 1
    assert reason in capsys.readouterr().err


def test_a_gzip_bomb_is_refused_holding_at_most_its_limit(tmp_path: Path) -> None:
    """64 MiB of zeros in a 64 KiB file, read with a 4 MiB limit: refused, and the reader's
    peak memory stays within the limit plus four 1 MiB read chunks (each chunk is decompressed,
    then copied once), far below the 64 MiB it would unpack to."""
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(bytes(64 << 20), 9))
    assert bomb.stat().st_size < 128 << 10
    limit = 4 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"more than {limit} bytes"):
            read_record_bytes(bomb, limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < limit + (4 << 20), peak


def test_a_record_that_cannot_be_compressed_stays_plain_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plain = _record(tmp_path / "g000003-a0.jsonl")
    (tmp_path / "g000003-a0.jsonl.gz.tmp").mkdir()  # the temporary file cannot be written
    seats = (SeatSummary("a"), SeatSummary("b"))
    result = MatchResult("g000003-a0", 0, "normal", 1, seats, record_path=str(plain))
    with caplog.at_level(logging.WARNING):
        kept = asyncio.run(compress_record_of(result))
    assert kept.record_path == str(plain) and plain.is_file()
    assert not (tmp_path / "g000003-a0.jsonl.gz").exists()
    assert "left uncompressed" in caplog.text
    (tmp_path / "g000003-a0.jsonl.gz.tmp").rmdir()
    packed = asyncio.run(compress_record_of(result))
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
