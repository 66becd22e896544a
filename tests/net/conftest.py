"""Fixtures for the transport/process tests: leak checks for child processes and zmq sockets."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq


def child_pids(include_zombies: bool = True) -> dict[int, str]:
    """Our direct children as {pid: state letter}, read from /proc (no psutil)."""
    me = os.getpid()
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:  # vanished while we looked
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if int(fields.get("PPid", "0")) != me:
            continue
        state = fields.get("State", "?").strip()[:1]
        if include_zombies or state not in "ZX":
            found[int(entry.name)] = state
    return found


def pid_is_dead(pid: int) -> bool:
    """True if ``pid`` no longer runs: gone, or a zombie awaiting its (non-us) parent's reap."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def wait_until(predicate: Callable[[], bool], within: float = 5.0) -> float:
    """Poll ``predicate`` every 10 ms until true; return the elapsed time or fail on timeout."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > within:
            pytest.fail(f"condition not met within {within} s")
        await asyncio.sleep(0.01)
    return time.monotonic() - start


@pytest.fixture(autouse=True)
def no_leftover_children() -> Iterator[None]:
    """Fail a test that leaves a child process running (or unreaped) behind."""
    before = set(child_pids())
    yield
    deadline = time.monotonic() + 2.0
    leftovers = {p: s for p, s in child_pids().items() if p not in before}
    # Zombies may be in the middle of being reaped by asyncio's child watcher thread.
    while leftovers and all(s == "Z" for s in leftovers.values()) and time.monotonic() < deadline:
        time.sleep(0.01)
        leftovers = {p: s for p, s in child_pids().items() if p not in before}
    for pid in leftovers:  # clean up so later tests are not affected
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    assert not leftovers, f"child processes left behind: {leftovers}"


class TrackingContext(zmq.Context[zmq.Socket[bytes]]):
    """A zmq Context remembering every socket it created (strongly), to check for leaks."""

    _created: list[zmq.Socket[bytes]]

    def socket(
        self, socket_type: int, socket_class: Any = None, **kwargs: Any
    ) -> zmq.Socket[bytes]:
        """Create a socket and remember it."""
        sock: zmq.Socket[bytes] = super().socket(socket_type, socket_class, **kwargs)
        if not hasattr(self, "_created"):
            self._created = []
        self._created.append(sock)
        return sock

    def open_sockets(self) -> list[zmq.Socket[bytes]]:
        """Sockets created through this context and not closed yet."""
        return [s for s in getattr(self, "_created", []) if not s.closed]


@pytest.fixture
def zmq_context() -> Iterator[TrackingContext]:
    """A fresh context; at teardown every socket made from it must be closed."""
    ctx = TrackingContext()
    yield ctx
    leaked = ctx.open_sockets()
    ctx.destroy(linger=0)
    assert not leaked, f"zmq sockets left open: {leaked}"
