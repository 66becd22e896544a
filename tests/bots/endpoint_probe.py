"""A test bot that reports how it reaches the referee, then plays at random.

At ``match_start`` (the referee serves its endpoint by then) it writes one JSON line to
stderr, which the tests read back from the seat's stderr file:

* ``scheme``: its endpoint's, ``ipc`` or ``tcp``; ``port``: the TCP port, if any;
* ``curve_variables``: the names (never the values) of the CURVE variables it was given;
* ``referee_listens``: the TCP ports its parent process listens on, from ``/proc`` (the
  parent is the referee when the bot is started with ``--sandbox none``);
* ``null_probe`` (TCP only): what a connection offering ZMTP's NULL mechanism (no CURVE) gets
  there: the mechanism the referee's greeting names, and whether the referee then closed it.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
from typing import Any

from protocol.bot import Bot, run_bot_main
from protocol.schema import MatchStart, Request, WireAction

CURVE_VARIABLES = ("GIN_BOT_PUBLIC_KEY", "GIN_BOT_SECRET_KEY", "GIN_REFEREE_SERVER_KEY")
LISTEN = "0A"
"""A listening socket's state in ``/proc/net/tcp``."""


def listening_ports(pid: int) -> list[int]:
    """The TCP ports process ``pid`` listens on (its sockets' inodes in ``/proc/net/tcp*``)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as rows:
            for row in rows.readlines()[1:]:
                fields = row.split()
                if fields[3] == LISTEN and fields[9] in inodes:
                    ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def null_probe(host: str, port: int) -> dict[str, Any]:
    """Greet the endpoint offering the NULL mechanism; what the referee answers."""
    greeting = b"\xff" + bytes(8) + b"\x7f" + bytes([3, 1]) + b"NULL".ljust(20, b"\0")
    greeting += bytes(32)  # as-server 0, filler
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(greeting)
        theirs = b""
        while len(theirs) < 64:
            chunk = conn.recv(64 - len(theirs))
            if not chunk:
                break
            theirs += chunk
        closed = False
        try:
            while conn.recv(4096):  # an ERROR command may come before the close
                pass
            closed = True
        except TimeoutError:
            pass
    return {"mechanism": theirs[12:32].rstrip(b"\0").decode("ascii", "replace"), "closed": closed}


class Probe(Bot):
    """Reports at ``match_start``, then plays any legal action."""

    def __init__(self) -> None:
        self.rng = random.Random(3)

    def on_match_start(self, msg: MatchStart) -> None:
        """Write the report (see the module docstring)."""
        endpoint = os.environ["GIN_REFEREE_ENDPOINT"]
        scheme, _, where = endpoint.partition("://")
        report: dict[str, Any] = {
            "scheme": scheme,
            "curve_variables": [name for name in CURVE_VARIABLES if name in os.environ],
            "referee_listens": listening_ports(os.getppid()),
        }
        if scheme == "tcp":
            host, _, port = where.rpartition(":")
            report["port"] = int(port)
            report["null_probe"] = null_probe(host.strip("[]"), int(port))
        print(json.dumps(report), file=sys.stderr, flush=True)

    def act(self, request: Request) -> WireAction:
        """Any legal action."""
        return self.rng.choice(request.legal)


if __name__ == "__main__":
    sys.exit(run_bot_main(Probe(), "endpoint-probe"))
