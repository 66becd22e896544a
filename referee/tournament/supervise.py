"""The worker processes a ``tournament --workers N`` or ``ladder run --workers N`` starts on its
machine, watched while it runs: each one that ends is reaped at once and its exit status
logged; one that did not end cleanly (exit status other than 0, or a signal: SIGKILL, the OOM
killer, a crash) is started again after a back-off that doubles from :data:`FIRST_BACKOFF` to
:data:`MOST_BACKOFF` while it keeps dying young (it resets once one lives
:data:`HEALTHY_AFTER` seconds). A worker that exits 0 has nothing left to play (a tournament's
last game is taken): it is not replaced. The game a dead worker held is claimed again once
its lease expires (docs/tournaments.md, "Workers").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import time
from collections.abc import Callable

__all__ = ["FIRST_BACKOFF", "HEALTHY_AFTER", "MOST_BACKOFF", "Supervisor", "exit_text"]

logger = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
MOST_BACKOFF = 60.0
HEALTHY_AFTER = 60.0
REAP_WITHIN = 10.0
"""Seconds a worker asked to stop has before it is killed (it aborts its games at once and
exits within about 6 s)."""


def exit_text(status: int) -> str:
    """``exit status 3`` or ``killed by SIGKILL``, for a ``Popen.returncode``."""
    if status < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-status).name}"
        return f"killed by signal {-status}"
    return f"exit status {status}"


class Supervisor:
    """``count`` worker processes made by ``start_one``, kept running until :meth:`stop`."""

    def __init__(
        self,
        count: int,
        start_one: Callable[[], subprocess.Popen[bytes]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.count, self.start_one, self.clock = count, start_one, clock
        self.children: list[subprocess.Popen[bytes]] = []
        """Every worker process started, dead or alive, in the order started."""
        self.restarts = 0
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start the workers and their watchers (on the running loop)."""
        for slot in range(self.count):
            self._tasks.append(asyncio.create_task(self._watch(slot), name=f"worker-{slot}"))

    async def _watch(self, slot: int) -> None:
        backoff = FIRST_BACKOFF
        while not self._stopping.is_set():
            child = self.start_one()
            self.children.append(child)
            began = self.clock()
            status = await asyncio.to_thread(child.wait)
            if self._stopping.is_set():
                return
            lived = self.clock() - began
            if status == 0:
                logger.info("worker %d (pid %d) ended: exit status 0", slot, child.pid)
                return
            backoff = FIRST_BACKOFF if lived >= HEALTHY_AFTER else backoff
            logger.warning(
                "worker %d (pid %d) ended after %.0f s: %s; starting another in %g s",
                slot, child.pid, lived, exit_text(status), backoff,
            )  # fmt: skip
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), backoff)
            if self._stopping.is_set():
                return
            self.restarts += 1
            backoff = min(MOST_BACKOFF, backoff * 2)

    async def stop(self) -> None:
        """Ask every live worker to finish its hands and stop (SIGTERM), kill those still
        running after :data:`REAP_WITHIN`, and reap them all."""
        self._stopping.set()
        for child in self.children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in self.children:
            try:
                await asyncio.to_thread(child.wait, REAP_WITHIN)
            except subprocess.TimeoutExpired:
                child.kill()
                await asyncio.to_thread(child.wait)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
