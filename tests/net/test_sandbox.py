"""Tests for referee.net.sandbox: limits, levels, the environment, the command line, exit
causes; and real processes ended by a limit, at each level."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from referee.net import sandbox
from referee.net.keys import referee_keys
from referee.net.limits import Limits, limit_cause
from referee.net.process import BotCommand, BotProcess, BotStartError
from referee.net.sandbox import Availability, SandboxLevel
from tests.strangers import stranger_python

pytestmark = pytest.mark.timeout(30)

MIB = 1 << 20


# ---------------------------------------------------------------- limits


def test_limits_parse_sizes_and_counts() -> None:
    limits = Limits.from_mapping({"address_space": "4G", "file_size": 1024, "cpu_seconds": 60})
    assert limits.address_space == 4 << 30
    assert limits.file_size == 1024
    assert limits.cpu_seconds == 60
    assert limits.open_files == Limits().open_files
    assert Limits.parse_items(["tmp-size=512M", "processes=10"]) == Limits(
        tmp_size=512 * MIB, processes=10
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"ram": "1G"}, "unknown limit 'ram'"),
        ({"address_space": "lots"}, "address_space: expected bytes"),
        ({"open_files": 0}, "open_files: expected a positive integer"),
        ({"cpu_seconds": True}, "cpu_seconds: expected a positive integer"),
    ],
)
def test_limits_reject_bad_input_naming_it(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Limits.from_mapping(raw)


def test_limit_items_need_key_and_value() -> None:
    with pytest.raises(ValueError, match="KEY=VALUE"):
        Limits.parse_items(["address_space"])


def test_prlimit_args_set_every_limit_and_no_core() -> None:
    args = Limits(cpu_seconds=7).prlimit_args()
    assert "--cpu=7:8" in args  # SIGXCPU at the soft limit, SIGKILL a second later
    assert "--core=0" in args
    assert f"--as={2048 * MIB}" in args
    assert {a.split("=")[0] for a in args} == {
        "--as", "--cpu", "--nproc", "--nofile", "--fsize", "--core"
    }  # fmt: skip


# ---------------------------------------------------------------- levels


def test_resolve_rejects_unknown_levels() -> None:
    with pytest.raises(ValueError, match="sandbox must be one of"):
        sandbox.resolve("chroot")
    with pytest.raises(ValueError, match="sandbox must be one of"):
        BotCommand(("bot",), sandbox="chroot")


def test_auto_is_the_strongest_level_detected() -> None:
    assert sandbox.resolve("auto") is sandbox.detect().level
    assert sandbox.resolve("none") is SandboxLevel.NONE


def test_refused_level_falls_back_with_a_warning_naming_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refused = Availability(SandboxLevel.RLIMITS, "the kernel refused namespaces (test)")
    monkeypatch.setattr(sandbox, "detect", lambda: refused)
    with caplog.at_level(logging.WARNING, logger="referee.net.sandbox"):
        assert sandbox.resolve("namespaces") is SandboxLevel.RLIMITS
    assert "sandbox namespaces unavailable: the kernel refused namespaces (test)" in caplog.text
    assert "bots run at level rlimits" in caplog.text


def test_this_machine_reports_its_level_plainly() -> None:
    found = sandbox.detect()
    assert (found.level is SandboxLevel.NAMESPACES) == (found.reason == "")


# ---------------------------------------------------------------- environment


def test_bot_env_is_the_allowlist_plus_what_is_named() -> None:
    referee = {"PATH": "/bin", "LANG": "C", "SECRET": "x", "GIN_OTHER": "y", "HOME": "/root"}
    env = sandbox.bot_env(
        referee,
        level=SandboxLevel.NAMESPACES,
        pass_env=("SECRET_NAMED", "MISSING"),
        extra={"A": "1"},
        gin={"GIN_REFEREE_TOKEN": "t"},
    )
    assert env == {
        "PATH": "/bin", "LANG": "C", "HOME": "/tmp", "TMPDIR": "/tmp", "A": "1",
        "GIN_REFEREE_TOKEN": "t",
    }  # fmt: skip
    plain = sandbox.bot_env({**referee, "SECRET_NAMED": "s"}, level=SandboxLevel.NONE,
                            pass_env=("SECRET_NAMED",))  # fmt: skip
    assert plain == {"PATH": "/bin", "LANG": "C", "HOME": "/root", "SECRET_NAMED": "s"}


# ---------------------------------------------------------------- command line


def wrapped(
    level: SandboxLevel, endpoint: str, argv: tuple[str, ...] = ("bot",), uid: int | None = None
) -> list[str]:
    launch = sandbox.wrap(argv, level=level, limits=Limits(), cwd="/", endpoint=endpoint,
                          nice=10, env={"PATH": "/bin"}, uid=uid)  # fmt: skip
    for fd in launch.pass_fds:
        os.close(fd)
    return list(launch.argv)


def test_namespaces_command_binds_only_the_ipc_socket(tmp_path: Path) -> None:
    argv = wrapped(SandboxLevel.NAMESPACES, f"ipc://{tmp_path}/referee.sock")
    assert argv[0].endswith("bwrap")
    text = " ".join(argv)
    assert "--unshare-all --unshare-user --disable-userns" in text
    assert "--share-net" not in argv
    assert f"--ro-bind-try {tmp_path}/referee.sock {tmp_path}/referee.sock" in text
    assert f"--ro-bind {tmp_path} " not in text and "--ro-bind / /" not in text
    assert "--cap-drop ALL" in text and "--die-with-parent" in text
    assert "--clearenv" in argv and "--setenv PATH /bin" in text
    assert argv[-1] == "bot" and "--core=0" in argv


def test_a_root_referees_bot_gets_a_host_uid_no_user_namespace_and_the_seccomp_filter() -> None:
    argv = wrapped(SandboxLevel.NAMESPACES, "ipc:///tmp/d/s", uid=60123)
    text = " ".join(argv)
    assert "--unshare-user" not in argv and "--unshare-pid" in argv and "--unshare-net" in argv
    assert "--seccomp" in argv
    assert "--cap-add CAP_SETUID" in text  # for setpriv inside, which drops every capability
    setuid = argv[argv.index("--") + 1 :]
    assert setuid[0].endswith("setpriv") and "--reuid=60123" in setuid
    assert "--regid=60123" in setuid and "--clear-groups" in setuid
    assert "--bounding-set=-all" in setuid and setuid[-1] == "bot"


def test_namespaces_over_tcp_keep_the_host_network() -> None:
    assert "--share-net" in wrapped(SandboxLevel.NAMESPACES, "tcp://127.0.0.1:5555")


def test_files_under_tmp_named_by_the_command_stay_visible(tmp_path: Path) -> None:
    """The directory of the bot's program is bound back, not its neighbours (another
    entrant's bot), and the referee's files in it stay hidden."""
    mine, theirs = tmp_path / "alice", tmp_path / "bob"
    mine.mkdir()
    theirs.mkdir()
    script = mine / "bot.py"
    script.write_text("")
    out = mine / "out"
    out.mkdir()
    argv = list(
        sandbox.wrap(("python3", str(script)), level=SandboxLevel.NAMESPACES, limits=Limits(),
                     cwd="/", endpoint="ipc:///tmp/d/s", nice=10, env={}, hide=(str(out),)).argv
    )  # fmt: skip
    text = " ".join(argv)
    assert f"--ro-bind {mine} {mine}" in text
    assert str(theirs) not in text and f"--ro-bind {tmp_path} " not in text
    assert text.index(f"--ro-bind {mine} {mine}") < text.index(f"--tmpfs {out}")


def test_the_referees_key_directory_is_hidden_from_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The referee's secret key file is its own uid's: a key directory inside a directory the
    bot sees (here the bot's own) is covered with an empty tmpfs; elsewhere it is not there."""
    monkeypatch.setenv("GIN_REFEREE_HOME", str(tmp_path / "default-home"))
    referee_keys(tmp_path / "keys")
    (tmp_path / "bot.py").write_text("")
    argv = " ".join(wrapped(SandboxLevel.NAMESPACES, "ipc:///tmp/d/s", ("python3", "bot.py")))
    assert "bot.py" in argv  # the command is relative to cwd "/": no such file, nothing bound
    keys = str((tmp_path / "keys").resolve())
    assert keys not in argv
    shown = sandbox.wrap(("python3", str(tmp_path / "bot.py")), level=SandboxLevel.NAMESPACES,
                         limits=Limits(), cwd="/", endpoint="", nice=10, env={})  # fmt: skip
    assert f"--tmpfs {keys}" in " ".join(shown.argv)


