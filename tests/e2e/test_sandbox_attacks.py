"""Attacks by real bot processes on their opponent, the referee and the machine
(tests/bots/attacker.py), each played as a real match: the sandbox stops the attack and the
victim plays on unharmed. Controls at ``--sandbox none`` show that the attacks are real."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from referee.match.bots import BotSpec
from referee.match.config import MatchConfig
from referee.match.faults import FaultKind
from referee.match.result import MatchResult
from referee.match.runner import run_match
from referee.net import cgroups
from referee.net.keys import referee_keys
from referee.net.limits import Limits
from referee.net.sandbox import SANDBOX_UID, SandboxLevel, detect
from tests.strangers import stranger_python

from .helpers import BOTS, FAST, GREEDY, PY

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

ATTACKER = f"{PY} {BOTS / 'attacker.py'}"
REPO = Path(__file__).resolve().parents[2]


def require_namespaces() -> None:
    """Where the kernel refuses namespaces, the probe must say why; then (only then) skip."""
    found = detect()
    if found.level is not SandboxLevel.NAMESPACES:
        assert found.reason, "a weaker level must come with the reason"
        pytest.skip(f"THE KERNEL REFUSES THE NAMESPACES SANDBOX HERE: {found.reason}")


async def attack(
    out: Path,
    args: str,
    *,
    sandbox: str = "auto",
    limits: Limits | None = None,
    pass_env: tuple[str, ...] = (),
    expose: tuple[str, ...] = (),
) -> tuple[MatchResult, dict[str, Any]]:
    """One game: the greedy bot (seat 0, started first) against the attacker (seat 1).
    Returns the result and the attacker's report (empty if it never reported)."""
    specs = []
    python, extra = stranger_python(sdk=True) if sandbox == "rlimits" else (PY, {})
    for text in (GREEDY, f"{ATTACKER} {args}"):
        spec = BotSpec.parse(python + text.removeprefix(PY))
        assert spec.command is not None
        command = replace(
            spec.command, sandbox=sandbox, limits=limits or Limits(), pass_env=pass_env,
            expose=expose if text != GREEDY else (), env=extra,
        )  # fmt: skip
        specs.append(replace(spec, command=command))
    # Start-up is not what these tests are about: a margin no loaded machine eats (the greedy
    # bot's imports alone took 1.4-3.3 s at load 10 on 2 cores, sandboxed or not).
    config = MatchConfig(games=1, time=replace(FAST, startup=30.0), seed=5)
    result = await run_match(config, (specs[0], specs[1]), out_dir=out, kill_grace=0.5)
    return result, attack_report(out, 1)


def attack_report(out: Path, seat: int) -> dict[str, Any]:
    """The attacker's report from the seat's stderr log (empty if it never reported)."""
    stderr = (out / f"match.seat{seat}.stderr").read_text(errors="replace")
    lines = [line for line in stderr.splitlines() if line.startswith("ATTACK ")]
    return json.loads(lines[0].removeprefix("ATTACK ")) if lines else {}


def assert_victim_unharmed(result: MatchResult) -> None:
    """Seat 0 (the greedy bot) finished the game without a fault."""
    assert result.seats[0].faults == []
    assert result.reason == "normal", result.to_dict()
    assert result.games_played == 1


async def test_auto_runs_at_the_strongest_level_and_says_so(tmp_path: Path) -> None:
    result, report = await attack(tmp_path, "inspect")
    level, *extra = result.sandbox.split("+")
    assert level == str(detect().level)
    root, usable = os.geteuid() == 0, cgroups.detect().version is not None
    expected = [*(["uid"] if root and level != "none" else [])]
    expected += ["cgroup"] if usable and level != "none" else []
    assert extra == expected, result.sandbox
    header = json.loads((tmp_path / "match.jsonl").read_text().splitlines()[0])
    assert header["sandbox"] == result.sandbox
    assert result.to_dict()["sandbox"] == result.sandbox
    assert report["uid"] is not None


