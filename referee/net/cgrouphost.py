"""The host's cgroup tree as the seats see it: which version is usable and where seats go
(:func:`detect`), and the few file operations on groups that :mod:`referee.net.cgroups` and
:func:`referee.net.cgroups.sweep_stale` share (write a value, kill the members, remove a group,
watch a file). The design and its limits are in :mod:`referee.net.cgroups`'s docstring.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import logging
import os
import signal
import time
from dataclasses import dataclass, field

from referee.net.cgroupfs import Mount, cgroup_dir, parse_mountinfo, parse_proc_cgroup

__all__ = [
    "CgroupSupport",
    "Inotify",
    "Layout",
    "detect",
    "host_layout",
    "kill_members",
    "read",
    "read_pids",
    "remove",
    "unique",
    "write",
]

logger = logging.getLogger(__name__)

CONTROLLERS = ("pids", "memory", "cpu")
_WAITS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)
_IN_MODIFY = 0x2


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    """Which cgroup version the referee can use, or why none."""

    version: int | None
    """2, 1, or None when neither can be used."""
    reason: str
    """"" when usable; else why not, for a warning and the docs."""


@dataclass(frozen=True, slots=True)
class Layout:
    """What :func:`host_layout` found: the support, and where seat groups are made."""

    support: CgroupSupport
    parents: dict[str, str] = field(default_factory=dict)
    """Role (``pids``, ``memory``, ``cpu``, ``cpuacct``) -> directory seats are made in."""


def read(path: str) -> str:
    """The text of a (small) cgroup or /proc file."""
    with open(path, encoding="ascii") as file:
        return file.read()


def write(path: str, value: str) -> None:
    """One ``write(2)`` of ``value`` to an existing file (cgroup files take one value a write)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def unique(paths: list[str]) -> tuple[str, ...]:
    """``paths`` without repeats, in order (co-mounted v1 controllers share a directory)."""
    return tuple(dict.fromkeys(paths))


def _try_v2(mounts: list[Mount], groups: dict[str, str]) -> tuple[str | None, str]:
    """The referee's cgroup2 directory, made ready for seat children; or None and why not."""
    path = groups.get("")
    where = cgroup_dir(mounts, "cgroup2", "", path) if path is not None else None
    if where is None:
        return None, "no cgroup2 mount shows the referee's group"
    try:
        have = read(f"{where}/cgroup.controllers").split()
        missing = [c for c in CONTROLLERS if c not in have]
        if missing:
            return None, f"{where} has no {' '.join(missing)} controller (bound to v1, or none)"
        if not os.access(f"{where}/cgroup.subtree_control", os.W_OK):
            return None, f"{where} is not writable (no delegated subtree: systemd Delegate=yes)"
        enabled = read(f"{where}/cgroup.subtree_control").split()
        if all(c in enabled for c in CONTROLLERS):
            return where, ""
        for _ in range(5):
            if path != "/":  # the root group is exempt from the no-internal-processes rule
                os.makedirs(f"{where}/referee", exist_ok=True)
                for pid in read(f"{where}/cgroup.procs").split():
                    with contextlib.suppress(ProcessLookupError):
                        write(f"{where}/referee/cgroup.procs", pid)
            try:
                write(f"{where}/cgroup.subtree_control", "+cpu +memory +pids")
            except OSError as err:
                if err.errno != errno.EBUSY:
                    raise
                continue  # a process arrived meanwhile: move it too
            return where, ""
        return None, f"processes kept arriving in {where} while moving them to referee/"
    except OSError as err:
        return None, f"{where}: {err.strerror} ({err.filename})"


def _probe(parent: str) -> str:
    """Why a child group cannot be made and removed in ``parent``; "" if it can."""
    probe = f"{parent}/gin-referee.probe.{os.getpid()}"
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError as err:
        return f"cannot make a child group in {parent}: {err.strerror}"
    return ""


