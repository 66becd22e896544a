"""A reader that closes the pipe early (``gin-referee replay ... | head``) ends every printing
command quietly: exit 0, no traceback, no "referee bug" (README, "Exit status")."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_helpers import REPO, gin
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(120)


def closed_reader(*args: str, cwd: Path = REPO) -> tuple[int, str]:
    """``gin-referee ARGS... | (exec 0<&-; true)``: its stdout a pipe whose reader is gone
    before the command writes a byte. Its exit status and stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "referee", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            timeout=90,
            check=False,
        )
    finally:
        os.close(write)
    return done.returncode, done.stderr


def assert_quiet(code: int, err: str) -> None:
    """A closed pipe is the reader's choice: exit 0, and nothing said about it."""
    assert code == 0, err
    assert "Traceback" not in err and "referee bug" not in err and "BrokenPipe" not in err, err


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-game match's record: its replay prints more than a pipe holds."""
    out = tmp_path_factory.mktemp("m1")
    greedy = f"{PY} -m sample_bots.greedy_bot"
    done = gin("match", greedy, greedy, "--games", "2", "--seed", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out / "match.jsonl"


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A played tournament's directory (two bots, two games)."""
    out = tmp_path_factory.mktemp("cup")
    config = out / "cup.toml"
    config.write_text(
        textwrap.dedent(f"""\
            [tournament]
            name = "pipe-cup"
            games_per_pairing = 2
            seed = 4
            concurrency = 1
            [[bots]]
            name = "greedy"
            command = "{PY} -m sample_bots.greedy_bot"
            [[bots]]
            name = "random"
            command = "{PY} -m sample_bots.random_bot"
            """)
    )
    done = gin("tournament", str(config), "--out", str(out / "run"))
    assert done.returncode == 0, done.stderr
    return out / "run"


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ladder's directory with one entrant."""
    out = tmp_path_factory.mktemp("ladder")
    done = gin("ladder", "add", str(out), "greedy", "--command", f"{PY} -m sample_bots.greedy_bot")
    assert done.returncode == 0, done.stderr
    return out


def test_replay_into_a_closed_pipe_is_quiet(record: Path) -> None:
    assert_quiet(*closed_reader("replay", str(record)))
    assert_quiet(*closed_reader("replay", str(record), "--quiet"))  # short: at the exit's flush


def test_keygen_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    assert_quiet(*closed_reader("keygen", "--key-dir", str(tmp_path)))
    assert_quiet(*closed_reader("keygen", "--bot", "alice", "--out", str(tmp_path)))


def test_results_into_a_closed_pipe_is_quiet(cup: Path) -> None:
    for fmt in ("table", "csv", "json"):
        assert_quiet(*closed_reader("results", str(cup), "--format", fmt))


@pytest.mark.parametrize(
    "action",
    [["list"], ["list", "--json"], ["deals"], ["history"], ["rounds"], ["rounds", "--json"]],
)
def test_ladder_listings_into_a_closed_pipe_are_quiet(ladder: Path, action: list[str]) -> None:
    args = ["ladder", action[0], str(ladder), *(["greedy.v1"] if action == ["history"] else [])]
    assert_quiet(*closed_reader(*args, *action[1:]))


def test_check_json_into_a_closed_pipe_is_quiet() -> None:
    code, err = closed_reader("check", f"{PY} -m sample_bots.greedy_bot", "--json")
    assert_quiet(code, err)


def test_a_closed_pipe_after_a_head_is_quiet_too(record: Path) -> None:
    """``| head -1``: the reader takes a line, then goes."""
    head = subprocess.run(
        f"{sys.executable} -m referee replay {record} | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=90,
        check=False,
    )
    assert head.returncode == 0 and head.stdout.count("\n") == 1, head
    assert_quiet(head.returncode, head.stderr)


@pytest.mark.expect_error_log
def test_an_epipe_that_is_not_the_output_pipe_is_still_a_referee_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot's socket, say: the output's reader is there, so the quiet end does not apply."""
    cli_main = importlib.import_module("referee.cli.main")  # (the package exports main())

    def broken(args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli_main, "_command", broken)
    assert cli_main.main(["keygen"]) == 70
    assert "internal error (a referee bug): BrokenPipeError" in capsys.readouterr().err
