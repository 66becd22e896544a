"""A closed output pipe (``gin-referee replay ... | head``): the reader has what it wanted,
which is neither a referee bug nor a failure. Every command ends quietly on it (README, "Exit
status"): :mod:`referee.cli.main` asks :func:`closed_pipe` of what ended a command, and of
the exit's flush."""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys

__all__ = ["closed_pipe", "quiet_exit", "reader_gone"]


def closed_pipe(err: BaseException) -> bool:
    """Whether ``err`` is a write to a pipe whose reader has gone (EPIPE: BrokenPipeError, or
    an OSError that says so; every one of an exception group's).

    >>> closed_pipe(BrokenPipeError()), closed_pipe(OSError(errno.ENOSPC, "full"))
    (True, False)
    """
    if isinstance(err, BaseExceptionGroup):
        return all(closed_pipe(inner) for inner in err.exceptions)
    return isinstance(err, BrokenPipeError) or (
        isinstance(err, OSError) and err.errno == errno.EPIPE
    )


def reader_gone() -> bool:
    """Whether the pipe of the standard output or error has lost its reader (``poll`` reports
    an error on a pipe's write end then): an EPIPE from elsewhere, a bot's socket say, is no
    closed output, and stays what it is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
        except (OSError, ValueError, AttributeError):  # no descriptor (a test's capture)
            continue
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0)):
            return True
    return False


def quiet_exit() -> int:
    """The status after a closed pipe, 0: the standard streams now write to ``/dev/null``, so
    that what is still buffered, and the exit's flush, go nowhere instead of failing again."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # no descriptor (a test's capture)
                os.dup2(null, stream.fileno())
    finally:
        os.close(null)
    return 0