def test_rlimits_command() -> None:
    argv = wrapped(SandboxLevel.RLIMITS, "tcp://127.0.0.1:1")
    assert argv[0].endswith("setpriv") and "--no-new-privs" in argv
    assert ("--bounding-set=-all" in argv) == (os.geteuid() == 0)
    assert argv[argv.index("--") + 1].endswith("prlimit") and argv[-1] == "bot"
    assert "--reuid=60124" in wrapped(SandboxLevel.RLIMITS, "tcp://127.0.0.1:1", uid=60124)


# ---------------------------------------------------------------- exit causes


@pytest.mark.parametrize(
    ("rc", "stderr", "expected"),
    [
        (-signal.SIGXCPU, "", "hit the CPU-time limit (3600 s, RLIMIT_CPU)"),
        (-signal.SIGXFSZ, "", "hit the file-size limit (64 MiB, RLIMIT_FSIZE)"),
        (1, "Traceback...\nMemoryError\n", "hit the address-space (memory) limit (2048 MiB"),
        (1, "OSError: [Errno 24] Too many open files", "hit the open-files limit (256"),
        (1, "fork()\nBlockingIOError: [Errno 11] Resource temporarily unavailable",
         "hit the process limit (256, RLIMIT_NPROC)"),
        (-signal.SIGKILL, "", "possibly the CPU-time limit"),
        (-signal.SIGSEGV, "", "possibly the address-space (memory) limit"),
        (-signal.SIGABRT, "FATAL ERROR: JavaScript heap out of memory", "possibly the address"),
        (3, "crashing on purpose", None),
        (-signal.SIGTERM, "", None),
    ],
)  # fmt: skip
def test_limit_cause(rc: int, stderr: str, expected: str | None) -> None:
    cause = limit_cause(rc, stderr, Limits())
    if expected is None:
        assert cause is None
    else:
        assert cause is not None and cause.startswith(expected)


