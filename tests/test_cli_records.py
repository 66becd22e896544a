"""One rule for a record's exit status in every command that reads one: a file that cannot be
read as a record (cut mid-line, not JSON) is bad input, 2, with a complete message; a record
that is read but does not verify is 1; ``replay --feed`` with a bot that cannot start is 3
(README, "Exit status"; docs/records.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import gin
from tests.e2e.helpers import GREEDY, PY, RANDOM

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-game match's record."""
    out = tmp_path_factory.mktemp("m")
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--seed", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out / "match.jsonl"


def test_a_record_cut_mid_line_is_bad_input_everywhere_and_says_so_whole(
    record: Path, tmp_path: Path
) -> None:
    lines = record.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:3]) + lines[3][:40])
    for command in (["replay"], ["view"], ["replay", "--feed", GREEDY, "--seat", "0"]):
        done = gin(*command[:1], str(cut), *command[1:])
        assert done.returncode == 2, (command, done.stderr)
        assert f"cannot read the record: {cut}:4: not JSON (" in done.stderr, done.stderr
        assert done.stderr.rstrip().endswith(
            "; the file may be cut short (its last line is incomplete)"
        ), done.stderr
    assert not (tmp_path / "cut.html").exists()


def test_a_record_that_reads_but_does_not_verify_is_1_everywhere(
    record: Path, tmp_path: Path
) -> None:
    lines = record.read_text().splitlines(keepends=True)
    hand = next(i for i, line in enumerate(lines) if '"type":"hand"' in line)
    lines[hand] = lines[hand].replace('"points":', '"points":1', 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines))
    for command in (["replay"], ["view"], ["replay", "--feed", GREEDY, "--seat", "0"]):
        done = gin(*command[:1], str(bad), *command[1:])
        assert done.returncode == 1, (command, done.stderr)
        assert f"record does not verify: {bad}:{hand + 1}:" in done.stderr, done.stderr


def test_feeding_a_bot_that_cannot_start_exits_3(record: Path) -> None:
    done = gin("replay", str(record), "--seat", "1", "--feed", f"{PY} nosuch_bot.py")
    assert done.returncode == 3, done.stderr
    assert "gin-referee: the bot could not start: startup:" in done.stderr, done.stderr
    assert "nosuch_bot.py" in done.stderr
