"""Where a remote bot can connect: a ``--bind`` on a wildcard address (``tcp://0.0.0.0:5555``,
``tcp://*:5555``) is no address to connect to, so the referee names this host's own addresses
instead, with the port (README, "Playing matches")."""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import Callable

__all__ = ["connect_to", "token_notice"]

_WILDCARDS = {"0.0.0.0": socket.AF_INET, "*": socket.AF_INET, "[::]": socket.AF_INET6}


def token_notice(server_key: str) -> Callable[[str, str, str], None]:
    """What ``match`` prints of a remote seat (on stderr): where to connect, its token and the
    referee's key (``server_key``; empty: ``--insecure``)."""

    def notice(name: str, endpoint: str, token: str) -> None:
        key = f"; referee key {server_key}" if server_key else " (--insecure: no CURVE)"
        where = connect_to(endpoint)
        print(f"remote seat {name}: connect to {where} with token {token}{key}", file=sys.stderr)

    return notice


def connect_to(endpoint: str) -> str:
    """What to tell a remote bot of the bound ``endpoint``: the endpoint itself, or for a
    wildcard address the host's addresses with its port, the loopback one last.

    >>> connect_to("tcp://127.0.0.1:5555")
    'tcp://127.0.0.1:5555'
    >>> "or tcp://127.0.0.1:5555 on this machine, bound to tcp://0.0.0.0:5555" in (
    ...     connect_to("tcp://0.0.0.0:5555"))
    True
    """
    host, _, port = endpoint.removeprefix("tcp://").rpartition(":")
    family = _WILDCARDS.get(host) if endpoint.startswith("tcp://") else None
    if family is None:
        return endpoint
    found = [a for a in host_addresses(family) if not _loopback(a)]
    loopback = "[::1]" if family == socket.AF_INET6 else "127.0.0.1"
    ours = ", ".join(f"tcp://{address}:{port}" for address in found)
    here = f"tcp://{loopback}:{port} on this machine"
    bound = f"bound to {endpoint}: port {port} of every address of this host"
    if not ours:
        return f"{here} ({bound}, no other address of it found)"
    return f"{ours} (or {here}, {bound})"


def host_addresses(family: socket.AddressFamily) -> list[str]:
    """This host's addresses of ``family``: its name's (``getaddrinfo(gethostname())``) and
    the one its default route leaves from (a UDP socket's, connected to nothing but chosen
    by the routing table; no packet is sent). IPv6 ones in brackets."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None, family, socket.SOCK_STREAM):
            found.append(str(info[4][0]))
    probe = "192.0.2.1" if family == socket.AF_INET else "2001:db8::1"  # documentation nets
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as udp:
        udp.connect((probe, 9))
        found.append(str(udp.getsockname()[0]))
    unique = list(dict.fromkeys(found))
    return [f"[{a}]" if family == socket.AF_INET6 else a for a in unique]


def _loopback(address: str) -> bool:
    return address.startswith("127.") or address == "[::1]"
