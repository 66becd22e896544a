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
* ``connect PATH...``: connects to each unix socket.
* ``fill MIB DIR...``: writes up to MIB MiB into a file in each directory.
* ``forkcount N``: forks up to N sleeping children, counting the forks that succeed.
* ``children-mem N MIB``: N children that each touch MIB MiB and keep it.
* ``burn N``: N children that spin the CPU.
* ``sdk-hog``: at its first decision allocates 4 GiB inside the SDK's handler (uncaught).
* A path argument may be written ``@PATH``: the sandbox binds in what a command names, and
  an attack's target must not be bound just for being named.
* ``inspect`` also reports uid, gid, groups, every capability set, whether a new user
  namespace can be made, and what ``/`` and ``/dev`` hold.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
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
    libc = ctypes.CDLL(None, use_errno=True)
    userns = libc.unshare(0x10000000)  # CLONE_NEWUSER
    report(
        env=dict(os.environ),
        uid=os.getuid(),
        gid=os.getgid(),
        groups=os.getgroups(),
        caps={k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
        cap_eff=status["CapEff"].strip(),
        no_new_privs=status.get("NoNewPrivs", "").strip(),
        new_user_namespace="made" if userns == 0 else os.strerror(ctypes.get_errno()),
        pids=pids(),
        root=sorted(os.listdir("/")),
        dev=sorted(os.listdir("/dev")),
    )


def connect_unix(paths: list[str]) -> None:
    """Try to connect to each unix socket path."""
    results = {}
    for path in paths:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            results[path] = "connected"
        except OSError as exc:
            results[path] = type(exc).__name__
        finally:
            sock.close()
    report(connect=results)


def fill(paths: list[str], megabytes: int) -> None:
    """Write up to ``megabytes`` MiB into a new file in each directory; report how much."""
    written = {}
    for index, directory in enumerate(paths):
        done = 0
        try:
            with open(os.path.join(directory, f"fill{index}"), "wb") as f:
                for _ in range(megabytes):
                    f.write(bytes(1 << 20))
                    f.flush()
                    done += 1
        except OSError as exc:
            written[directory] = f"{done} MiB then {exc.strerror}"
            continue
        written[directory] = f"{done} MiB"
    report(written=written)


def fork_count(limit: int) -> None:
    """Fork up to ``limit`` sleeping children; report how many forks succeeded."""
    made = 0
    for _ in range(limit):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        made += 1
    report(forked=made)


def burn(count: int) -> None:
    """``count`` children that spin the CPU (for at most 10 minutes)."""
    for _ in range(count):
        if os.fork() == 0:
            until = time.monotonic() + 600
            while time.monotonic() < until:
                pass
            os._exit(0)
    report(burners=count)


def children_memory(count: int, mebibytes: int) -> None:
    """Start ``count`` children that each touch ``mebibytes`` MiB and keep it (the parent
    itself stays small); wait until they all hold it or one is gone."""
    ready_r, ready_w = os.pipe()
    children = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            block = bytearray(mebibytes << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(ready_w, b"!")
            time.sleep(600)
            os._exit(0)
        children.append(pid)
    os.close(ready_w)
    held = 0
    while held < count:  # no time limit: touching the pages of a loaded machine takes long
        if any(os.waitpid(pid, os.WNOHANG)[0] for pid in children):
            break  # one was killed: the seat is over its limit
        held += len(os.read(ready_r, 16)) if select.select([ready_r], [], [], 0.1)[0] else 0
    report(children=count, each_mib=mebibytes, held=held)


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

    def __init__(
        self, hog: bool, late_reads: list[str] | None = None, sdk_hog: bool = False
    ) -> None:
        self.hog = hog
        self.sdk_hog = sdk_hog
        self.late_reads = late_reads
        self.ballast: list[bytearray] = []

    def act(self, request: Request) -> WireAction:
        """The first legal action."""
        if self.late_reads is not None:
            read(self.late_reads)
            self.late_reads = None
        if self.sdk_hog:  # the SDK's handler meets the MemoryError
            self.ballast.append(bytearray(4 << 30))
        if self.hog:  # dies of it as most runtimes do (the SDK would catch the MemoryError)
            try:
                self.ballast.append(bytearray(4 << 30))
            except MemoryError:
                traceback.print_exc()
                os._exit(1)
        return request.legal[0]


def main() -> int:
    """Attack, then play."""
    mode = sys.argv[1]
    # "@PATH": a path the sandbox must not bind for the bot just because its command names it
    args = [arg.removeprefix("@") for arg in sys.argv[2:]]
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
    elif mode == "connect":
        connect_unix(args)
    elif mode == "fill":
        fill(args[1:], int(args[0]))
    elif mode == "forkcount":
        fork_count(int(args[0]))
    elif mode == "burn":
        burn(int(args[0]))
    elif mode == "children-mem":
        children_memory(int(args[0]), int(args[1]))
    try:
        late = args if mode == "read-late" else None
        bot = FirstLegal(mode == "hog", late, sdk_hog=mode == "sdk-hog")
        return run_bot_main(bot, f"attacker-{mode}", argv=[])
    finally:
        if kept is not None:
            kept.close(0)


if __name__ == "__main__":
    sys.exit(main())
