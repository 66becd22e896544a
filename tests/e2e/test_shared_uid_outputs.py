"""Other runs' outputs where a bot shares the referee's uid: a root referee without
``CAP_SYS_ADMIN`` (bubblewrap in a user namespace: the bot is root's uid outside it), as a
referee that is not root is. Modes cannot stop such a bot, so every output directory a
referee of this user made is covered in the sandbox (``referee/net/private.py``, the
registry). A real attacker bot, in a real ``match`` run under ``capsh``, reads another match's
record and a tournament's ``deal.key`` in a directory the operator exposed; the control, the
same attack with an empty registry, shows it reads them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match import Deal
from referee.net.private import private_dir
from referee.tournament.dealkey import KEY_FILE, _write

from .helpers import GREEDY
from .test_sandbox_attacks import ATTACKER

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def root_with_capsh() -> None:
    if os.geteuid() != 0:
        pytest.skip("NEEDS ROOT (to drop CAP_SYS_ADMIN from a root referee)")
    if shutil.which("capsh") is None:
        pytest.skip("NO capsh (Debian's libcap2-bin; .ci/run installs it)")


def referee(
    args: list[str], state: Path, *, no_sys_admin: bool
) -> subprocess.CompletedProcess[str]:
    """``gin-referee ARGS`` with ``state`` as its registry's home, without CAP_SYS_ADMIN."""
    argv = [sys.executable, "-m", "referee", *args]
    if no_sys_admin:
        argv = ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$0" "$@"', *argv]
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=110, check=False)


def reads(out: Path) -> dict[str, str]:
    """What the attacker (seat 1) read, from its stderr log."""
    stderr = (out / "match.seat1.stderr").read_text(errors="replace")
    (line,) = [line for line in stderr.splitlines() if line.startswith("ATTACK ")]
    found: dict[str, str] = json.loads(line.removeprefix("ATTACK "))["reads"]
    return found


def test_other_runs_outputs_are_covered_for_a_bot_that_shares_the_referees_uid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, runs = tmp_path / "state", tmp_path / "runs"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # the key below registers here
    other = referee(["match", GREEDY, GREEDY, "--games", "1", "--seed", "1", "--out",
                     str(runs / "other")], state, no_sys_admin=False)  # fmt: skip
    assert other.returncode == 0, other.stderr
    key = private_dir(runs / "cup") / KEY_FILE
    _write(key, Deal.random())
    targets = [runs / "other" / "match.jsonl", key]
    attack = [f"{ATTACKER} read " + " ".join(f"@{p}" for p in targets), "--games", "1"]
    attack += ["--seed", "2", "--expose", str(runs)]
    done = referee(["match", GREEDY, *attack, "--out", str(tmp_path / "m")], state,
                   no_sys_admin=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "sandbox: namespaces+" in done.stderr and "user namespace" in done.stderr, done.stderr
    assert set(reads(tmp_path / "m").values()) == {"No such file or directory"}, reads(
        tmp_path / "m"
    )
    # The control: a referee whose registry is empty shows the bot the same files, and it
    # reads them (the attack is real: the bot is root's uid outside its namespace).
    done = referee(["match", GREEDY, *attack, "--out", str(tmp_path / "c")], tmp_path / "empty",
                   no_sys_admin=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = reads(tmp_path / "c")
    assert found[str(key)] == key.read_text()[:100], found  # (it reads 100 characters)
    assert found[str(targets[0])].startswith('{"type":"header"'), found
