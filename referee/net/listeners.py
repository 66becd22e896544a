"""The endpoint's listening sockets on the asyncio loop: a ``tcp://`` or ``ipc://`` address
bound here, or the private ``ipc://`` socket bound before the loop (:mod:`referee.net.ipc`).

:class:`~referee.net.transport.RouterTransport` serves each with a protocol factory (one
:class:`~referee.net.peer.PeerProtocol` per connection) and owns the servers returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from referee.net.budget import ACCEPT_BACKLOG
from referee.net.ipc import PrivateIpc
from referee.net.types import TransportError

__all__ = ["listen", "serve_private"]

Factory = Callable[[], asyncio.BaseProtocol]


async def listen(
    loop: asyncio.AbstractEventLoop, endpoint: str, factory: Factory
) -> tuple[asyncio.Server, str]:
    """Bind and serve ``endpoint``; return the server and the endpoint as bound (a TCP port
    0 or ``*`` replaced by the real one). Raises :class:`TransportError` if it cannot be
    bound."""
    try:
        if endpoint.startswith("ipc://"):
            path = endpoint[len("ipc://") :]
            server = await loop.create_unix_server(factory, path, backlog=ACCEPT_BACKLOG)
            return server, endpoint
        host, _, port = endpoint[len("tcp://") :].rpartition(":")
        host = host.strip("[]")
        server = await loop.create_server(
            factory,
            None if host in ("*", "") else host,
            0 if port in ("*", "") else int(port),
            reuse_address=True,
            backlog=ACCEPT_BACKLOG,
        )
    except (OSError, ValueError) as exc:
        raise TransportError(f"cannot bind {endpoint}: {exc}") from exc
    real_port = server.sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else (host or "*")
    return server, f"tcp://{shown}:{real_port}"


async def serve_private(
    loop: asyncio.AbstractEventLoop, ipc: PrivateIpc, factory: Factory
) -> asyncio.Server:
    """Serve the already bound private socket (connections waiting in its backlog are
    accepted now). Raises :class:`TransportError` if the loop cannot serve it."""
    try:
        return await loop.create_unix_server(factory, sock=ipc.socket)
    except OSError as exc:
        raise TransportError(f"cannot serve {ipc.endpoint}: {exc}") from exc
