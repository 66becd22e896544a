"""The sandbox a command's bots get, as a user meets it: the level printed at start and in the
summary, a run of strangers' bots refused below ``namespaces`` unless a weaker level is named
(``--require-sandbox``, ``require_sandbox``, ``--sandbox``), an explicit ``--sandbox
namespaces`` never quietly weakened, and ``demo`` playing wherever it is installed.

Each command runs as a real process. A machine that refuses namespaces is made for one process
tree by a ``bwrap`` first on ``PATH`` that fails as bubblewrap does there.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.net.botuid import bot_range
from referee.net.mounts import UnreachableError, check_reachable
from referee.net.sandbox import SandboxLevel, detect
from tests.e2e.helpers import GREEDY, RANDOM
from tests.strangers import REPO, stranger_python

pytestmark = pytest.mark.timeout(120)

REFUSED = "bwrap: Creating new namespace failed: Operation not permitted"


def gin(*args: str, cwd: Path, refused: bool = False, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``gin-referee ARGS`` from ``cwd``; with ``refused``, on a machine refusing namespaces."""
    environ = {**os.environ, **(env or {})}
    if refused:
        fake = cwd / "refused"
        fake.mkdir(exist_ok=True)
        (fake / "bwrap").write_text(f"#!/bin/sh\necho '{REFUSED}' >&2\nexit 1\n")
        (fake / "bwrap").chmod(0o755)
        environ["PATH"] = f"{fake}:{environ['PATH']}"
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        cwd=cwd, env=environ, capture_output=True, text=True, timeout=110, check=False,
    )  # fmt: skip


def reachable(program: str) -> bool:
    """Whether a bot uid of a root referee reaches ``program`` through the host's paths."""
    try:
        check_reachable([program], None, None, bot_range().start)
    except UnreachableError:
        return False
    return True


def tournament_toml(path: Path, bots: tuple[str, str], extra: str = "") -> Path:
    """A two-bot round-robin of two games."""
    lines = ["[tournament]", 'name = "cup"', "games_per_pairing = 2", "seed = 4", extra]
    for name, command in zip(("a", "b"), bots, strict=True):
        lines += ["[[bots]]", f'name = "{name}"', f"command = {json.dumps(command)}"]
        lines += ['env = ["PYTHONPATH"]']
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A working directory other users may enter (at ``rlimits`` a root referee's bots, each a
    stranger, run in the referee's: pytest's own are 0700)."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="gin-cli-sandbox-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def needs_namespaces() -> None:
    if detect().level is not SandboxLevel.NAMESPACES:
        pytest.skip(f"THE KERNEL REFUSES THE NAMESPACES SANDBOX HERE: {detect().reason}")


def test_match_prints_its_level_at_start_and_in_the_summary(tmp_path: Path) -> None:
    needs_namespaces()
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    start = [line for line in done.stderr.splitlines() if line.startswith("sandbox: ")]
    assert len(start) == 1 and start[0].startswith("sandbox: namespaces"), done.stderr
    assert "(bwrap: " in start[0]
    level = start[0].removeprefix("sandbox: ").split(" ")[0]
    assert f"sandbox: {level}" in done.stdout.splitlines(), done.stdout