def test_bwrap_status_is_turned_back_into_signals() -> None:
    assert sandbox.bwrap_status(128 + signal.SIGXCPU) == -signal.SIGXCPU
    assert sandbox.bwrap_status(3) == 3
    assert sandbox.bwrap_status(-signal.SIGTERM) == -signal.SIGTERM


LEVELS = [SandboxLevel.RLIMITS, SandboxLevel.NAMESPACES]


def require(level: SandboxLevel) -> str:
    """Skip where the kernel refuses ``level``; else the Python to run a bot with there."""
    found = sandbox.detect()
    if found.level.rank < level.rank:
        assert found.reason
        pytest.skip(f"THE KERNEL REFUSES SANDBOX LEVEL {level} HERE: {found.reason}")
    return stranger_python()[0] if level is SandboxLevel.RLIMITS else sys.executable


@pytest.mark.asyncio
async def test_at_rlimits_a_root_referees_bot_that_cannot_reach_its_files_is_told_where(
    tmp_path: Path,
) -> None:
    """Without mounts the bot's uid walks the host's own paths: a program behind a 0700
    directory cannot start, and the start error names that directory."""
    require(SandboxLevel.RLIMITS)
    if os.geteuid() != 0:
        pytest.skip("ONLY A ROOT REFEREE RUNS BOTS AS UIDS OF THEIR OWN")
    private = tmp_path / "private"
    (private / "bin").mkdir(parents=True)
    private.chmod(0o700)
    program = private / "bin" / "bot"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    with pytest.raises(BotStartError, match=r"cannot reach .*/private/bin/bot \(/.* is mode 700\)"):
        await BotProcess.start(BotCommand((str(program),), sandbox="rlimits"))


@pytest.mark.asyncio
@pytest.mark.parametrize("level", LEVELS)
async def test_cpu_hog_is_stopped_and_named(level: SandboxLevel) -> None:
    python = require(level)
    cmd = BotCommand(
        (python, "-c", "while True: pass"), sandbox=str(level), limits=Limits(cpu_seconds=1)
    )
    bot = await BotProcess.start(cmd, env={"GIN_REFEREE_ENDPOINT": "ipc:///tmp/none/s"})
    assert bot.sandbox is level
    assert await bot.wait() == -signal.SIGXCPU
    await bot.terminate()
    assert bot.exit_hint() == ("killed by signal SIGXCPU: hit the CPU-time limit (1 s, RLIMIT_CPU)")


@pytest.mark.asyncio
@pytest.mark.parametrize("level", LEVELS)
async def test_big_file_is_stopped_and_named(level: SandboxLevel) -> None:
    python = require(level)
    path = f"/tmp/gin-test-big-{uuid.uuid4().hex}"  # the private /tmp under namespaces
    code = "import sys; open(sys.argv[1], 'wb').write(bytes(1 << 20))"
    cmd = BotCommand((python, "-c", code, path), sandbox=str(level), limits=Limits(file_size=4096))
    try:
        bot = await BotProcess.start(cmd, env={"GIN_REFEREE_ENDPOINT": "ipc:///tmp/none/s"})
        # Python ignores SIGXFSZ: the write fails with EFBIG ("File too large") instead.
        assert await bot.wait() == 1
        await bot.terminate()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    assert "File too large" in bot.stderr_tail()
    assert bot.exit_hint() == (
        "exited with code 1: hit the file-size limit (4096 bytes, RLIMIT_FSIZE)"
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("level", LEVELS)
async def test_bots_run_ten_steps_below_the_referee_in_every_level(level: SandboxLevel) -> None:
    python = require(level)
    code = "import os, sys; sys.stderr.write(str(os.getpriority(os.PRIO_PROCESS, 0)))"
    bot = await BotProcess.start(BotCommand((python, "-c", code), sandbox=str(level)))
    assert await bot.wait() == 0
    await bot.terminate()
    assert int(bot.stderr_tail()) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)


