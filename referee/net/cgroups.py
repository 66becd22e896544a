"""A cgroup per bot seat: its processes, memory and CPU weight held by the kernel, not by rlimits.

Design: :func:`detect` finds, once, which cgroup version the referee can use; a
:class:`SeatCgroup` is then made per seat as a child of the referee's own group, named
``gin-referee.<referee pid>.<seq>``, with ``pids.max`` (what holds a fork bomb: the kernel
ignores ``RLIMIT_NPROC`` for root), a memory limit with swap closed, and a CPU weight. The bot
is spawned with :attr:`SeatCgroup.join_argv` in front of its argv: a ``/bin/sh`` that writes
``0`` (itself) to each group's ``cgroup.procs`` and then execs the bot, so the bot's first
instruction already runs inside the group and nothing it forks can start outside it (no
window between spawn and an outside ``echo $pid``). After the bot ends, :meth:`SeatCgroup.kill`
and :meth:`SeatCgroup.close` remove whatever it left; :func:`sweep_stale` removes the groups of
a referee that died by SIGKILL (and kills the bots still in them).

Detection (mount points come from ``/proc/self/mountinfo``, the referee's groups from
``/proc/self/cgroup``; no path is hard-coded):

* **v2** when the referee's cgroup2 directory lists ``cpu memory pids`` in
  ``cgroup.controllers`` and is writable (a delegated subtree, e.g. systemd ``Delegate=yes``).
  The no-internal-processes rule then applies: the first detection moves every process of that
  group (the referee, and anything else that was in it) into a leaf child ``referee`` and
  writes ``+cpu +memory +pids`` to ``cgroup.subtree_control``. Seats are siblings of
  ``referee``.
* **v1** when ``pids``, ``memory`` and ``cpu`` hierarchies are mounted and a probe child can be
  made and removed in the referee's group of each; ``cpuacct`` is joined too when it can be
  (it gives :meth:`SeatCgroup.cpu_usage_ns`; co-mounted ``cpu,cpuacct`` is one directory).
* Otherwise ``version`` is None and ``reason`` says why for each version.

Settings (:func:`referee.net.cgroupfs.seat_settings`): v1 ``pids.max``,
``memory.limit_in_bytes`` and, when swap is accounted, ``memory.memsw.limit_in_bytes`` to the
same value, ``cpu.shares``; v2 ``pids.max``, ``memory.max``, ``memory.swap.max`` 0,
``memory.oom.group`` 1 (an OOM kills the whole seat), ``cpu.weight``. The CPU weight is
:func:`cpu_weight_for_nice` of the seat's nice (v2 scaled so 1024 is 100): two seats weigh the
same whatever they run, and each weighs what one process at that nice did beside the
referee's own nice-0 tasks. A bot's six processes share its seat's weight, not six times it.

OOM notice (:meth:`SeatCgroup.watch_oom`): v1 registers an eventfd for
``memory.oom_control`` through ``cgroup.event_control`` (it fires when the group is out of
memory, as the kernel picks its victim; ``oom_kills`` may lag it by a moment); v2 watches
``memory.events`` with inotify (the kernel notifies that file on change) and fires when its
``oom`` or ``oom_kill`` count grows.

Known limits: **the v2 path was never run on the development machine or CI** (their controllers
are bound to v1); its parsing, settings and watcher are unit-tested on real-format text and
files, the kernel writes are not. ``create``, ``kill`` and ``close`` are synchronous
file-system calls made on the event loop (about 0.6 ms for ``create`` + ``close`` here;
``close`` may sleep up to ~0.7 s in all while killed tasks leave, and ``close`` without
``kill`` of a group that still runs leaves it, with a warning). v1 ``kill`` first sets
``pids.max`` to 0 so that nothing can fork during the kill, which adds to
:meth:`SeatCgroup.pids_refused`: read the counters before ``kill``. ``sweep_stale`` trusts a
live pid: a stale group whose referee pid was reused stays. Detection moves other processes
sharing the referee's v2 group into ``referee`` as well. Values are judged by the kernel only
(v1 takes ``memory=0``; ``-5`` is refused): the caller validates its limits. The counters read
0 while a file cannot be read, and after ``close`` keep the values they had then.

Threading: use a ``SeatCgroup`` from the thread running the loop given to ``watch_oom``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # spawning a bot imports no asyncio (docs/performance.md, "Start-up")
    import asyncio

from referee.net.cgroupfs import cpu_weight_for_nice, parse_flat_keyed, seat_settings
from referee.net.cgrouphost import (
    CgroupSupport,
    Inotify,
    detect,
    host_layout,
    kill_members,
    read,
    read_pids,
    remove,
    unique,
    write,
)
from referee.net.pids import pid_alive

__all__ = [
    "CgroupError",
    "CgroupSupport",
    "SeatCgroup",
    "cpu_weight_for_nice",
    "detect",
    "sweep_stale",
]

_SEAT_NAME = re.compile(r"gin-referee\.(\d+)\.(\d+)")
_SEQ = itertools.count()
_JOIN_SCRIPT = (
    'for f do case $f in --) break;; esac; echo 0 >"$f" || exit 126; shift; done; shift; exec "$@"'
)


class CgroupError(Exception):
    """A seat group could not be made (or watched); the message says why."""


class SeatCgroup:
    """The cgroup(s) of one bot seat; see the module docstring.

    Usage::

        seat = SeatCgroup.create(memory=2 << 30, processes=64, nice=10)
        proc = await asyncio.create_subprocess_exec(*seat.join_argv, *bot_argv)
        seat.watch_oom(loop, on_oom)
        ...
        kills = seat.oom_kills()
        seat.kill()
        seat.close()
    """

    def __init__(self, version: int, dirs: dict[str, str]) -> None:
        """Wraps existing directories (role -> path); use :meth:`create` to make a seat."""
        self.version = version
        """1 or 2."""
        self._dirs = dirs
        self.paths: tuple[str, ...] = unique(list(dirs.values()))
        """The group directories (one on v2, one per v1 hierarchy)."""
        self.join_argv: tuple[str, ...] = (
            "/bin/sh", "-c", _JOIN_SCRIPT, "sh",
            *(f"{path}/cgroup.procs" for path in self.paths), "--",
        )  # fmt: skip
        """A command-line prefix that moves the process into the group(s), then execs the
        rest: spawn ``join_argv + argv``. Exit status 126 if a move failed."""
        self._made: list[str] = []
        self._watch: tuple[asyncio.AbstractEventLoop, int] | None = None
        self._oom_seen = 0
        self._final: tuple[int, int, int] | None = None
        self._cpu_fd: int | None = None
        """The CPU counter, kept open (:meth:`cpu_usage_ns`); closed by :meth:`close`."""

    @classmethod
    def create(cls, *, memory: int, processes: int, nice: int) -> SeatCgroup:
        """A new seat group with these limits (bytes, processes, the nice its weight copies).

        Raises CgroupError, having removed what it made, when cgroups are unusable or the
        kernel refuses a directory or a value.
        """
        host = host_layout()
        version = host.support.version
        if version is None:
            raise CgroupError(f"cgroups are not usable: {host.support.reason}")
        name = f"gin-referee.{os.getpid()}.{next(_SEQ)}"
        seat = cls(version, {role: f"{parent}/{name}" for role, parent in host.parents.items()})
        memory_dir = seat._dirs["memory"]
        try:
            for path in seat.paths:
                os.mkdir(path)
                seat._made.append(path)
            settings = seat_settings(
                version,
                memory=memory,
                processes=processes,
                nice=nice,
                memsw=os.path.exists(f"{memory_dir}/memory.memsw.limit_in_bytes"),
                swap=os.path.exists(f"{memory_dir}/memory.swap.max"),
            )
            for controller, filename, value in settings:
                path = f"{seat._dirs[controller]}/{filename}"
                try:
                    write(path, value)
                except OSError as err:
                    raise CgroupError(f"cannot set {path} to {value}: {err.strerror}") from err
        except (OSError, ValueError) as err:
            seat.close()
            raise CgroupError(f"cannot make seat group {name}: {err}") from err
        except CgroupError:
            seat.close()
            raise
        return seat

    def _counter(self, role: str, filename: str, key: str) -> int:
        try:
            return parse_flat_keyed(read(f"{self._dirs[role]}/{filename}")).get(key, 0)
        except OSError:
            return 0

    def oom_kills(self) -> int:
        """Processes of the group the OOM killer has killed so far (after :meth:`close`: as it
        was then; 0 if unreadable)."""
        if self._final is not None:
            return self._final[0]
        if self.version == 1:
            return self._counter("memory", "memory.oom_control", "oom_kill")
        return self._counter("memory", "memory.events", "oom_kill")

    def pids_refused(self) -> int:
        """Forks the group's ``pids.max`` has refused so far (``pids.events`` ``max``)."""
        if self._final is not None:
            return self._final[1]
        return self._counter("pids", "pids.events", "max")

    def cpu_usage_ns(self) -> int:
        """CPU time used by all processes of the group, in ns (0 on v1 without cpuacct).

        One ``pread`` of a file kept open (about 2 us): cheap enough for every decision."""
        if self._final is not None:
            return self._final[2]
        if not self.counts_cpu:
            return 0
        try:
            if self._cpu_fd is None:
                if "cpuacct" in self._dirs:
                    path = f"{self._dirs['cpuacct']}/cpuacct.usage"
                else:
                    path = f"{self._dirs['cpu']}/cpu.stat"
                self._cpu_fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            text = os.pread(self._cpu_fd, 4096, 0).decode("ascii")
            if "cpuacct" in self._dirs:
                return int(text)
            return parse_flat_keyed(text).get("usage_usec", 0) * 1000
        except (OSError, ValueError):
            return 0

    @property
    def counts_cpu(self) -> bool:
        """Whether :meth:`cpu_usage_ns` counts (v2, or v1 with ``cpuacct`` joined)."""
        return self.version == 2 or "cpuacct" in self._dirs

    def pids(self) -> list[int]:
        """The processes in the group now (its ``cgroup.procs``; [] once it is gone)."""
        return read_pids(self._dirs["pids"])

    def watch_oom(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        """Call ``callback`` on ``loop`` as soon as the group runs out of memory (see the module
        docstring); replaces an earlier watch. Raises CgroupError if it cannot be set up."""
        self._stop_watch()
        memory_dir = self._dirs["memory"]
        try:
            if self.version == 1:
                fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
                try:
                    control = os.open(f"{memory_dir}/memory.oom_control", os.O_RDONLY)
                    try:
                        write(f"{memory_dir}/cgroup.event_control", f"{fd} {control}")
                    finally:
                        os.close(control)
                except OSError:
                    os.close(fd)
                    raise
            else:
                self._oom_seen = self._oom_events()
                fd = Inotify(f"{memory_dir}/memory.events").fd
        except OSError as err:
            raise CgroupError(f"cannot watch {memory_dir} for OOM: {err}") from err
        self._watch = (loop, fd)
        loop.add_reader(fd, self._on_watch, fd, callback)

    def _oom_events(self) -> int:
        try:
            events = parse_flat_keyed(read(f"{self._dirs['memory']}/memory.events"))
        except OSError:
            return self._oom_seen
        return events.get("oom", 0) + events.get("oom_kill", 0)

    def _on_watch(self, fd: int, callback: Callable[[], None]) -> None:
        try:
            while os.read(fd, 4096):
                pass
        except BlockingIOError:
            pass
        if self.version == 2:
            seen, self._oom_seen = self._oom_seen, self._oom_events()
            if self._oom_seen <= seen:
                return
        callback()

    def unwatch(self) -> None:
        """Stop :meth:`watch_oom` (on the loop that watches: :meth:`close` does it too, but
        may run in another thread only once this was called). Idempotent."""
        self._stop_watch()

    def _stop_watch(self) -> None:
        if self._watch is not None:
            loop, fd = self._watch
            self._watch = None
            if not loop.is_closed():
                loop.remove_reader(fd)
            os.close(fd)

    def kill(self) -> None:
        """SIGKILL every process in the group; never raises (failures are logged)."""
        kill_members(self.version, self._dirs["pids"])

    def close(self) -> None:
        """Stop watching, keep the counters' last values, remove the directories (retrying
        briefly while killed tasks leave). Never raises; idempotent. A group still holding
        live processes is left (logged; a later ``close`` tries again): call :meth:`kill` first."""
        self._stop_watch()
        if self._made:  # read them live (again, if an earlier close left a directory)
            self._final = None
            self._final = (self.oom_kills(), self.pids_refused(), self.cpu_usage_ns())
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        patient, left = True, []  # wait for one busy directory, not for each of them
        for path in reversed(self._made):
            if not remove(path, patient=patient):
                patient = False
                left.append(path)
        self._made = left[::-1]


def sweep_stale() -> int:
    """Remove the seat groups of referees that no longer run (killed by SIGKILL, say), killing
    any bot still in them; returns how many seats (names) were removed."""
    host = host_layout()
    version = host.support.version
    if version is None:
        return 0
    removed: set[str] = set()
    for parent in unique(list(host.parents.values())):
        try:
            entries = [e.name for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for name in entries:
            match = _SEAT_NAME.fullmatch(name)
            if match is None or pid_alive(int(match[1])):
                continue
            path = f"{parent}/{name}"
            if version == 2 or os.path.exists(f"{path}/pids.max"):
                kill_members(version, path)
            else:  # another v1 hierarchy: its members are the pids group's, killed there
                for pid in read_pids(path):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            if remove(path):
                removed.add(name)
    return len(removed)
