"""A bot killed by an outside SIGKILL is not said to have hit a limit it could not have
reached: the CPU-time limit (an hour by default) is named only once the bot's CPU use can
have reached it (referee/net/limits.py, ``limit_cause``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from referee.net.limits import Limits, limit_cause
from referee.net.process import BotProcess
from referee.net.spawn import BotCommand
from tests.cli_helpers import REPO
from tests.e2e.helpers import BOTS, PY, RANDOM
from tests.net.conftest import wait_until

pytestmark = pytest.mark.timeout(120)


def _bot_pids(marker: str) -> list[int]:
    """The bot processes (not their sandbox's bwrap) whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0] == PY.encode() and marker.encode() in argv:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_a_bot_killed_from_outside_is_not_said_to_have_hit_the_cpu_limit(
    tmp_path: Path, sandbox: str
) -> None:
    marker = f"outside-kill-{os.getpid()}-{sandbox}"
    slow = f"{PY} {BOTS / 'slow_bot.py'} 0.3 {marker}"
    referee = subprocess.Popen(
        [sys.executable, "-m", "referee", "match", slow, RANDOM, "--games", "1", "--sandbox",
         sandbox, "--log-stdout", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert referee.stdout is not None
        for line in referee.stdout:  # the log, line by line: the bot has said hello
            if "seat 0 bound to" in line:
                break
        (pid,) = _bot_pids(marker)
        os.kill(pid, signal.SIGKILL)
        out, err = referee.communicate(timeout=60)
    finally:
        if referee.poll() is None:
            referee.kill()
        referee.wait(10)
    assert referee.returncode == 0, err  # a crash is the bot's fault: a result
    (fault,) = [line for line in out.splitlines() if line.startswith("  fault:")]
    # Its exit, or first its lost connection (a stall, if the exit is seen late): either way
    # no limit is named, in the summary or the log.
    assert fault in (
        "  fault: slow_bot crash: killed by signal SIGKILL",
        "  fault: slow_bot stall: connection lost (message could not be delivered)",
    ), fault
    everything = out + err  # the summary, and the log (--log-stdout)
    assert "possibly" not in everything and "RLIMIT_CPU" not in everything, everything


@pytest.mark.asyncio
@pytest.mark.parametrize("level", ["namespaces", "none"])
async def test_the_exit_of_a_sandboxed_bot_killed_from_outside_names_no_limit(level: str) -> None:
    """The bot process alone, sandboxed as a match's (bwrap, its own PID namespace): what a
    crash fault quotes."""
    marker = f"outside-kill-{os.getpid()}-{level}"
    command = BotCommand((PY, "-c", "import sys, time; time.sleep(60)", marker), sandbox=level)
    bot = await BotProcess.start(command, env={"GIN_REFEREE_ENDPOINT": "ipc:///tmp/none/s"})
    try:
        await wait_until(lambda: bool(_bot_pids(marker)))  # bwrap starts it a moment later
        os.kill(_bot_pids(marker)[0], signal.SIGKILL)
        await bot.wait()
    finally:
        await bot.terminate()
    assert bot.exit_hint() == "killed by signal SIGKILL", bot.exit_hint()


def test_the_cpu_limit_is_named_only_once_the_bot_can_have_used_it() -> None:
    limits = Limits()  # cpu_seconds 3600
    kill, xcpu = -signal.SIGKILL, -signal.SIGXCPU
    assert limit_cause(kill, "", limits, cpu_used=2.0) is None
    # SIGXCPU is the limit's own signal: named whatever a seat's cgroup counted (on a loaded
    # machine the count was seen under the kernel's, tests/net/test_sandbox.py's CPU hog)
    assert limit_cause(xcpu, "", limits, cpu_used=2.0) == (
        "hit the CPU-time limit (3600 s, RLIMIT_CPU)"
    )
    assert limit_cause(kill, "", limits, cpu_used=3601.0) == (
        "possibly the CPU-time limit (3600 s, RLIMIT_CPU)"
    )
    assert limit_cause(xcpu, "", limits, cpu_used=3600.0) == (
        "hit the CPU-time limit (3600 s, RLIMIT_CPU)"
    )
    memory = limit_cause(kill, "MemoryError", limits, cpu_used=2.0)  # not a CPU guess: kept
    assert memory is not None and memory.startswith("possibly the address-space (memory) limit")
