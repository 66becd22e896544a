"""An entrant that tries to read the other entrants' files, the organiser's, the store, the keys
and the logs, then plays on (the first legal action at every decision).

Before it says hello it learns every path it can: its working directory and each directory
above it (the ladder's directory is among them), its command line (``sys.argv`` and
``/proc/self/cmdline``), every value of its environment that holds a path (the referee's ipc
socket, ``PATH``, ``HOME``), the mount points and sources of ``/proc/self/mountinfo``, the
links of ``/proc/*/cwd``, ``/proc/*/exe`` and ``/proc/*/root``, and the paths in
``hints.json`` beside it (what an attacker could know from elsewhere: another entrant's
directory, the store's file, ``deal.key``, the log, a PostgreSQL's address). It lists each
directory (and, for those it learned from its own position or the hints, what is below them,
to a bounded depth) and reads the first bytes of each file it meets, and tries the hinted TCP
addresses and unix sockets. It reports one line ``SPY {json}`` on stderr: what it learned,
what it tried, what it listed and the first bytes of what it read, and what it reached.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
from typing import Any

from protocol.bot import Bot, run_bot_main
from protocol.schema import Request, WireAction

SYSTEM = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev")
"""Trees everyone may read: listed at their top only."""
BUDGET = 4000
"""Entries listed and files read at most (the report stays well below the stderr cap)."""


def _paths_in(text: str) -> list[str]:
    """The absolute paths a text holds (split on NUL, spaces, ``:``, ``=``, ``ipc://``)."""
    words = text.replace("\0", " ").replace("ipc://", " ").replace("=", " ").replace(":", " ")
    return [w for w in words.split() if w.startswith("/")]


def learn() -> dict[str, list[str]]:
    """Where each learned path came from."""
    found: dict[str, list[str]] = {}

    def add(source: str, *paths: str) -> None:
        found.setdefault(source, []).extend(p for p in paths if p)

    here = os.getcwd()
    add("cwd", here)
    while here != "/":
        here = os.path.dirname(here)
        add("parents", here)
    add("argv", *(p for a in sys.argv for p in _paths_in(a)))
    for name in ("/proc/self/cmdline", "/proc/self/environ", "/proc/self/mountinfo"):
        with contextlib.suppress(OSError), open(name, "rb") as raw:
            add(name, *_paths_in(raw.read().decode(errors="replace")))
    add("environ", *(p for v in os.environ.values() for p in _paths_in(v)))
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        for link in ("cwd", "exe", "root"):
            with contextlib.suppress(OSError):
                add("/proc/*", os.readlink(f"/proc/{pid}/{link}"))
    try:
        with open("hints.json", encoding="utf-8") as f:
            hints = json.load(f)
        add("hints", *hints.get("paths", []))
    except (OSError, ValueError):
        hints = {}
    add("tcp", *(f"{host}:{port}" for host, port in hints.get("tcp", [])))
    return found


def survey(found: dict[str, list[str]]) -> dict[str, Any]:
    """Try every learned path: list directories, read files, connect to sockets."""
    listed: dict[str, Any] = {}
    read: dict[str, str] = {}
    reached: dict[str, str] = {}
    deep = {p for source in ("cwd", "parents", "hints") for p in found.get(source, [])}
    spent = 0
    todo = [(p, 3 if p in deep else 0) for source in found for p in found[source]]
    seen: set[str] = set()
    while todo and spent < BUDGET:
        path, depth = todo.pop(0)
        if path in seen or path.count(":") or not path.startswith("/"):
            continue
        seen.add(path)
        spent += 1
        if os.path.isdir(path):
            try:
                names = sorted(os.listdir(path))
            except OSError as err:
                listed[path] = err.strerror
                continue
            listed[path] = names[:200]
            system = any(path == s or path.startswith(s + "/") for s in SYSTEM)
            if depth > 0 and not system:
                todo += [(os.path.join(path, n), depth - 1) for n in names[:200]]
        elif os.path.exists(path) or os.path.islink(path):
            try:
                mode = os.stat(path).st_mode
                if stat.S_ISSOCK(mode):
                    with socket.socket(socket.AF_UNIX) as s:
                        s.settimeout(1)
                        s.connect(path)
                    reached[path] = "connected"
                elif stat.S_ISREG(mode):  # not a FIFO, which would wait for a writer
                    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                    with open(fd, "rb") as f:
                        read[path] = f.read(300).decode(errors="replace")
                else:
                    read[path] = "error: not a regular file"
            except OSError as err:
                read[path] = f"error: {err.strerror}"
        else:
            read[path] = "missing"
    for address in found.get("tcp", []):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                reached[address] = "connected"
        except OSError as err:
            reached[address] = f"error: {err.strerror or err}"
    return {"learned": found, "listed": listed, "read": read, "reached": reached,
            "tried": sorted(seen), "spent": spent}  # fmt: skip


class FirstLegal(Bot):
    """Plays the first legal action."""

    def act(self, request: Request) -> WireAction:
        """The first of ``request.legal``."""
        return request.legal[0]


def main() -> int:
    """Survey, report, then play."""
    report = survey(learn())
    print("SPY " + json.dumps(report, sort_keys=True), file=sys.stderr, flush=True)
    if not os.environ.get("GIN_REFEREE_ENDPOINT"):
        return 0  # run by hand (the test's control): nothing to play
    return run_bot_main(FirstLegal(), "spy", multi_match=False)


if __name__ == "__main__":
    sys.exit(main())
