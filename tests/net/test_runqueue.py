"""The run-queue meter on real processes: which of a seat's tasks are runnable now.

A wait is added to a task's ``schedstat`` delay when it ends, so the fair clock asks
:meth:`RunQueueMeter.runnable` at a deadline (referee/match/fairclock.py, "A wait in
progress"): a computing bot must count as runnable, a blocked one must not.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from referee.net.runqueue import RunQueueMeter, available

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not available(), reason="this kernel gives no per-task schedstat"),
]

SPIN = "import sys\nprint('ready', flush=True)\nwhile True: pass\n"
BLOCK = "import sys\nprint('ready', flush=True)\nsys.stdin.read()\n"


def started(code: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the meter's seat without a cgroup
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def spinner() -> Iterator[subprocess.Popen[str]]:
    yield from started(SPIN)


@pytest.fixture
def blocked() -> Iterator[subprocess.Popen[str]]:
    yield from started(BLOCK)


def settled(meter: RunQueueMeter, want: int, seconds: float = 30.0) -> int:
    """``meter.runnable()`` once it equals ``want`` (a process between its print and its next
    step may be in either state for a moment), or its last value after ``seconds``."""
    end = time.monotonic() + seconds
    count = meter.runnable()
    while count != want and time.monotonic() < end:
        count = meter.runnable()
    return count


def test_a_computing_process_is_runnable(spinner: subprocess.Popen[str]) -> None:
    meter = RunQueueMeter.create(pid=spinner.pid)
    assert meter is not None
    assert settled(meter, 1) == 1


def test_a_blocked_process_is_not(blocked: subprocess.Popen[str]) -> None:
    meter = RunQueueMeter.create(pid=blocked.pid)
    assert meter is not None
    assert settled(meter, 0) == 0


def test_a_seat_that_ended_has_no_runnable_task(spinner: subprocess.Popen[str]) -> None:
    meter = RunQueueMeter.create(pid=spinner.pid)
    assert meter is not None
    spinner.kill()
    spinner.wait()
    assert meter.runnable() == 0
