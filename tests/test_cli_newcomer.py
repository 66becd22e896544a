"""What a newcomer meets first: a bot that cannot start, a reused ``--out``, ``demo`` run
twice, ``replay``'s numbering (from 1) and names, ``sprt --help``."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli import main
from tests.e2e.helpers import GREEDY, PY, RANDOM

pytestmark = pytest.mark.timeout(120)


def test_a_bot_that_cannot_start_exits_3_and_its_error_is_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["match", GREEDY, f"{PY} -m no_such_bot_module", "--games", "1"]) == 3
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("  fault:")]
    assert line.endswith("No module named no_such_bot_module"), line
    assert "startup" in line and "Traceback" not in line
    assert "Python module 'no_such_bot_module' not found" in line and "activate the venv" in line


def test_reusing_out_is_refused_and_the_earlier_run_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["match", "/nonexistent/a", "/nonexistent/b", "--out", str(tmp_path)]) == 3
    record = (tmp_path / "match.jsonl").read_text()
    log = (tmp_path / "referee.log.jsonl").read_text()
    capsys.readouterr()
    assert main(["match", GREEDY, RANDOM, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path} already holds an earlier run (match.jsonl, referee.log.jsonl" in err
    assert (tmp_path / "match.jsonl").read_text() == record
    assert (tmp_path / "referee.log.jsonl").read_text() == log
    # another match id in the same directory would still share the log: refused as well
    assert main(["match", GREEDY, RANDOM, "--out", str(tmp_path), "--match-id", "m2"]) == 2


def test_demo_twice_writes_two_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--games", "1", "--seed", "3"]) == 0
    assert main(["demo", "--games", "1", "--seed", "3"]) == 0
    first, second = (tmp_path / "runs" / name / "match.jsonl" for name in ("demo", "demo-2"))
    assert first.read_text() and second.read_text()
    out = capsys.readouterr().out
    assert f"record: {Path('runs/demo/match.jsonl')}" in out
    assert f"record: {Path('runs/demo-2/match.jsonl')}" in out


def test_replay_numbers_from_one_and_names_the_bots_as_given_their_hello_a_detail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["match", GREEDY, RANDOM, "--games", "1", "--seed", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "match.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "numbered from 1, as on the replay pages; the record counts from 0" in out
    assert "game 1 hand 1: " in out and "game 1: " in out
    assert "game 0" not in out and "hand 0" not in out and "game 2 " not in out
    assert "greedy_bot calls itself greedy-bot" in out and "random_bot: " in out
    assert "sample_bots" not in out


def test_sprt_help_says_what_it_does_and_shows_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["sprt", "--help"]) == 0
    out = capsys.readouterr().out
    assert "sequential probability ratio test" in out
    for shown in ("(default: 20.0)", "(default: 0.05)", "(default: 2000)", "(default: runs/sprt)"):
        assert shown in out
    assert "(default: None)" not in out


def test_bad_input_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 (never 70, "a referee bug") for what the user typed wrong, before ``--out`` is
    touched: a bind that cannot be bound, an --out that is a file, an unusable key file, a bad
    log option, a lease of 0."""
    out = tmp_path / "out"
    assert main(["match", GREEDY, RANDOM, "--bind", "tcp://127.0.0.1:notaport", "--local-transport",
                 "tcp", "--out", str(out)]) == 2  # fmt: skip
    assert "--bind tcp://127.0.0.1:notaport: expected tcp://HOST:PORT" in capsys.readouterr().err
    assert not out.exists()
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    assert main(["match", GREEDY, RANDOM, "--out", str(a_file / "sub")]) == 2
    assert "Not a directory" in capsys.readouterr().err
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    (keys / "referee.key_secret").write_text("not a certificate")
    (keys / "referee.key_secret").chmod(0o600)
    args = ["match", GREEDY, "remote:bob", "--remote-key", "bob=" + "a" * 40, "--key-dir",
            str(keys), "--out", str(out)]  # fmt: skip
    assert main(args) == 2
    assert "referee.key_secret" in capsys.readouterr().err
    assert not (out / "referee.log.jsonl").exists()  # the same command works once fixed
    config = tmp_path / "t.toml"
    config.write_text(
        f'[tournament]\nname = "t"\n[[bots]]\nname = "a"\ncommand = "{GREEDY}"\n'
        f'[[bots]]\nname = "b"\ncommand = "{RANDOM}"\n'
    )
    assert main(["tournament", str(config), "--out", str(out), "--log-level", "bogus"]) == 2
    assert main(["tournament", str(config), "--out", str(out), "--lease", "0"]) == 2
    assert "must be more than 0 seconds" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_a_store_error_during_play_is_named_not_a_referee_bug() -> None:
    """The tournament's game slots run in a TaskGroup: a store that fails mid-run (a database
    gone) reaches the commands as the StoreError itself, which they report with exit 2."""
    import asyncio
    from typing import cast

    from referee.cli.tournament import run_with_signals
    from referee.tournament.runner import TournamentRun
    from referee.tournament.store import StoreError

    class Failing:
        async def run(self) -> None:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.slot())

        async def slot(self) -> None:
            raise StoreError("postgresql://db/gin", "the server closed the connection")

    with pytest.raises(StoreError, match="the server closed the connection"):
        await run_with_signals(cast(TournamentRun, Failing()), asyncio.Event())


