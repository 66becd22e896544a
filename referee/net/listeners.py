"""The endpoint's listening sockets on the asyncio loop: a ``tcp://`` or ``ipc://`` address
bound here, or the private ``ipc://`` socket bound before the loop (:mod:`referee.net.ipc`).

The referee accepts connections itself rather than through ``loop.create_server``: asyncio
makes a task, a transport and a protocol for every connection it accepts, before the
application can see where it comes from, which under a storm of connections from one address
cost the referee's own games more than the handshakes it saved (docs/security.md,
"Measured"). A :class:`Listener` accepts up to :data:`ACCEPT_BACKLOG` connections per turn of
the loop and hands each socket, with its source address, to the transport, which closes a
refused one at once (nothing read, nothing written, no object made for it) or serves it
(``loop.connect_accepted_socket``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import stat
from collections.abc import Callable

from referee.net.budget import ACCEPT_BACKLOG
from referee.net.ipc import PrivateIpc
from referee.net.types import TransportError

__all__ = ["Accept", "Listener", "listen", "serve_private", "unix_peer"]

logger = logging.getLogger(__name__)

Accept = Callable[[socket.socket, str], None]
"""Called with each accepted (non-blocking) socket and its source address: an IP address, or
``pid:N`` (``ipc`` when unknown) on a unix socket; it owns the socket from then on."""

ACCEPT_RETRY_S = 1.0
"""How long accepting pauses when the process is out of descriptors or memory (as asyncio)."""
_OUT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class Listener:
    """Listening sockets served on the loop: each accepted connection goes to ``accept``."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sockets: list[socket.socket], accept: Accept
    ) -> None:
        self.loop = loop
        self.sockets = sockets
        self._accept = accept
        self._closed = False
        for sock in sockets:
            sock.setblocking(False)
            loop.add_reader(sock.fileno(), self._ready, sock)

    def _ready(self, sock: socket.socket) -> None:
        """Accept what is waiting, up to a backlog's worth (the rest on the next turn)."""
        unix = sock.family == socket.AF_UNIX
        for _ in range(ACCEPT_BACKLOG):
            try:
                conn, address = sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as exc:
                if exc.errno not in _OUT_OF:
                    logger.debug("accept on %s failed: %s", sock.getsockname(), exc)
                    return
                logger.warning(
                    "cannot accept a connection (%s); again in %g s", exc, ACCEPT_RETRY_S
                )
                self.loop.remove_reader(sock.fileno())
                self.loop.call_later(ACCEPT_RETRY_S, self._resume, sock)
                return
            conn.setblocking(False)
            self._accept(conn, unix_peer(conn) if unix else str(address[0]))

    def _resume(self, sock: socket.socket) -> None:
        if not self._closed:
            self.loop.add_reader(sock.fileno(), self._ready, sock)

    def close(self) -> None:
        """Stop accepting and close the listening sockets (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for sock in self.sockets:
            if sock.fileno() >= 0:
                self.loop.remove_reader(sock.fileno())
            sock.close()


def unix_peer(sock: socket.socket) -> str:
    """``pid:N`` of a unix-socket peer (SO_PEERCRED), or ``ipc`` if unknown."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    except (OSError, AttributeError):
        return "ipc"
    return f"pid:{int.from_bytes(creds[:4], 'little')}"


def listen(loop: asyncio.AbstractEventLoop, endpoint: str, accept: Accept) -> tuple[Listener, str]:
    """Bind and serve ``endpoint``; return the listener and the endpoint as bound (a TCP port
    0 or ``*`` replaced by the real one). Raises :class:`TransportError` if it cannot be
    bound."""
    sockets: list[socket.socket] = []
    try:
        if endpoint.startswith("ipc://"):
            sockets.append(_bind_unix(endpoint[len("ipc://") :]))
            return Listener(loop, sockets, accept), endpoint
        host, _, port = endpoint[len("tcp://") :].rpartition(":")
        host = host.strip("[]")
        number = 0 if port in ("*", "") else int(port)
        for family, kind, proto, _, address in socket.getaddrinfo(
            None if host in ("*", "") else host,
            number,
            type=socket.SOCK_STREAM,
            flags=socket.AI_PASSIVE,
        ):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(ACCEPT_BACKLOG)
    except (OSError, ValueError) as exc:
        for sock in sockets:
            sock.close()
        raise TransportError(f"cannot bind {endpoint}: {exc}") from exc
    real_port = sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else (host or "*")
    return Listener(loop, sockets, accept), f"tcp://{shown}:{real_port}"


def _bind_unix(path: str) -> socket.socket:
    """A unix socket listening at ``path`` (a stale socket file there is removed first)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.stat(path).st_mode):
            os.remove(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        sock.listen(ACCEPT_BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def serve_private(loop: asyncio.AbstractEventLoop, ipc: PrivateIpc, accept: Accept) -> Listener:
    """Serve the already bound private socket (connections waiting in its backlog are
    accepted now)."""
    return Listener(loop, [ipc.socket], accept)
