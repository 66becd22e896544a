"""The ladder's commands on bad input: each refusal is exit 2 with a message that says what is
wrong; ``add`` is idempotent, snapshots a local entrant's directory (and refuses a command
naming a file outside it, or none there), prints a remote entrant's token once; ``list``
shows the versions' files' digests and no secret."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.net.keys import write_keypair
from referee.tournament.store import SqliteStore
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(60)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def test_add_retire_list(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    out = str(tmp_path / "out")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bots" / "b").mkdir(parents=True)
    (tmp_path / "bots" / "b" / "b.py").write_text("print()\n")
    b = ["--bot-dir", "bots/b", "--command", f"{PY} b.py"]
    code, text, _ = run(capsys, "ladder", "add", out, "b", *b, "--json")
    added = json.loads(text)
    assert code == 0 and added["new"] and added["player"] == "b.v1"
    snapshot = tmp_path / "out" / "entrants" / added["files"] / "files"
    assert (snapshot / "b.py").read_text() == "print()\n"  # its copy, read-only
    code, text, _ = run(capsys, "ladder", "add", out, "b", *b)
    assert code == 0 and text == (
        f"unchanged: b.v1 (local, fingerprint {added['fingerprint']}, files"
        f" {added['files'][:16]}: 1 file, 8 bytes)\n"
    )
    keys = write_keypair(tmp_path / "keys", "r")
    code, text, _ = run(capsys, "ladder", "add", out, "r", "--remote", "--public-key",
                        str(tmp_path / "keys" / "r.key"))  # fmt: skip
    assert code == 0 and "added r.v1 (remote" in text
    token = text.split("token: ", 1)[1].strip()
    code, text, _ = run(capsys, "ladder", "add", out, "r", "--remote",
                        f"--public-key={keys.public_z85}")  # fmt: skip
    assert code == 0 and text.startswith("unchanged: r.v1")
    (tmp_path / "bots" / "b" / "b.py").write_text("print('v2')\n")  # a new version
    code, text, _ = run(capsys, "ladder", "add", out, "b", *b, "--json")
    assert code == 0 and json.loads(text)["player"] == "b.v2"
    code, text, _ = run(capsys, "ladder", "list", out, "--json")
    listed = json.loads(text)
    assert code == 0 and token not in text and "bots/b" not in text
    assert [p["player"] for p in listed["players"]] == ["b.v1", "r.v1", "b.v2"]
    assert listed["players"][0]["files"] == added["files"] and listed["players"][1]["files"] is None
    assert [e["action"] for e in listed["log"]] == ["add", "add", "add"]
    assert f"files {added['files'][:16]}" in listed["log"][0]["detail"]
    code, text, _ = run(capsys, "ladder", "list", out)
    assert f"{'b.v1':<24} local  superseded {added['fingerprint']} {added['files'][:16]}" in text
    assert run(capsys, "ladder", "retire", out, "r")[:2] == (0, "retired r.v1\n")
    with sqlite3.connect(tmp_path / "out" / "tournament.sqlite") as conn:
        (command,) = conn.execute(
            "SELECT command FROM ladder_players WHERE player = 'b.v1'"
        ).fetchone()
    assert command == f"{PY} b.py"  # run in its snapshot, as given


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["add", "{out}", "x"], "give --command CMD (a local entrant) or --remote"),
        (["add", "{out}", "x", "--remote", "--command", "true"], "one or the other"),
        (["add", "{out}", "x.v1", "--command", "true"], "entrant name 'x.v1'"),
        (["add", "{out}", "x", "--remote", "--public-key", "nope"], "--remote-key x"),
        (["add", "{out}", "x", "--remote", "--token", "short"], "8 or more printable"),
        (["add", "{out}", "x", "--command", "'unclosed"], "command"),
        (["add", "{out}", "x", "--command", "no-such-program-here --x"], "cannot find the program"),
        (
            ["add", "{out}", "x", "--command", f"{PY} {__file__}"],
            "a file outside the bot's directory",
        ),
        (["add", "{out}", "x", "--command", f"{PY} tests/x.py"], "--bot-dir DIR"),
        (
            ["add", "{out}", "x", "--bot-dir", "{out}/../n", "--command", "true"],
            "no such directory",
        ),
        (
            [
                "add",
                "{out}",
                "x",
                "--bot-dir",
                str(Path(__file__).parent),
                "--command",
                f"{PY} ../../conftest.py",
            ],
            "leaves the bot's directory",
        ),
        (
            [
                "add",
                "{out}",
                "x",
                "--bot-dir",
                str(Path(__file__).parent),
                "--command",
                f"{PY} {__file__}",
            ],
            "name the bot's own files relative to its directory",
        ),
        (
            ["add", "{out}", "x", "--bot-dir", "/etc", "--command", "true", "--max-files", "2"],
            "more than 2 entries",
        ),
        (
            ["add", "{out}", "x", "--bot-dir", "/etc", "--command", "true", "--max-size", "1K"],
            "over the limit",
        ),
        (["add", "{out}", "x", "--bot-dir", "/etc"], "give --command CMD"),
        (
            ["add", "{out}", "x", "--bot-dir", "{out}/..", "--command", "true"],
            "holds or lies in the referee's private",
        ),  # the ladder's own directory, its key
        (["add", "{out}", "x", "--remote", "--bot-dir", "/etc"], "--bot-dir is a local entrant's"),
        (["retire", "{out}", "x"], "no ladder store here"),
        (["list", "{out}"], "no ladder store here"),
        (["rounds", "{out}"], "no ladder store here"),
    ],
)
def test_bad_input_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             argv: list[str], message: str) -> None:  # fmt: skip
    words = [w.format(out=tmp_path / "out") for w in argv]
    code, _, err = run(capsys, "ladder", *words)
    assert code == 2 and message in err, err


def test_a_tournament_store_is_no_ladder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SqliteStore.open(tmp_path / "tournament.sqlite")
    store.init_tournament(config={"x": 1}, config_hash="h", games=[], now=0.0)
    store.close()
    code, _, err = run(capsys, "ladder", "add", str(tmp_path), "x", "--command", "true")
    assert code == 2 and "holds a tournament, not a ladder" in err
    code, _, err = run(capsys, "results", str(tmp_path), "--ladder")
    assert code == 2 and "holds no ladder" in err
    assert run(capsys, "ladder", "retire", str(tmp_path / "x"), "y")[0] == 2


def test_ladder_run_refuses_a_bad_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "l.toml"
    config.write_text("[ladder]\nconcurrency = 0\n")
    code, _, err = run(capsys, "ladder", "run", str(config), "--out", str(tmp_path / "o"))
    assert code == 2 and "ladder.concurrency: must be between 1 and 256" in err
    code, _, err = run(capsys, "ladder", "run", str(tmp_path / "none.toml"))
    assert code == 2 and "cannot read" in err
    config.write_text("[[bots]]\nname = 'a'\n")
    code, _, err = run(capsys, "ladder", "run", str(config), "--out", str(tmp_path / "o"))
    assert code == 2 and "gin-referee ladder add" in err
    assert run(capsys, "ladder")[0] == 2  # no action
    code, _, err = run(capsys, "ladder", "run", str(config), "--spectate-lag", "-1")
    assert code == 2 and "--spectate-lag: must be 0 or more seconds" in err


def test_a_command_naming_a_missing_file_is_refused_before_anything_is_recorded(
    tmp_path: Path,
) -> None:
    """The README's ``ladder add`` example run where ``bots/greedy`` has no ``greedy.py``: the
    ``python3`` program is found, but its file is not; refused, named, no store made. Then
    with the file: added, its directory snapshotted."""
    argv = [sys.executable, "-m", "referee", "ladder", "add", "runs/open-ladder", "greedy",
            "--bot-dir", "bots/greedy", "--command", "python3 ./greedy.py"]  # fmt: skip
    (tmp_path / "bots" / "greedy").mkdir(parents=True)
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "gin-referee: ladder add: --command: no such file: ./greedy.py (in "
        f"{tmp_path}/bots/greedy)\n"
    )
    assert not (tmp_path / "runs").exists()
    (tmp_path / "bots" / "greedy" / "greedy.py").write_text("print()\n")
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("added greedy.v1 (local"), done
    assert "files " in done.stdout and ": 1 file, 8 bytes)" in done.stdout