def _venv_with_marker(root: Path) -> Path:
    """A virtual environment made under ``root`` (in ``/tmp``), without pip, whose
    site-packages holds a module ``venv_marker``; returns its directory."""
    venv = root / "venv"
    subprocess.run(
        [sys._base_executable, "-m", "venv", "--without-pip", str(venv)],  # type: ignore[attr-defined]
        check=True,
        timeout=60,
    )
    (site,) = venv.glob("lib/python3*/site-packages")
    (site / "venv_marker.py").write_text("WHERE = 'inside the venv'\n")
    return venv


@pytest.mark.asyncio
async def test_a_python_from_a_venv_under_tmp_keeps_its_packages_in_the_sandbox(
    tmp_path: Path,
) -> None:
    """A venv made under ``/tmp`` (a CI job's, a user's scratch one) once lost its ``lib`` to
    the private ``/tmp``: its bots died with "No module named ...". Named by path and found on
    the bot's ``PATH``, its interpreter now runs with its packages; a neighbour stays hidden."""
    require(SandboxLevel.NAMESPACES)
    assert str(tmp_path).startswith("/tmp/")
    venv = _venv_with_marker(tmp_path)
    neighbour = tmp_path / "bob"
    neighbour.mkdir()
    (neighbour / "secret.txt").write_text("bob's strategy")
    code = (
        "import sys, venv_marker, os; print(venv_marker.WHERE, sys.prefix, file=sys.stderr); "
        f"print('bob visible' if os.path.exists({str(neighbour)!r}) else 'bob hidden', "
        "file=sys.stderr)"
    )
    for program, env in (
        (str(venv / "bin" / "python"), {}),
        ("python", {"PATH": f"{venv / 'bin'}:/usr/bin:/bin"}),
    ):
        cmd = BotCommand((program, "-c", code), sandbox="namespaces", env=env)
        bot = await BotProcess.start(cmd, env={"GIN_REFEREE_ENDPOINT": "ipc:///tmp/none/s"})
        assert bot.sandbox is SandboxLevel.NAMESPACES
        status = await bot.wait()
        await bot.terminate()
        tail = bot.stderr_tail()
        assert status == 0, tail
        assert f"inside the venv {venv}" in tail and "bob hidden" in tail


def test_a_probe_started_early_is_the_one_detect_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox._detected.cache_clear()
    expected = sandbox.detect()
    sandbox._detected.cache_clear()
    try:
        sandbox.probe_soon()
        tools = sandbox._tools()
        assert (sandbox._probe is not None) == (None not in tools.values())

        def second_probe(*args: object, **kwargs: object) -> object:
            raise AssertionError("detect ran a second probe")

        monkeypatch.setattr(subprocess, "run", second_probe)
        assert sandbox.detect() == expected
        assert sandbox._probe is None  # read and forgotten
        sandbox.probe_soon()  # the answer is known: no probe again
        assert sandbox._probe is None
    finally:
        monkeypatch.undo()
        sandbox._detected.cache_clear()
        sandbox.detect()


def test_a_probe_that_times_out_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded or paused machine can hold the probe past its limit: that answer (rlimits, for
    now) is not kept for the process's life; the next look probes again."""
    sandbox._detected.cache_clear()
    expected = sandbox.detect()
    sandbox._detected.cache_clear()
    real = sandbox._run_probe
    calls: list[str] = []

    def slow(bwrap: str) -> tuple[int, bytes]:
        calls.append(bwrap)
        if len(calls) == 1:
            raise subprocess.TimeoutExpired([bwrap], sandbox.PROBE_TIMEOUT)
        return real(bwrap)

    monkeypatch.setattr(sandbox, "_run_probe", slow)
    try:
        if None in sandbox._tools().values():
            pytest.skip("NO BWRAP/PRLIMIT/SETPRIV HERE: nothing is probed")
        first = sandbox.detect()
        assert first.level is SandboxLevel.RLIMITS and "timed out" in first.reason
        assert sandbox.detect() == expected  # probed again, and remembered now
        assert sandbox.detect() == expected and len(calls) == 2
    finally:
        monkeypatch.undo()
        sandbox._detected.cache_clear()
        sandbox.detect()