def _try_v1(mounts: list[Mount], groups: dict[str, str]) -> tuple[dict[str, str], str]:
    """Role -> the referee's v1 group directory, or {} and why not."""
    parents: dict[str, str] = {}
    for controller in (*CONTROLLERS, "cpuacct"):
        path = groups.get(controller)
        where = cgroup_dir(mounts, "cgroup", controller, path) if path is not None else None
        if where is None:
            if controller == "cpuacct":
                break
            return {}, f"no {controller} hierarchy is mounted for the referee's group"
        why = _probe(where) if where not in parents.values() else ""
        if why:
            if controller == "cpuacct":
                break
            return {}, why
        parents[controller] = where
    return parents, ""


@functools.cache
def host_layout() -> Layout:
    """The usable version and the directories seats are made in (cached, like detect)."""
    try:
        mounts = parse_mountinfo(read("/proc/self/mountinfo"))
        groups = parse_proc_cgroup(read("/proc/self/cgroup"))
    except OSError as err:
        return Layout(CgroupSupport(None, f"cannot read {err.filename}: {err.strerror}"))
    where, why2 = _try_v2(mounts, groups)
    if where is not None:
        return Layout(CgroupSupport(2, ""), dict.fromkeys(CONTROLLERS, where))
    parents, why1 = _try_v1(mounts, groups)
    if parents:
        return Layout(CgroupSupport(1, ""), parents)
    return Layout(CgroupSupport(None, f"cgroup v2: {why2}; cgroup v1: {why1}"))


@functools.cache
def detect() -> CgroupSupport:
    """Which cgroup version seats can use (see the module docstring); never raises.

    The first call may set up the v2 subtree; later calls return the same answer.
    """
    try:
        return host_layout().support
    except Exception as err:  # never raise: a missing feature must not stop the referee
        return CgroupSupport(None, f"detection failed: {err!r}")


class Inotify:
    """An inotify descriptor watching one file for IN_MODIFY (libc through ctypes)."""

    def __init__(self, path: str) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd: int = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        if libc.inotify_add_watch(self.fd, os.fsencode(path), _IN_MODIFY) < 0:
            code = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(code, os.strerror(code), path)


def kill_members(version: int, pids_dir: str) -> None:
    """SIGKILL the processes of the group at ``pids_dir`` without waiting for them to leave.

    v2 writes ``cgroup.kill``. v1 (and v2 before Linux 5.14, without ``cgroup.kill``) first
    sets ``pids.max`` to 0, so that nothing can fork any more, then kills what
    ``cgroup.procs`` lists, round after round while new pids show up (a fork that was under
    way); bounded, and logged if the bound is reached.
    """
    try:
        if version == 2 and os.path.exists(f"{pids_dir}/cgroup.kill"):
            write(f"{pids_dir}/cgroup.kill", "1")
            return
        write(f"{pids_dir}/pids.max", "0")
        killed: set[int] = set()
        for _ in range(16):
            members = set(read_pids(pids_dir)) - killed
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            killed |= members
        logger.warning("cgroup %s: new processes still appear after SIGKILL", pids_dir)
    except FileNotFoundError:
        return
    except OSError as err:
        logger.warning("cgroup %s: cannot kill its processes: %s", pids_dir, err)


def remove(path: str, *, patient: bool = True) -> bool:
    """rmdir ``path``, retrying for up to ~0.7 s while the group is busy (once only if not
    ``patient``); True once it is gone."""
    for wait in _WAITS if patient else _WAITS[:1]:
        time.sleep(wait)
        try:
            os.rmdir(path)
        except FileNotFoundError:
            return True
        except OSError as err:
            if err.errno != errno.EBUSY:
                logger.warning("cannot remove cgroup %s: %s", path, err.strerror)
                return False
        else:
            return True
    logger.warning("cannot remove cgroup %s: it still has processes", path)
    return False


def read_pids(path: str) -> list[int]:
    """The processes in the group at ``path`` ([] if it is gone)."""
    try:
        return [int(pid) for pid in read(f"{path}/cgroup.procs").split()]
    except OSError:
        return []
