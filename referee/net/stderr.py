"""A bot process's stderr: the read side of its pipe keeps a bounded tail in memory (for the
fault that quotes it) and appends to a size-capped log file (the seat's ``.stderr`` file).
What a fault quotes of it is :mod:`referee.net.quoting`'s.

Its stdout, until it said hello, is kept the same way, in the same tail and file, as it
arrives (:class:`StdoutSink`): a program that reports why it cannot start on stdout (a JVM that
dies before ``main``, a shell script's ``echo``) is quoted in its start-up fault. After the
hello its stdout is read and dropped, as ``/dev/null`` would: it is no channel of the
protocol."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import BinaryIO

from referee.net.private import private_opener

__all__ = ["StderrSink", "StdoutSink", "open_log"]

logger = logging.getLogger(__name__)

_TRUNCATED_MARK = b"\n[gin-referee: stderr log truncated]\n"


class StderrSink(asyncio.Protocol):
    """Read side of the stderr pipe: bounded in-memory tail plus a size-capped log file."""

    def __init__(self, tail_bytes: int, log: BinaryIO | None, log_cap: int) -> None:
        self.tail = bytearray()
        self.total = 0
        self.closed = asyncio.Event()
        self.transport: asyncio.BaseTransport | None = None
        self._tail_bytes = tail_bytes
        self._log = log
        self._log_left = log_cap

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.total += len(data)
        keep = self._tail_bytes
        if len(data) >= keep:
            self.tail[:] = data[-keep:]
        else:
            self.tail += data
            if len(self.tail) > keep:
                del self.tail[:-keep]
        if self._log is not None:
            self._write_log(data)

    def _write_log(self, data: bytes) -> None:
        log = self._log
        if log is None:
            return
        try:
            if len(data) <= self._log_left:
                log.write(data)
                self._log_left -= len(data)
            else:
                log.write(data[: self._log_left])
                log.write(_TRUNCATED_MARK)
                self._close_log()
        except OSError as exc:
            logger.warning("cannot write bot stderr log: %s", exc)
            self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def eof_received(self) -> bool | None:
        return None  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._close_log()
        self.closed.set()


class StdoutSink(asyncio.Protocol):
    """Read side of the stdout pipe: what arrives goes to ``into`` (the stderr sink) while
    :attr:`keeping`, and is dropped afterwards."""

    def __init__(self, into: StderrSink) -> None:
        self.into = into
        self.keeping = True
        self.kept = 0
        """Bytes of stdout kept."""
        self.closed = asyncio.Event()
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.keeping:
            self.kept += len(data)
            self.into.data_received(data)

    def stop(self) -> None:
        """Stop keeping; what the pipe already holds (written before the hello, not read yet
        by the loop) is kept first, up to 64 KiB."""
        if not self.keeping:
            return
        pipe = None if self.transport is None else self.transport.get_extra_info("pipe")
        if pipe is not None:
            with contextlib.suppress(OSError):  # BlockingIOError: nothing waits there
                data = os.read(pipe.fileno(), 1 << 16)
                if data:
                    self.data_received(data)
        self.keeping = False

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set()


def open_log(path: Path) -> BinaryIO | None:
    """Open a bot's stderr log for appending (a quick local open, fine on the loop)."""
    try:
        return open(path, "ab", opener=private_opener)  # closed by the stderr sink
    except OSError as exc:
        logger.warning("cannot open bot stderr log %s: %s", path, exc)
        return None
