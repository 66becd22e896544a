"""The ladder's commands on bad input: each refusal is exit 2 with a message that says what is
wrong; ``add`` is idempotent, resolves relative paths (and refuses one that names no file),
prints a remote entrant's token once; ``list`` shows no secret."""

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
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "b.py").write_text("print()\n")
    code, text, _ = run(capsys, "ladder", "add", out, "b", "--command", f"{PY} bots/b.py", "--json")
    added = json.loads(text)
    assert code == 0 and added["new"] and added["player"] == "b.v1"
    code, text, _ = run(capsys, "ladder", "add", out, "b", "--command", f"{PY} bots/b.py")
    assert code == 0 and text.startswith("unchanged: b.v1")
    keys = write_keypair(tmp_path / "keys", "r")
    code, text, _ = run(capsys, "ladder", "add", out, "r", "--remote", "--public-key",
                        str(tmp_path / "keys" / "r.key"))  # fmt: skip
    assert code == 0 and "added r.v1 (remote" in text
    token = text.split("token: ", 1)[1].strip()
    code, text, _ = run(capsys, "ladder", "add", out, "r", "--remote",
                        f"--public-key={keys.public_z85}")  # fmt: skip
    assert code == 0 and text.startswith("unchanged: r.v1")
    code, text, _ = run(capsys, "ladder", "list", out, "--json")
    listed = json.loads(text)
    assert code == 0 and token not in text and "bots/b.py" not in text
    assert [p["player"] for p in listed["players"]] == ["b.v1", "r.v1"]
    assert [e["action"] for e in listed["log"]] == ["add", "add"]
    assert run(capsys, "ladder", "retire", out, "r")[:2] == (0, "retired r.v1\n")
    with sqlite3.connect(tmp_path / "out" / "tournament.sqlite") as conn:
        (command,) = conn.execute(
            "SELECT command FROM ladder_players WHERE player = 'b.v1'"
        ).fetchone()
    assert f"{tmp_path}/bots/b.py" in command  # runs from any directory


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
    """The README's ``ladder add`` example run where ``bots/greedy.py`` does not exist: the
    ``python3`` program is found, but its file is not; refused, named, no store made."""
    argv = [sys.executable, "-m", "referee", "ladder", "add", "runs/open-ladder", "greedy",
            "--command", "python3 bots/greedy.py"]  # fmt: skip
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "gin-referee: ladder add: --command: no such file: bots/greedy.py (relative to "
        f"{tmp_path}, where the entrant's paths are resolved)\n"
    )
    assert not (tmp_path / "runs").exists()
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "greedy.py").write_text("print()\n")
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("added greedy.v1 (local"), done
