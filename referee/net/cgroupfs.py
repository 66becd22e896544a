"""The text side of cgroups, without I/O: where the hierarchies are, what a group's files say,
and what a seat group's files are set to.

:mod:`referee.net.cgroups` reads ``/proc/self/mountinfo``, ``/proc/self/cgroup`` and a group's
counter files and hands the text to the functions here, which is what lets the cgroup v2 side
be unit-tested on a machine whose controllers are all bound to v1 (the kernel's formats are in
``Documentation/admin-guide/cgroup-v1/`` and ``cgroup-v2.rst``, and ``proc(5)`` for the two
``/proc`` files).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

__all__ = [
    "Mount",
    "cgroup_dir",
    "cpu_weight_for_nice",
    "parse_flat_keyed",
    "parse_mountinfo",
    "parse_proc_cgroup",
    "seat_settings",
]

# kernel/sched/core.c, sched_prio_to_weight[]: nice -20 .. 19.
_PRIO_TO_WEIGHT = (
    88761, 71755, 56483, 46273, 36291,
    29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906,
    3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423,
    335, 272, 215, 172, 137,
    110, 87, 70, 56, 45,
    36, 29, 23, 18, 15,
)  # fmt: skip


def cpu_weight_for_nice(nice: int) -> int:
    """The CFS load weight of one task at ``nice`` (the kernel's ``sched_prio_to_weight``).

    >>> cpu_weight_for_nice(0), cpu_weight_for_nice(10), cpu_weight_for_nice(19)
    (1024, 110, 15)

    Raises ValueError outside -20..19 (``setpriority`` would clamp; a config should not).
    """
    if not -20 <= nice <= 19:
        raise ValueError(f"nice must be in -20..19, got {nice}")
    return _PRIO_TO_WEIGHT[nice + 20]


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of ``/proc/self/mountinfo`` that matters here."""

    root: str
    """The directory of the filesystem (here: of the cgroup hierarchy) mounted there."""
    mount_point: str
    """Where it is mounted, unescaped."""
    fstype: str
    """``cgroup`` (v1) or ``cgroup2``, or anything else."""
    super_options: frozenset[str]
    """The per-superblock options; for v1 they name the controllers (``cpu``, ``memory``...)."""


def _unescape(field: str) -> str:
    """Undo mountinfo's octal escapes (``\\040`` is a space)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts in ``/proc/<pid>/mountinfo`` text (proc(5)); malformed lines are skipped."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 3:
            continue
        mounts.append(
            Mount(
                root=_unescape(fields[3]),
                mount_point=_unescape(fields[4]),
                fstype=tail[0],
                super_options=frozenset(tail[2].split(",")),
            )
        )
    return mounts


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """``{controller: path}`` from ``/proc/<pid>/cgroup``; the v2 line ``0::/x`` is key ``""``.

    >>> parse_proc_cgroup("4:memory:/a/b\\n1:cpu,cpuacct:/\\n0::/c\\n")
    {'memory': '/a/b', 'cpu': '/', 'cpuacct': '/', '': '/c'}
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if parts[0] == "0" and not controllers:
            found[""] = path
            continue
        for controller in controllers.split(","):
            found[controller] = path
    return found


def cgroup_dir(mounts: list[Mount], fstype: str, controller: str, path: str) -> str | None:
    """The directory of cgroup ``path`` (as ``/proc/self/cgroup`` names it) in the hierarchy of
    ``controller`` (v1; ``""`` for v2), or None when no mount of ``fstype`` shows it.

    A hierarchy may be mounted at a subdirectory (a container's view): the mount whose root
    contains ``path`` is the one used.
    """
    for mount in mounts:
        if mount.fstype != fstype or (controller and controller not in mount.super_options):
            continue
        root = mount.root.rstrip("/")
        if path != mount.root and not path.startswith(root + "/"):
            continue
        rest = path[len(root) :].lstrip("/")
        return posixpath.normpath(posixpath.join(mount.mount_point, rest))
    return None


def parse_flat_keyed(text: str) -> dict[str, int]:
    """``{key: value}`` from a "flat keyed" cgroup file: ``memory.events``, ``pids.events``,
    ``cpu.stat``, v1 ``memory.oom_control``. Lines that are not ``key integer`` are skipped.

    >>> parse_flat_keyed("oom_kill_disable 0\\nunder_oom 0\\noom_kill 3\\n")["oom_kill"]
    3
    """
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def seat_settings(
    version: int, *, memory: int, processes: int, nice: int, memsw: bool, swap: bool
) -> list[tuple[str, str, str]]:
    """What a seat group's files are set to, in order: ``(controller, file, value)``.

    ``memsw`` (v1) and ``swap`` (v2) say whether the swap-accounting file exists; with it, swap
    is closed to the seat (v1: memory+swap = memory; v2: ``memory.swap.max`` 0), so the limit
    is one of RAM and a bot cannot trade it for swapping the host. The v1 file must be written
    after ``memory.limit_in_bytes`` (the kernel wants memsw >= memory).

    >>> seat_settings(2, memory=1 << 30, processes=64, nice=19, memsw=False, swap=True)
    ... # doctest: +NORMALIZE_WHITESPACE
    [('pids', 'pids.max', '64'), ('memory', 'memory.max', '1073741824'),
     ('memory', 'memory.swap.max', '0'), ('memory', 'memory.oom.group', '1'),
     ('cpu', 'cpu.weight', '1')]
    """
    weight = cpu_weight_for_nice(nice)
    settings = [("pids", "pids.max", str(processes))]
    if version == 1:
        settings.append(("memory", "memory.limit_in_bytes", str(memory)))
        if memsw:
            settings.append(("memory", "memory.memsw.limit_in_bytes", str(memory)))
        settings.append(("cpu", "cpu.shares", str(weight)))
    else:
        settings.append(("memory", "memory.max", str(memory)))
        if swap:
            settings.append(("memory", "memory.swap.max", "0"))
        settings.append(("memory", "memory.oom.group", "1"))
        settings.append(("cpu", "cpu.weight", str(max(1, round(weight * 100 / 1024)))))
    return settings