async def test_token_thief_finds_no_token_and_the_victim_plays_on(tmp_path: Path) -> None:
    require_namespaces()
    result, report = await attack(tmp_path, "steal")
    assert report["tokens_found"] == 0
    assert report["pids_seen"] <= 3  # bwrap's init and the bot's own exec chain
    assert_victim_unharmed(result)
    assert result.seats[1].faults == []


async def test_without_a_sandbox_the_thief_finds_the_token(tmp_path: Path) -> None:
    # The control: without a sandbox the opponent's token is there to read. Whether the thief
    # then says hello before its victim is a race (on a quiet machine the victim often wins and
    # the thief gets token_in_use), so only the leak itself is asserted.
    result, report = await attack(tmp_path, "steal", sandbox="none")
    assert report["tokens_found"] == 1
    assert result.sandbox == "none"


async def test_assassin_cannot_signal_anyone(tmp_path: Path) -> None:
    require_namespaces()
    sentinel = await asyncio.create_subprocess_exec("sleep", "60")
    try:
        result, report = await attack(tmp_path, f"kill {sentinel.pid} {os.getpid()}")
        assert report["killed"] == []
        assert {pid for pid, _ in report["refused"]} >= {sentinel.pid, os.getpid()}
        assert sentinel.returncode is None, "the sentinel outside the sandbox was killed"
        assert_victim_unharmed(result)
    finally:
        sentinel.kill()
        assert await sentinel.wait() == -signal.SIGKILL  # killed here, not by the bot


async def test_bot_sees_only_the_allowlisted_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_FAKE_SECRET", "hunter2")
    monkeypatch.setenv("OPERATOR_NAMED", "shared on purpose")
    result, report = await attack(tmp_path, "inspect", pass_env=("OPERATOR_NAMED",))
    env = report["env"]
    assert isinstance(env, dict)
    assert "hunter2" not in json.dumps(report)
    gin = {"GIN_REFEREE_ENDPOINT", "GIN_REFEREE_TOKEN", "GIN_BOT_SEED"}
    allowed = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PWD", "OPERATOR_NAMED", *gin}
    allowed |= {"JAVA_TOOL_OPTIONS", "MALLOC_ARENA_MAX"}  # limits.runtime_env: a JVM fits
    assert gin | {"PATH", "HOME", "OPERATOR_NAMED"} <= set(env) <= allowed
    assert env["OPERATOR_NAMED"] == "shared on purpose"
    assert_victim_unharmed(result)


async def test_bot_runs_unprivileged_without_capabilities(tmp_path: Path) -> None:
    require_namespaces()
    result, report = await attack(tmp_path, "inspect")
    # a root referee's bot is a host uid of its own (tests/e2e/test_host_attacks.py)
    assert report["uid"] == (SANDBOX_UID if os.geteuid() else report["uid"])
    assert report["uid"] != 0
    assert report["cap_eff"] == "0000000000000000"
    assert report["no_new_privs"] == "1"
    assert len(report["pids"]) <= 3
    assert os.getpid() not in report["pids"]
    assert_victim_unharmed(result)


