"""The command line: exit codes, summaries, replay verification, bad input, signals."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.cli import main
from tests.e2e.helpers import BOTS, GREEDY, RANDOM, bad
from tests.strangers import stranger_python

pytestmark = pytest.mark.timeout(120)


def test_match_json_summary_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["match", GREEDY, RANDOM, "--games", "2", "--json", "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["schema_version"] == 1 and summary["games_played"] == 2
    # Named as the command line names them; what the bots call themselves is a detail.
    assert summary["winner_name"] == "greedy_bot"
    assert [(s["name"], s["self_name"]) for s in summary["seats"]] == [
        ("greedy_bot", "greedy-bot"),
        ("random_bot", "random-bot"),
    ]
    assert (tmp_path / "referee.log.jsonl").exists()
    code = main(["replay", str(tmp_path / "match.jsonl")])
    out = capsys.readouterr().out
    assert code == 0 and "verified:" in out and "complete" in out and "hand 1" in out


@pytest.mark.parametrize("transport", ["ipc", "tcp"])
def test_local_transport_flag(tmp_path: Path, transport: str) -> None:
    tracker = f"{sys.executable} {BOTS / 'tracker.py'} inline"
    args = ["match", tracker, tracker, "--games", "1", "--out", str(tmp_path)]
    assert main([*args, "--local-transport", transport]) == 0
    for seat in (0, 1):
        assert f"connecting over {transport}" in (tmp_path / f"match.seat{seat}.stderr").read_text()


@pytest.mark.parametrize("level", ["none", "rlimits"])
def test_sandbox_limit_and_pass_env_flags(
    tmp_path: Path, level: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAMED_FOR_BOTS", "yes")
    monkeypatch.setenv("NOT_NAMED", "secret")
    python, extra = stranger_python(sdk=True) if level == "rlimits" else (sys.executable, {})
    for name, value in extra.items():  # Debian's python finds the SDK through PYTHONPATH
        monkeypatch.setenv(name, value)
    attacker = f"{python} {BOTS / 'attacker.py'} fds"
    greedy = f"{python} -m sample_bots.greedy_bot"
    args = ["match", greedy, attacker, "--games", "1", "--json", "--out", str(tmp_path)]
    flags = ["--sandbox", level, "--limit", "open_files=64", "--pass-env", "NAMED_FOR_BOTS"]
    flags += [arg for name in extra for arg in ("--pass-env", name)]
    assert main([*args, *flags]) == 0
    assert json.loads(capsys.readouterr().out)["sandbox"].startswith(level)
    line = (tmp_path / "match.seat1.stderr").read_text().split("ATTACK ", 1)[1]
    opened = json.loads(line.splitlines()[0])["opened"]
    assert (opened < 64) == (level != "none"), opened  # --limit applies only in a sandbox
    header = json.loads((tmp_path / "match.jsonl").read_text().splitlines()[0])
    assert header["sandbox"].startswith(level)


def test_readable_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", GREEDY, GREEDY, "--games", "1", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "greedy_bot-A" in out and "greedy_bot-B" in out and "winner: greedy_bot-" in out
    assert "greedy_bot-A calls itself greedy-bot\n" in out  # (the hello's name, as it was)
    assert out.startswith("match: 1 game(s), normal\n")  # the id once, not "match match:"


def test_replay_rejects_a_tampered_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["match", GREEDY, RANDOM, "--games", "1", "--out", str(tmp_path)]) == 0
    record = tmp_path / "match.jsonl"
    lines = record.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["type"] == "hand" and rec["result"]["winner"] is not None:
            rec["result"]["points"] += 1
            lines[i] = json.dumps(rec)
            bad_line = i + 1
            break
    record.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["replay", str(record)]) == 1
    err = capsys.readouterr().err
    assert f"match.jsonl:{bad_line}:" in err and "result mismatch" in err


@pytest.mark.parametrize(
    ("content", "words", "code"),
    [
        ("", "empty record", 1),
        ("{not json\n", "not JSON", 2),  # cannot be read as a record: bad input
        ('{"type":"hand"}\n', "must be the header", 1),
    ],
)
def test_replay_names_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, words: str, code: int
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(content)
    assert main(["replay", str(path)]) == code
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--rules", "gin"], "unknown rules preset 'gin'"),
        (["--games", "0"], "games must be between"),
        (["--move-time", "-1"], "time control move"),
        (["--local-transport", "udp"], "invalid choice: 'udp'"),
        (["--sandbox", "chroot"], "invalid choice: 'chroot'"),
        (["--limit", "ram=1G"], "unknown limit 'ram'"),
        (["--limit", "cpu_seconds"], "--limit expects KEY=VALUE"),
        (["--limit", "open_files=-3"], "open_files: expected a positive integer"),
    ],
)
def test_bad_flags_are_named(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["match", GREEDY, RANDOM, *args]) == 2
    assert words in capsys.readouterr().err


def test_unknown_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournement"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'tournement'" in err
    assert "'match'" in err and "'tournament'" in err  # every command is listed


cli_main = importlib.import_module("referee.cli.main")  # the package's ``main`` is the function


def _options(parser: argparse.ArgumentParser) -> dict[str, list[tuple[str, ...]]]:
    """Each command's options (their flags, or the positional's name) in ``parser``."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: [tuple(a.option_strings) or (a.dest,) for a in command._actions]
        for name, command in subs.choices.items()
    }