def test_version_is_printed_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("gin-referee 0.")


def test_help_shows_every_clock_default_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for option, default in (("--move-time", "1.0"), ("--bank", "30.0"), ("--grace", "0.05")):
        assert f"{option} {option.lstrip('-').upper().replace('-', '_')} " in text
        assert f"(default: {default})" in text, option
    assert "least severe log records kept (default info)" in text
    assert main(["sprt", "--help"]) == 0
    sprt = " ".join(capsys.readouterr().out.split())
    assert "(default 64M)" in sprt and "(default: 67108864)" not in sprt


def test_log_level_is_checked_and_any_case_is_taken(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", GREEDY, RANDOM, "--games", "1", "--log-level", "loud"]) == 2
    assert "invalid choice: 'loud'" in capsys.readouterr().err
    assert main(["match", GREEDY, RANDOM, "--games", "1", "--log-level", "WARNING"]) == 0


@pytest.mark.parametrize(
    "command",
    [["replay"], ["replay", "--verify"], ["view"], ["replay", "--seat", "0", "--feed", "true"]],
)
def test_a_missing_or_unreadable_record_is_a_usage_error_everywhere(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main([command[0], str(missing), *command[1:]]) == 2
    assert f"{missing}: no such record file" in capsys.readouterr().err
    assert main([command[0], str(tmp_path), *command[1:]]) == 2
    assert "is a directory, not a record file" in capsys.readouterr().err


def test_check_of_a_bot_that_never_starts_prints_its_checklist_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "/nonexistent/bot"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("check of bot:\n")
    assert "{'" not in captured.out + captured.err  # no raw log record
    (ids,) = [line for line in captured.out.splitlines() if "request_ids" in line]
    assert "[SKIP]" in ids and "answered no request" in ids


NO_CURVE_BOT = """
import os, msgpack, zmq
sock = zmq.Context().socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 0)
sock.connect(os.environ["GIN_REFEREE_ENDPOINT"])  # no CURVE: GIN_REFEREE_SERVER_KEY ignored
hello = {"type": "hello", "protocol_version": 1, "name": "plain",
         "token": os.environ["GIN_REFEREE_TOKEN"]}
sock.send(msgpack.packb(hello))
sock.poll(20000)
"""


@pytest.mark.parametrize("command", ["match", "check"])
def test_a_bot_without_curve_over_tcp_is_told_about_the_key(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over ``--local-transport tcp`` the referee requires CURVE: a bot that ignores
    ``GIN_REFEREE_SERVER_KEY`` never gets its hello through, and the fault says why."""
    tmp_path.chmod(0o755)  # a root referee's bot reads its own files as a uid of its own
    bot = tmp_path / "plain.py"
    bot.write_text(NO_CURVE_BOT)
    plain = f"{PY} {bot}"
    tcp = ["--local-transport", "tcp", "--startup-time", "6"]
    args = [plain, GREEDY, "--games", "1"] if command == "match" else [plain]
    assert main([command, *args, *tcp]) in (1, 3)
    out = capsys.readouterr().out
    assert "no hello within 6.0 s" in out, out
    assert "(1 connection(s) did not complete the CURVE handshake: over tcp://" in out
    assert "GIN_REFEREE_SERVER_KEY" in out