def marked_processes(marker: str) -> list[int]:
    """Host processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def test_setsid_fork_bomb_leaves_no_survivor(tmp_path: Path) -> None:
    require_namespaces()
    marker = f"bomb-{uuid.uuid4().hex}"
    result, report = await attack(tmp_path, f"forkbomb 20 {marker}")
    assert report["forked"] == 20
    assert_victim_unharmed(result)
    assert marked_processes(marker) == []


async def test_memory_hog_gets_a_crash_fault_naming_the_limit(tmp_path: Path) -> None:
    result, _ = await attack(tmp_path, "hog", sandbox="rlimits")
    assert result.sandbox.startswith("rlimits")
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.CRASH
    assert "address-space (memory) limit (2048 MiB, RLIMIT_AS)" in fault.detail
    assert "MemoryError" in fault.detail
    assert result.winner == 0


async def test_memory_hog_in_namespaces_too(tmp_path: Path) -> None:
    require_namespaces()
    limits = Limits(address_space=1 << 30)
    result, _ = await attack(tmp_path, "hog", limits=limits)
    (fault,) = result.seats[1].faults
    assert fault.kind is FaultKind.CRASH
    assert "address-space (memory) limit (1024 MiB, RLIMIT_AS)" in fault.detail


async def test_loopback_tcp_outside_the_referee_is_refused(tmp_path: Path) -> None:
    require_namespaces()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        result, report = await attack(tmp_path, f"tcp {port}")
        assert report["connected"] is False
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert_victim_unharmed(result)


async def test_bot_cannot_write_outside_its_private_dirs(tmp_path: Path) -> None:
    require_namespaces()
    name = f"pwned-{uuid.uuid4().hex}"
    repo_file, host_tmp = REPO / name, Path("/tmp") / name
    result, report = await attack(tmp_path, f"write {repo_file} {host_tmp}")
    writes = report["writes"]
    assert isinstance(writes, dict)
    assert writes[str(repo_file)] == "Read-only file system"
    assert writes[str(host_tmp)] == "written"  # its private /tmp, gone with the sandbox
    assert not repo_file.exists()
    assert not host_tmp.exists()
    assert_victim_unharmed(result)


async def test_bot_cannot_read_the_referees_output_directory() -> None:
    require_namespaces()
    # Outside /tmp (the sandbox hides the host's /tmp anyway), where a tournament keeps its
    # deal key: root's files are readable to a sandbox made by root, so the directory is hidden.
    out = Path(tempfile.mkdtemp(prefix="gin-test-out-", dir="/var/tmp"))
    try:
        key = out / "deal.key"
        key.write_text("the tournament's secret")
        key.chmod(0o600)
        result, report = await attack(out, f"read {key}")
        assert report["reads"] == {str(key): "No such file or directory"}
        assert_victim_unharmed(result)
    finally:
        shutil.rmtree(out)


async def test_bot_cannot_read_the_record_of_its_match_in_an_output_directory_made_for_it() -> None:
    require_namespaces()
    # The match makes --out: it exists before the bots start (they start before the rest of
    # the referee is imported), so the sandbox hides it; read at the first decision, when the
    # record holds the match's first lines.
    parent = Path(tempfile.mkdtemp(prefix="gin-test-out-", dir="/var/tmp"))
    out = parent / "new-out"
    try:
        record = out / "match.jsonl"
        result, report = await attack(out, f"read-late {record}")
        assert report["reads"] == {str(record): "No such file or directory"}
        assert_victim_unharmed(result)
        assert record.read_text().startswith("{")  # the record was there to be read
    finally:
        shutil.rmtree(parent)


async def test_without_a_sandbox_the_record_is_there_to_read(tmp_path: Path) -> None:
    # The control of the test above: the late read happens while the record exists.
    record = tmp_path / "out" / "match.jsonl"
    result, report = await attack(tmp_path / "out", f"read-late {record}", sandbox="none")
    assert report["reads"][str(record)].startswith("{")
    assert_victim_unharmed(result)


async def test_bot_cannot_read_the_referees_secret_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local bot of a run with remote seats must not get the referee's long-term CURVE
    secret (it could impersonate the referee to remote bots): its directory is hidden."""
    require_namespaces()
    home = Path(tempfile.mkdtemp(prefix="gin-test-keys-", dir="/var/tmp"))
    out = Path(tempfile.mkdtemp(prefix="gin-test-out-", dir="/var/tmp"))
    try:
        monkeypatch.setenv("GIN_REFEREE_HOME", str(home))
        referee_keys()  # what serve and match with remote seats load
        secret = home / "referee.key_secret"
        assert secret.exists() and "secret-key" in secret.read_text()
        result, report = await attack(out, f"read {secret}")
        assert report["reads"] == {str(secret): "No such file or directory"}
        assert_victim_unharmed(result)
    finally:
        shutil.rmtree(home)
        shutil.rmtree(out)


async def test_open_files_are_capped(tmp_path: Path) -> None:
    result, report = await attack(tmp_path, "fds", limits=Limits(open_files=128))
    assert report["error"] == "Too many open files"
    assert isinstance(report["opened"], int) and report["opened"] < 128
    assert_victim_unharmed(result)
