"""A bot that attacks its opponent, the referee or the machine, then plays on legally.

Usage: ``python attacker.py MODE [ARGS...]``. It reports what the attack achieved as one line
``ATTACK {json}`` on stderr (the tests read it from the seat's stderr log), then plays the
first legal action at every decision through the SDK. Modes:

* ``steal``: looks through ``/proc/*/environ`` for another ``GIN_REFEREE_TOKEN`` (for up to
  2 s); if one turns up it says hello with it first, on a socket of its own.
* ``kill PID...``: SIGKILLs every process it can see in ``/proc`` (but itself and its
  ancestors) and the PIDs given.
* ``inspect``: reports its environment, uid, capabilities, ``no_new_privs`` and visible pids.
* ``forkbomb N``: forks N children that each call ``setsid()`` and sleep for 10 minutes.
* ``hog``: at its first decision allocates 4 GiB (and does not catch the error).
* ``tcp PORT``: connects to ``127.0.0.1:PORT``.
* ``write PATH...``: tries to create each file.
* ``read PATH...``: tries to read each file.
* ``read-late PATH...``: the same at its first decision (the match's record exists by then).
* ``fds``: opens ``/dev/null`` 20,000 times, then closes them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import traceback
from typing import Any

import msgpack
import zmq

from protocol.bot import Bot, run_bot_main
from protocol.schema import Request, WireAction


def report(**fields: Any) -> None:
    """The one line the tests parse."""
    print("ATTACK " + json.dumps(fields, sort_keys=True), file=sys.stderr, flush=True)


def pids() -> list[int]:
    """Process ids listed in this process's /proc."""
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def foreign_tokens(own: str) -> set[str]:
    """GIN_REFEREE_TOKEN values other than ``own`` readable in /proc/*/environ, of bots of
    the same referee (same endpoint)."""
    found = set()
    endpoint = os.environ["GIN_REFEREE_ENDPOINT"].encode()
    for pid in pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
        except OSError:
            continue
        token = env.get(b"GIN_REFEREE_TOKEN", b"").decode()
        if token and token != own and env.get(b"GIN_REFEREE_ENDPOINT") == endpoint:
            found.add(token)
    return found


def steal() -> zmq.Socket[bytes] | None:
    """Find another seat's token and claim its seat; the socket is kept open."""
    own = os.environ["GIN_REFEREE_TOKEN"]
    deadline = time.monotonic() + 2.0
    tokens = foreign_tokens(own)
    while not tokens and time.monotonic() < deadline:
        time.sleep(0.05)
        tokens = foreign_tokens(own)
    report(tokens_found=len(tokens), pids_seen=len(pids()))
    if not tokens:
        return None
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["GIN_REFEREE_ENDPOINT"])
    hello = {"type": "hello", "protocol_version": 1, "name": "thief", "token": tokens.pop()}
    sock.send(msgpack.packb(hello))
    return sock


def ancestors() -> set[int]:
    """This process and its ancestors (as seen in its own /proc)."""
    chain, pid = set(), os.getpid()
    while pid > 0 and pid not in chain:
        chain.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return chain


def kill(targets: list[int]) -> None:
    """SIGKILL whatever can be seen and the given pids; report what the kernel allowed."""
    mine = ancestors()
    killed, refused = [], []
    for pid in sorted(set(pids()) - mine) + targets:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError as exc:
            refused.append([pid, exc.strerror])
    report(killed=killed, refused=refused)


def inspect() -> None:
    """Report what the bot can see of itself and the machine."""
    with open("/proc/self/status") as f:
        status = dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    report(
        env=dict(os.environ),
        uid=os.getuid(),
        cap_eff=status["CapEff"].strip(),
        no_new_privs=status.get("NoNewPrivs", "").strip(),
        pids=pids(),
    )


def forkbomb(count: int) -> None:
    """Children that leave the process group and session, and sleep."""
    for _ in range(count):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:  # the grandchild is reparented: an orphan nobody waits for
                time.sleep(600)
            os._exit(0)
    report(forked=count)


def tcp(port: int) -> None:
    """Try to reach a port on the loopback interface."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            report(connected=True)
    except OSError as exc:
        report(connected=False, error=exc.strerror or str(exc))


def write(paths: list[str]) -> None:
    """Try to create each file; report which worked."""
    results = {}
    for path in paths:
        try:
            with open(path, "w") as f:
                f.write("pwned")
            results[path] = "written"
        except OSError as exc:
            results[path] = exc.strerror or str(exc)
    report(writes=results)


def read(paths: list[str]) -> None:
    """Try to read each file; report what was read or the error."""
    results = {}
    for path in paths:
        try:
            with open(path) as f:
                results[path] = f.read(100)
        except OSError as exc:
            results[path] = exc.strerror or str(exc)
    report(reads=results)


def fds() -> None:
    """Open files until refused."""
    opened = []
    error = None
    try:
        for _ in range(20_000):
            opened.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as exc:
        error = exc.strerror
    for fd in opened:
        os.close(fd)
    report(opened=len(opened), error=error)


class FirstLegal(Bot):
    """Plays ``request.legal[0]``; the ``hog`` mode allocates 4 GiB at its first decision."""

    def __init__(self, hog: bool, late_reads: list[str] | None = None) -> None:
        self.hog = hog
        self.late_reads = late_reads
        self.ballast: list[bytearray] = []

    def act(self, request: Request) -> WireAction:
        """The first legal action."""
        if self.late_reads is not None:
            read(self.late_reads)
            self.late_reads = None
        if self.hog:  # dies of it as most runtimes do (the SDK would catch the MemoryError)
            try:
                self.ballast.append(bytearray(4 << 30))
            except MemoryError:
                traceback.print_exc()
                os._exit(1)
        return request.legal[0]


def main() -> int:
    """Attack, then play."""
    mode, args = sys.argv[1], sys.argv[2:]
    kept = None
    if mode == "steal":
        kept = steal()
    elif mode == "kill":
        kill([int(a) for a in args])
    elif mode == "inspect":
        inspect()
    elif mode == "forkbomb":
        forkbomb(int(args[0]))
    elif mode == "tcp":
        tcp(int(args[0]))
    elif mode == "write":
        write(args)
    elif mode == "read":
        read(args)
    elif mode == "fds":
        fds()
    try:
        late = args if mode == "read-late" else None
        return run_bot_main(FirstLegal(mode == "hog", late), f"attacker-{mode}", argv=[])
    finally:
        if kept is not None:
            kept.close(0)


if __name__ == "__main__":
    sys.exit(main())
