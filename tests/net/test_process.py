"""Tests for referee.net.process with real subprocesses."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from referee.net.process import BotCommand, BotProcess, BotStartError
from referee.net.sandbox import SandboxLevel
from referee.net.spawn import spawn

from .conftest import pid_is_dead, wait_until

pytestmark = pytest.mark.timeout(20)

PY = sys.executable


def py(code: str, *args: str) -> BotCommand:
    """A bot command running ``python -c code`` outside any sandbox: these tests are about
    the process mechanics (tests/net/test_sandbox.py runs them in each sandbox level)."""
    return BotCommand((PY, "-c", code, *args), sandbox="none")


def open_fds() -> set[str]:
    """File descriptors currently open in this process."""
    return set(os.listdir("/proc/self/fd"))


async def wait_for_marker(bot: BotProcess, pattern: str) -> re.Match[str]:
    """Wait until the bot's stderr tail matches ``pattern``."""
    await wait_until(lambda: re.search(pattern, bot.stderr_tail(4096)) is not None)
    match = re.search(pattern, bot.stderr_tail(4096))
    assert match is not None
    return match


# ---------------------------------------------------------------- BotCommand


def test_parse_splits_like_a_shell() -> None:
    cmd = BotCommand.parse("python3 my_bot.py --name 'Gin Bot' \"x y\"")
    assert cmd.argv == ("python3", "my_bot.py", "--name", "Gin Bot", "x y")
    assert cmd.cwd is None
    assert dict(cmd.env) == {}


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_parse_rejects_empty(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        BotCommand.parse(text)


def test_parse_rejects_unbalanced_quote() -> None:
    with pytest.raises(ValueError, match="cannot parse bot command"):
        BotCommand.parse("node 'bot.js")


def test_command_is_immutable_and_hashable() -> None:
    env = {"A": "1"}
    cmd = BotCommand.parse("node bot.js", cwd="/tmp", env=env)
    env["A"] = "2"
    assert cmd.env["A"] == "1"
    with pytest.raises(TypeError):
        cmd.env["B"] = "3"  # type: ignore[index]
    assert cmd == BotCommand(("node", "bot.js"), "/tmp", {"A": "1"})
    assert hash(cmd) == hash(BotCommand(("node", "bot.js"), "/tmp", {"A": "1"}))
    with pytest.raises(ValueError, match="empty"):
        BotCommand(())


# ---------------------------------------------------------------- start / exit


@pytest.mark.asyncio
async def test_exit_code_hint() -> None:
    bot = await BotProcess.start(py("import sys; sys.stderr.write('bye'); sys.exit(3)"))
    assert await bot.wait() == 3
    assert bot.exit_hint() == "exited with code 3"
    assert bot.stderr_tail() == "bye"  # wait() lets the capture reach EOF
    assert await bot.terminate() == 3  # harmless on a dead bot
    assert bot.exit_hint() == "exited with code 3"
    with pytest.raises(ProcessLookupError):
        os.kill(bot.pid, 0)  # reaped, not a zombie


@pytest.mark.asyncio
async def test_bots_run_below_the_referee_priority_in_their_own_group() -> None:
    code = (
        "import os, sys; sys.stderr.write(f'{os.getpriority(os.PRIO_PROCESS, 0)} {os.getpgrp()}')"
    )
    bot = await BotProcess.start(py(code))
    assert await bot.wait() == 0
    nice, group = bot.stderr_tail().split()
    assert int(nice) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    assert int(group) == bot.pid != os.getpgrp()


PARENT = """
import asyncio, sys
from referee.net.process import BotCommand, BotProcess

async def main():
    sleeper = BotCommand((sys.executable, "-c", "import time; time.sleep(60)"), sandbox="none")
    bot = await BotProcess.start(sleeper)
    print(bot.pid, flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


@pytest.mark.asyncio
async def test_bots_die_with_a_referee_killed_by_sigkill() -> None:
    assert shutil.which("setpriv"), "util-linux's setpriv gives this guarantee: install it"
    referee = await asyncio.create_subprocess_exec(
        PY, "-c", PARENT, stdout=asyncio.subprocess.PIPE, cwd=Path(__file__).parents[2]
    )
    assert referee.stdout is not None
    bot_pid = int(await referee.stdout.readline())
    assert not pid_is_dead(bot_pid)
    # setpriv arms the parent-death signal and then execs the bot: wait for the exec, else a
    # referee killed in the first milliseconds (a loaded CI machine) dies before setpriv has
    # armed anything (the window docs/tournaments.md mentions).
    await wait_until(lambda: "setpriv" not in os.readlink(f"/proc/{bot_pid}/exe"))
    referee.kill()
    assert await referee.wait() == -signal.SIGKILL
    await wait_until(lambda: pid_is_dead(bot_pid))


@pytest.mark.asyncio
async def test_signal_hint() -> None:
    code = (
        "import os, resource, signal\n"
        "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
        "os.kill(os.getpid(), signal.SIGSEGV)\n"
    )
    bot = await BotProcess.start(py(code))
    assert await bot.wait() == -signal.SIGSEGV
    assert bot.exit_hint() == "killed by signal SIGSEGV"
    await bot.terminate()


@pytest.mark.asyncio
async def test_running_hint_and_pgid() -> None:
    bot = await BotProcess.start(py("import signal; signal.pause()"))
    try:
        assert bot.returncode is None
        assert bot.exit_hint() == "still running"
        assert bot.pgid == bot.pid
        assert os.getpgid(bot.pid) == bot.pid
        assert os.getsid(bot.pid) == os.getsid(0)  # same session: same scheduling autogroup
        assert os.getpgid(bot.pid) != os.getpgid(0)
        assert os.getpriority(os.PRIO_PROCESS, bot.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 5
    finally:
        assert await bot.terminate() == -signal.SIGTERM
    assert bot.exit_hint() == "killed by signal SIGTERM (terminated by the referee)"


@pytest.mark.asyncio
async def test_environment_layering_and_cwd(tmp_path: Path) -> None:
    code = "import os, sys; sys.stderr.write(repr((os.getcwd(), os.environ.get('A'), os.environ.get('B'), os.environ.get('C'))))"  # noqa: E501
    cmd = BotCommand((PY, "-c", code), str(tmp_path), {"A": "cmd", "B": "cmd"}, ("C",), "none")
    base = {"A": "base", "C": "base", "D": "secret"}
    bot = await BotProcess.start(cmd, base_env=base, env={"B": "referee"})
    await bot.wait()
    await bot.terminate()
    assert bot.stderr_tail() == repr((str(tmp_path), "cmd", "referee", "base"))


@pytest.mark.asyncio
async def test_merge_stdout() -> None:
    code = "import sys; print('out', flush=True); sys.stderr.write('err')"
    bot = await BotProcess.start(py(code), merge_stdout=True)
    await bot.wait()
    await bot.terminate()
    assert bot.stderr_tail() == "out\nerr"
    kept = await BotProcess.start(py(code))  # before its hello, stdout is kept
    await kept.wait()
    await kept.terminate()
    assert "out\n" in kept.stderr_tail() and "err" in kept.stderr_tail()
    assert kept.stdout_kept == 4


@pytest.mark.asyncio
async def test_stdout_is_dropped_once_the_bot_said_hello(tmp_path: Path) -> None:
    go = tmp_path / "go"
    os.mkfifo(go)
    code = "import sys; open(sys.argv[1]).read(); print('x' * 100000); sys.stderr.write('err')"
    bot = await BotProcess.start(py(code, str(go)))
    bot.stop_keeping_stdout()  # as the match does at its hello
    await asyncio.to_thread(go.write_text, "")  # opened once the bot reads it: then it prints
    await bot.wait()
    await bot.terminate()
    assert bot.stderr_tail() == "err" and bot.stdout_kept == 0


# ---------------------------------------------------------------- start failures


@pytest.mark.asyncio
async def test_missing_executable_raises_bot_start_error() -> None:
    fds = open_fds()
    with pytest.raises(BotStartError, match="executable not found") as info:
        await BotProcess.start(BotCommand.parse("/nonexistent/bot --fast"))
    assert info.value.argv == ("/nonexistent/bot", "--fast")
    assert not isinstance(info.value, OSError)
    assert isinstance(info.value.__cause__, FileNotFoundError)
    with pytest.raises(BotStartError, match="executable not found"):
        await BotProcess.start(BotCommand.parse("no-such-bot-program-xyz"))
    assert open_fds() == fds  # the stderr pipe was closed


@pytest.mark.asyncio
async def test_permission_denied_raises_bot_start_error(tmp_path: Path) -> None:
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    with pytest.raises(BotStartError, match="permission denied") as info:
        await BotProcess.start(BotCommand((str(script),)))
    assert info.value.reason.startswith("permission denied")


@pytest.mark.asyncio
async def test_bad_cwd_raises_bot_start_error(tmp_path: Path) -> None:
    with pytest.raises(BotStartError, match="working directory not found"):
        await BotProcess.start(BotCommand((PY, "-c", "pass"), str(tmp_path / "missing")))


# ---------------------------------------------------------------- stderr capture


@pytest.mark.asyncio
async def test_stderr_flood_is_bounded(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "chunk = b'x' * 65536\n"
        "for _ in range(160):\n"  # 10 MiB
        "    sys.stderr.buffer.write(chunk)\n"
        "sys.stderr.buffer.write(b'\\nEND\\n')\n"
    )
    log = tmp_path / "bot.stderr"
    started = time.monotonic()
    bot = await BotProcess.start(py(code), stderr_path=log, stderr_cap=1 << 20)
    assert await bot.wait() == 0
    assert bot.stderr_tail(4) == "END\n"  # complete right after wait()
    await bot.terminate()
    assert time.monotonic() - started < 10
    tail = bot.stderr_tail(10_000)
    assert len(tail.encode()) == 4096
    assert tail.endswith("x\nEND\n")
    assert bot.stderr_tail(4) == "END\n"
    data = log.read_bytes()
    assert data.startswith(b"x" * 1000)
    assert data.endswith(b"[gin-referee: stderr log truncated]\n")
    assert len(data) < (1 << 20) + 100


@pytest.mark.asyncio
async def test_endless_stderr_flood_can_be_terminated() -> None:
    code = "import sys\nwhile True:\n    sys.stderr.buffer.write(b'y' * 65536)\n"
    bot = await BotProcess.start(py(code))
    await wait_until(lambda: len(bot.stderr_tail(100_000)) == 4096)  # it floods: a full tail
    assert await bot.terminate(grace=1.0) == -signal.SIGTERM
    assert len(bot.stderr_tail(100_000)) == 4096


@pytest.mark.asyncio
async def test_stderr_tail_decodes_with_replacement() -> None:
    bot = await BotProcess.start(py("import sys; sys.stderr.buffer.write(b'ok\\xff\\xfe!')"))
    await bot.wait()
    await bot.terminate()
    assert bot.stderr_tail() == "ok\ufffd\ufffd!"
    assert bot.stderr_tail(1) == "!"
    assert bot.stderr_tail(0) == ""


# ---------------------------------------------------------------- terminate

_GRANDCHILD = """
import os, signal, sys, time
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write(f"grandchild={os.getpid()}\\n")
    sys.stderr.flush()
    while True:
        signal.pause()
signal.pause()
"""


@pytest.mark.asyncio
async def test_terminate_kills_grandchild_ignoring_sigterm() -> None:
    bot = await BotProcess.start(py(_GRANDCHILD))
    try:
        grandchild = int((await wait_for_marker(bot, r"grandchild=(\d+)\n")).group(1))
        assert os.getpgid(grandchild) == bot.pgid
    finally:
        rc = await bot.terminate(grace=2.0)
    assert rc == -signal.SIGTERM  # the bot itself obeyed SIGTERM at once
    with pytest.raises(ProcessLookupError):
        os.kill(bot.pid, 0)  # the bot was reaped: no zombie
    # The grandchild got SIGKILL; it is reparented to init, which reaps it when it likes.
    await wait_until(lambda: pid_is_dead(grandchild), within=5)


@pytest.mark.asyncio
async def test_terminate_escalates_to_sigkill() -> None:
    code = (
        "import signal, sys\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
        "while True:\n"
        "    signal.pause()\n"
    )
    bot = await BotProcess.start(py(code))
    await wait_for_marker(bot, "ready")
    started = time.monotonic()
    assert await bot.terminate(grace=0.3) == -signal.SIGKILL
    assert time.monotonic() - started >= 0.3
    assert bot.exit_hint() == "killed by signal SIGKILL (terminated by the referee)"


@pytest.mark.asyncio
async def test_terminate_cancelled_during_its_grace_still_kills_the_group() -> None:
    # The CLI's shutdown deadline may cancel a teardown while it waits out the SIGTERM grace:
    # a bot that ignores SIGTERM must not survive that (it did, and the CLI test saw it).
    code = (
        "import os, signal\n"
        "signal.signal(signal.SIGTERM, lambda *_: os.write(2, b'term\\n'))\n"
        "os.write(2, b'ready\\n')\n"
        "while True:\n"
        "    signal.pause()\n"
    )
    bot = await BotProcess.start(py(code))
    await wait_for_marker(bot, "ready")
    ending = asyncio.ensure_future(bot.terminate(grace=30.0))
    await wait_for_marker(bot, "term")  # SIGTERM delivered: terminate waits out the grace
    ending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ending
    assert await asyncio.wait_for(bot.wait(), 5) == -signal.SIGKILL
    assert await bot.terminate() == -signal.SIGKILL  # reaps, closes the capture


@pytest.mark.asyncio
async def test_terminate_stopped_bot() -> None:
    bot = await BotProcess.start(py("import signal; signal.pause()"))
    os.kill(bot.pid, signal.SIGSTOP)
    # SIGCONT lets it act on the pending SIGTERM, so no escalation is needed.
    started = time.monotonic()
    assert await bot.terminate(grace=5.0) == -signal.SIGTERM
    assert time.monotonic() - started < 2.0


@pytest.mark.asyncio
async def test_terminate_twice_and_concurrently() -> None:
    bot = await BotProcess.start(py("import signal; signal.pause()"))
    first, second = await asyncio.gather(bot.terminate(), bot.terminate())
    assert first == second == -signal.SIGTERM
    assert await bot.terminate() == -signal.SIGTERM
    assert await bot.wait() == -signal.SIGTERM


@pytest.mark.asyncio
async def test_async_context_manager_terminates() -> None:
    async with await BotProcess.start(py("import signal; signal.pause()")) as bot:
        assert bot.returncode is None
    assert bot.returncode == -signal.SIGTERM


_ESCAPEE = """
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.setsid()  # leaves the bot's process group, keeps the stderr pipe
    sys.stderr.write(f"escapee={os.getpid()}\\n")
    sys.stderr.flush()
    while True:
        signal.pause()
signal.pause()
"""


@pytest.mark.asyncio
async def test_terminate_returns_even_if_an_escapee_holds_stderr() -> None:
    """A grandchild that left the group survives (documented), but cannot wedge terminate."""
    bot = await BotProcess.start(py(_ESCAPEE))
    escapee = 0
    try:
        escapee = int((await wait_for_marker(bot, r"escapee=(\d+)\n")).group(1))
        async with asyncio.timeout(5):
            assert await bot.terminate(grace=0.5) == -signal.SIGTERM
    finally:
        if escapee:
            os.kill(escapee, signal.SIGKILL)
        await bot.terminate(grace=0)
    await wait_until(lambda: pid_is_dead(escapee), within=5)


# ---------------------------------------------------------------- the exit watch


@pytest.mark.asyncio
async def test_the_exit_is_watched_through_a_pidfd_that_is_closed_after_it() -> None:
    fds = open_fds()
    bot = await BotProcess.start(py("import sys; sys.exit(4)"))
    assert await bot.wait() == 4
    await bot.terminate()
    assert open_fds() == fds  # the pidfd and the pipe closed
    with pytest.raises(ProcessLookupError):
        os.kill(bot.pid, 0)  # reaped


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["exits", "is_terminated"])
async def test_without_pidfds_a_thread_watches_the_exit(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")  # ENOSYS: a kernel before 5.3

    monkeypatch.setattr(os, "pidfd_open", refused)
    code = "import sys; sys.exit(5)" if how == "exits" else "import time; time.sleep(60)"
    bot = await BotProcess.start(py(code))
    if how == "exits":
        assert await bot.wait() == 5
        assert await bot.terminate() == 5
    else:
        assert bot.returncode is None
        assert await bot.terminate(grace=0.5) == -signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(bot.pid, 0)  # reaped by the thread


@pytest.mark.asyncio
async def test_a_started_bot_nobody_adopts_is_killed_and_reaped() -> None:
    spawned = spawn(py("import time; time.sleep(60)"), level=SandboxLevel.NONE)
    fds = open_fds()
    spawned.kill()
    spawned.kill()  # idempotent
    assert spawned.popen.returncode == -signal.SIGKILL
    assert len(open_fds()) == len(fds) - 2  # its pipes' read ends closed
    with pytest.raises(ProcessLookupError):
        os.kill(spawned.popen.pid, 0)


def exited_unreaped(pid: int) -> None:
    """Wait until the child ``pid`` has exited, leaving it a zombie (not reaped)."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


@pytest.mark.asyncio
async def test_a_bot_adopted_later_keeps_what_it_wrote_before() -> None:
    spawned = spawn(
        py("import sys; sys.stderr.write('early words'); sys.exit(0)"), level=SandboxLevel.NONE
    )
    exited_unreaped(spawned.popen.pid)  # it has written and exited before the loop takes it
    bot = await BotProcess.adopt(spawned)
    assert await bot.wait() == 0
    assert bot.stderr_tail() == "early words"
    spawned.kill()  # adopted: the adopter's, nothing happens
    assert await bot.terminate() == 0