def test_check_takes_the_sandbox_options_match_takes(tmp_path: Path) -> None:
    """``--require-sandbox`` (the level printed, a weaker machine refused) and ``--bot-uids``,
    beside ``--sandbox``, ``--limit``, ``--pass-env`` and ``--expose``."""
    needs_namespaces()
    words = ["check", RANDOM, "--require-sandbox", "namespaces", "--bot-uids", "60300-60340",
             "--expose", str(tmp_path), "--limit", "open_files=128", "--json"]  # fmt: skip
    done = gin(*words, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("sandbox: namespaces"), done.stderr
    refused = gin(*words[:4], cwd=tmp_path, refused=True)
    assert refused.returncode == 2 and "--require-sandbox rlimits" in refused.stderr


def test_an_explicit_namespaces_level_is_refused_where_the_kernel_refuses_it(
    tmp_path: Path,
) -> None:
    done = gin("match", GREEDY, RANDOM, "--sandbox", "namespaces", "--out", "m", cwd=tmp_path,
               refused=True)  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr
    assert "the bots must run at sandbox level namespaces or stronger, but this machine gives" \
        " rlimits: the kernel refused namespaces (" + REFUSED in err, err  # fmt: skip
    assert "To fix it: " in err and "--require-sandbox rlimits" in err
    assert not (tmp_path / "m" / "match.jsonl").exists()  # refused before anything is played


def test_a_tournament_of_strangers_refuses_below_namespaces_unless_told(open_dir: Path) -> None:
    tmp_path = open_dir
    python, _ = stranger_python(sdk=True)
    bots = (f"{python} -m sample_bots.greedy_bot", f"{python} -m sample_bots.random_bot")
    config = tournament_toml(tmp_path / "cup.toml", bots)
    done = gin("tournament", str(config), "--out", "t1", cwd=tmp_path, refused=True)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "must run at sandbox level namespaces or stronger" in done.stderr, done.stderr
    assert not (tmp_path / "t1" / "tournament.sqlite").exists()
    done = gin("tournament", str(config), "--out", "t2", "--require-sandbox", "rlimits",
               cwd=tmp_path, refused=True, env={"PYTHONPATH": str(REPO)})  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    level = "rlimits+uid" if os.geteuid() == 0 else "rlimits"
    assert f"sandbox: {level}" in done.stderr, done.stderr
    assert "not namespaces: the kernel refused namespaces" in done.stderr
    records = sorted((tmp_path / "t2" / "games").glob("*.jsonl.gz"))
    headers = [json.loads(gzip.decompress(p.read_bytes()).splitlines()[0]) for p in records]
    (recorded,) = {h["sandbox"] for h in headers}
    assert len(headers) == 2 and recorded.startswith(level), headers
    assert f"sandbox: {recorded};" in done.stderr, done.stderr  # as printed at the start


def test_the_config_key_accepts_a_weaker_level_and_a_bad_one_names_the_key(
    open_dir: Path,
) -> None:
    tmp_path = open_dir
    python, _ = stranger_python(sdk=True)
    bots = (f"{python} -m sample_bots.greedy_bot", f"{python} -m sample_bots.random_bot")
    bad = tournament_toml(tmp_path / "bad.toml", bots, 'require_sandbox = "strong"')
    done = gin("tournament", str(bad), "--out", "tb", cwd=tmp_path, refused=True)
    assert done.returncode == 2
    assert "tournament.require_sandbox" in done.stderr and "none, rlimits, namespaces" in \
        done.stderr  # fmt: skip
    good = tournament_toml(tmp_path / "good.toml", bots, 'require_sandbox = "rlimits"')
    done = gin("tournament", str(good), "--out", "tg", cwd=tmp_path, refused=True,
               env={"PYTHONPATH": str(REPO)})  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)


def test_demo_plays_where_namespaces_are_refused_and_says_what_strangers_need(
    tmp_path: Path,
) -> None:
    done = gin("demo", "--games", "2", "--seed", "1", cwd=tmp_path, refused=True)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "match: 2 game(s), normal" in done.stdout
    assert "fault:" not in done.stdout
    if os.geteuid() == 0 and not reachable(
        sys.executable
    ):  # pyenv under a 0700 /root: the sample bots run unsandboxed, and it says so
        assert "demo: the sample bots (ours) run unsandboxed: this machine gives no namespaces" \
            in done.stderr, done.stderr  # fmt: skip
        assert "Strangers' bots need the namespaces level; to get it: " in done.stderr
        assert "sandbox: none" in done.stdout
    else:
        assert "sandbox: rlimits" in done.stdout, done.stdout


def test_none_as_root_says_the_bots_have_every_capability(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("THE REFEREE IS NOT ROOT: NONE GIVES ITS BOTS ITS OWN UID")
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--sandbox", "none", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "sandbox: none; the bots run as root with every capability" in done.stderr


def test_a_match_whose_bots_never_started_records_the_level_they_were_given(
    tmp_path: Path,
) -> None:
    needs_namespaces()
    done = gin("match", "/nonexistent/a", "/nonexistent/b", "--out", "m", cwd=tmp_path)
    assert done.returncode == 3
    header = json.loads((tmp_path / "m" / "match.jsonl").read_text().splitlines()[0])
    assert header["sandbox"] == "namespaces", header
