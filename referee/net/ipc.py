"""The private ``ipc://`` endpoint of the bots started on this machine, bound before the loop.

A :class:`PrivateIpc` is a fresh directory (mode 0700, from ``mkdtemp``) holding one listening
unix socket, ``referee.sock``. The socket is mode 0666 in its 0700 directory, so that bots
running as uids of their own (a root referee's) may connect and nobody else: a sandboxed bot
sees the socket file alone, bound into its filesystem (:mod:`referee.net.mounts`); at
``rlimits`` each bot's uid is let into the directory by an ACL entry of its own
(:mod:`referee.net.acl`).

It is bound with the standard library alone, so that a match
can bind it, start its bots with its address, and only then import the rest of the referee
(docs/performance.md, "Start-up"): a bot that connects while the referee is still importing
waits in the socket's accept backlog, where :class:`~referee.net.transport.RouterTransport`
finds it once it serves the socket. The transport makes its own when it is given none; either
way it owns the endpoint from then on and removes the directory when it closes.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import socket
import tempfile

from referee.net.budget import ACCEPT_BACKLOG

__all__ = ["PrivateIpc"]

logger = logging.getLogger(__name__)


@functools.cache
def _warn_once(message: str) -> None:
    """Log ``message`` the first time only: a match that tried before its loop tries again."""
    logger.warning("%s", message)


class PrivateIpc:
    """A bound, listening unix socket in a fresh private directory; see the module docstring."""

    def __init__(self, directory: str, sock: socket.socket) -> None:
        """Internal; use :meth:`open`."""
        self.directory = directory
        self.socket = sock
        self.endpoint = f"ipc://{directory}/referee.sock"
        """The address bots connect to."""

    @classmethod
    def open(cls) -> PrivateIpc | None:
        """Bind and listen; None (after a warning naming why: local bots then use TCP) when
        no private directory can be made or the path is too long for a unix socket."""
        try:
            directory = tempfile.mkdtemp(prefix="gin-referee-")
        except OSError as exc:
            _warn_once(f"no private directory for an ipc endpoint ({exc}); local bots use TCP")
            return None
        path = f"{directory}/referee.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            os.chmod(path, 0o666)  # bots of other uids connect (through the 0700 directory)
            sock.listen(ACCEPT_BACKLOG)
            sock.setblocking(False)
        except OSError as exc:  # e.g. a path too long for a unix socket
            sock.close()
            shutil.rmtree(directory, ignore_errors=True)
            where = os.path.dirname(directory)
            _warn_once(f"cannot bind an ipc endpoint in {where} ({exc}); local bots use TCP")
            return None
        return cls(directory, sock)

    def close(self) -> None:
        """Close the socket (if no server took it) and remove the directory. Idempotent."""
        self.socket.close()
        shutil.rmtree(self.directory, ignore_errors=True)