def test_a_command_line_builds_its_own_commands_options_alone_and_the_same() -> None:
    every = _options(cli_main._parser(["--help"]))
    assert {"match", "demo", "tournament", "replay", "keygen", "check", "view"} <= set(every)
    for name, options in every.items():
        assert _options(cli_main._parser([name, "x"])) == {name: options}
    assert _options(cli_main._parser(["tournement"])) == every  # a typo: all, to list them


def _pids_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_sigterm_stops_the_referee_and_kills_a_bot_that_ignores_sigterm(tmp_path: Path) -> None:
    marker = "987654"
    stubborn = bad("ignore_term", int(marker))
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee", "match", stubborn, RANDOM, "--games", "50",
         "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    record = tmp_path / "match.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and '"type":"hand"' not in (
        record.read_text() if record.exists() else ""
    ):
        time.sleep(0.05)  # another process's progress: nothing to await
    assert _pids_with(marker), "the stubborn bot should be running"
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not _pids_with(marker)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[-1]["type"] == "match_end" and lines[-1]["interrupted"] is True
    assert os.path.getsize(record) > 0


def test_keygen_prints_the_referee_key_and_makes_bot_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = ["--key-dir", str(tmp_path / "home")]
    assert main(["keygen", *home]) == 0
    referee_key = capsys.readouterr().out.strip()
    assert main(["keygen", *home]) == 0 and capsys.readouterr().out.strip() == referee_key
    assert len(referee_key) == 40
    assert main(["keygen", "--bot", "alice", "--out", str(tmp_path / "bots")]) == 0
    captured = capsys.readouterr()
    bot_key = captured.out.strip()
    assert f'public_key = "{bot_key}"' in captured.err and bot_key != referee_key
    assert (tmp_path / "bots" / "alice.key_secret").stat().st_mode & 0o777 == 0o600
    assert main(["keygen", "--bot", "alice", "--out", str(tmp_path / "bots")]) == 2
    assert "alice.key_secret: already exists" in capsys.readouterr().err
    os.chmod(tmp_path / "home" / "referee.key_secret", 0o644)
    assert main(["match", GREEDY, "remote:alice", "--remote-key", f"alice={bot_key}", *home]) == 2
    assert "referee.key_secret: the secret key file is accessible by others" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["remote:alice"], "remote seat 'alice' needs --remote-key alice=KEY"),
        (["remote:alice", "--remote-key", f"bob={'a' * 40}"], "--remote-key bob: no remote seat"),
        (["remote:alice", "--remote-key", "alice=nope"], "--remote-key alice: expected 40 Z85"),
    ],
)
def test_a_remote_seat_needs_a_valid_key_unless_insecure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    assert main(["match", GREEDY, *args, "--key-dir", str(tmp_path)]) == 2
    assert words in capsys.readouterr().err


def test_a_tournament_with_unkeyed_remote_bots_needs_insecure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        '[[bots]]\nname = "alice"\nremote = true\ntoken = "alice-token"\n'
        f'[[bots]]\nname = "greedy"\ncommand = "{GREEDY}"\n'
    )
    for command in ("serve", "tournament"):
        code = main([command, str(config), "--key-dir", str(tmp_path / "home")])
        assert code == 2
        assert "remote bot(s) alice need a public_key" in capsys.readouterr().err


def test_a_bad_bot_uid_range_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["match", GREEDY, GREEDY, "--games", "1", "--bot-uids", "5-9"]) == 2
    assert "bot uids: 5 is a system uid" in capsys.readouterr().err


def test_what_a_match_writes_is_its_users_alone(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "m1"
    assert main(["match", GREEDY, RANDOM, "--games", "1", "--out", str(out)]) == 0
    assert main(["view", str(out / "match.jsonl")]) == 0
    written = [tmp_path / "runs", out, *out.iterdir()]
    assert {p.name for p in written} >= {"match.jsonl", "match.html", "referee.log.jsonl"}
    assert {p.stat().st_mode & 0o777 for p in written} <= {0o700, 0o600}, [
        (p.name, oct(p.stat().st_mode)) for p in written
    ]
