"""What every long-running command shares: signals, the shutdown deadline, descriptors.

:func:`run_stoppable` runs a command's work with SIGINT and SIGTERM turned into its ``stop``
event. Setting ``stop`` aborts the matches in progress at once (each bot gets an ``error`` with
code ``shutdown``, ``match_end`` and ``bye``, see :mod:`referee.match.play`), and the teardown
that follows ends every bot process group (SIGTERM, SIGKILL after 1 s). The work normally ends
well within :data:`SHUTDOWN_DEADLINE`; if it has not by then, it is cancelled (a bot process
being torn down is SIGKILLed even then), so the command exits within about 6 s of the signal.

:func:`raise_fd_limit` lifts the soft ``RLIMIT_NOFILE`` to the hard limit at start: every
connection costs the referee a descriptor, and running out must not stop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["SHUTDOWN_DEADLINE", "raise_fd_limit", "run_stoppable"]

LOGGER = logging.getLogger(__name__)
T = TypeVar("T")

SHUTDOWN_DEADLINE = 5.0
"""Seconds from the signal until work that is still running is cancelled."""


async def run_stoppable(
    work: Coroutine[Any, Any, T], stop: asyncio.Event, *, notice: str
) -> tuple[T | None, bool]:
    """Run ``work`` with SIGINT/SIGTERM setting ``stop``; returns (its result, or None if it
    had to be cancelled at the deadline; whether a signal arrived). ``notice`` is printed to
    stderr when a signal arrives before the work ended."""
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()

    def on_signal() -> None:
        signalled.set()
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    task = asyncio.ensure_future(work)
    try:
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stopper
        if not task.done():
            if signalled.is_set():
                print(notice, file=sys.stderr, flush=True)
            done, _ = await asyncio.wait({task}, timeout=SHUTDOWN_DEADLINE)
            if not done:
                LOGGER.warning("shutdown: work still running after %.0f s; cancelling it",
                               SHUTDOWN_DEADLINE)  # fmt: skip
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                return None, signalled.is_set()
        return task.result(), signalled.is_set()
    finally:
        if not task.done():  # cancelled from outside: take the work down with us
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (logged once); returns (soft, hard)
    as they are afterwards. Bots started in a sandbox get their own ``open_files`` limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        LOGGER.info("open files limit: %d (soft = hard)", soft)
        return soft, hard
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as err:  # e.g. a hard limit above the kernel's nr_open
        LOGGER.warning("open files limit stays %d (raising it to %d failed: %s)", soft, hard, err)
        return soft, hard
    LOGGER.info("open files limit raised from %d to the hard limit %d", soft, hard)
    return hard, hard
