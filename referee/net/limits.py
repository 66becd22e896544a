"""Resource limits of a sandboxed bot, and which limit most likely ended one.

:class:`Limits` holds the rlimits ``prlimit`` applies to every process of a bot (and the size
of its private ``/tmp``); :func:`limit_cause` infers from an exit status and the stderr tail
which of them ended it, for the fault's detail (docs/design/faults.md has the table).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

__all__ = ["JVM_OPTIONS", "Limits", "describe_limit", "limit_cause", "parse_size", "runtime_env"]

_MIB = 1 << 20


def parse_size(text: str | int, what: str) -> int:
    """Bytes from ``1048576``, ``"512M"``, ``"2G"`` (K, M, G, T: powers of 1024)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", str(text), re.IGNORECASE)
        if match is None:
            raise ValueError(f"{what}: expected bytes such as 1048576, 512M or 2G, got {text!r}")
        value = int(match[1]) << (10 * " KMGT".index(match[2].upper() or " "))
    if value <= 0:
        raise ValueError(f"{what}: must be positive, got {text!r}")
    return value


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of every process of a bot (``rlimits`` and ``namespaces`` levels)."""

    address_space: int = 2048 * _MIB
    """RLIMIT_AS, bytes of virtual memory per process."""
    cpu_seconds: int = 3600
    """RLIMIT_CPU soft limit (SIGXCPU); the hard limit, one second later, is SIGKILL."""
    processes: int = 256
    """RLIMIT_NPROC (not enforced by the kernel for uid 0: see docs/security.md)."""
    open_files: int = 256
    """RLIMIT_NOFILE."""
    file_size: int = 64 * _MIB
    """RLIMIT_FSIZE, bytes per written file (SIGXFSZ)."""
    tmp_size: int = 64 * _MIB
    """Size of the private ``/tmp`` (``namespaces`` level)."""
    memory: int = 2048 * _MIB
    """Memory of the whole seat, every process together (its cgroup, where there is one)."""

    _SIZES = ("address_space", "file_size", "tmp_size", "memory")

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object], base: Limits | None = None) -> Limits:
        """``base`` (default: the defaults) with the named fields replaced; sizes accept
        ``512M``/``2G``. Raises ValueError naming an unknown key or a bad value."""
        known = [f.name for f in fields(cls)]
        changes: dict[str, int] = {}
        for key, value in raw.items():
            if key not in known:
                raise ValueError(f"unknown limit {key!r} (known: {', '.join(known)})")
            if key in cls._SIZES and isinstance(value, str | int):
                changes[key] = parse_size(value, key)
            elif isinstance(value, int) and not isinstance(value, bool) and value > 0:
                changes[key] = value
            elif isinstance(value, str) and value.isdigit() and int(value) > 0:
                changes[key] = int(value)
            else:
                raise ValueError(f"limit {key}: expected a positive integer, got {value!r}")
        return replace(base or cls(), **changes)

    @classmethod
    def parse_items(cls, items: Sequence[str], base: Limits | None = None) -> Limits:
        """From ``KEY=VALUE`` words (the CLI's ``--limit``)."""
        raw: dict[str, object] = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--limit expects KEY=VALUE, got {item!r}")
            raw[key.strip().replace("-", "_")] = value.strip()
        return cls.from_mapping(raw, base)

    def prlimit_args(self) -> list[str]:
        """``prlimit`` options setting soft and hard limits (core dumps off)."""
        cpu = self.cpu_seconds
        return [
            f"--as={self.address_space}",
            f"--cpu={cpu}:{cpu + 1}",
            f"--nproc={self.processes}",
            f"--nofile={self.open_files}",
            f"--fsize={self.file_size}",
            "--core=0",
        ]


JVM_OPTIONS = "-XX:CompressedClassSpaceSize=64m"
"""What a sandboxed bot's ``JAVA_TOOL_OPTIONS`` is unless the operator sets it: a JVM reserves
its heap within the address-space limit (half of it) but 1 GiB of class space beside it, and
under the default 2 GiB it dies before ``main`` ("Could not reserve enough space", on its
stdout). 64 MiB holds the classes of any bot; a command line's own ``-XX`` options win."""


MALLOC_ARENAS = "2"
"""What a sandboxed bot's ``MALLOC_ARENA_MAX`` is unless the operator sets it: glibc gives each
thread that allocates its own arena of 64 MiB of address space, up to 8 per core, and a JVM's
compiler and GC threads then run out of the 2 GiB limit after a few hands ("There is
insufficient memory for the Java Runtime Environment to continue", on its stdout, exit
status 1). Two arenas cost a threaded program little; a single-threaded one uses one."""


def runtime_env(limits: Limits) -> dict[str, str]:
    """Variables a bot gets, unless the operator gives them, so that its runtime runs within
    ``limits`` (:data:`JVM_OPTIONS` and :data:`MALLOC_ARENAS`, when the address space is below
    4 GiB)."""
    if limits.address_space >= 4096 * _MIB:
        return {}
    return {"JAVA_TOOL_OPTIONS": JVM_OPTIONS, "MALLOC_ARENA_MAX": MALLOC_ARENAS}


_STDERR_CAUSES: tuple[tuple[str, str], ...] = (
    (r"MemoryError|out of memory|Cannot allocate memory|allocation failed|bad_alloc",
     "address_space"),
    (r"Too many open files|EMFILE", "open_files"),
    (r"(?s)fork.*(Resource temporarily unavailable|EAGAIN)|can't start new thread|"
     r"Cannot fork|fork: retry", "processes"),
    (r"File too large|EFBIG", "file_size"),
    (r"No space left on device|ENOSPC", "tmp_size"),
)  # fmt: skip
_SIGNAL_CAUSES = {
    signal.SIGXCPU: "cpu_seconds",
    signal.SIGXFSZ: "file_size",
}


CPU_MEASURE_SLACK = 0.2
"""How far below the CPU-time limit a measure may be and still count as reaching it: a seat
cgroup's count was 5 % under the kernel's own (SIGXCPU at 1 s, 0.95 s counted)."""


def limit_cause(
    returncode: int, stderr_tail: str, limits: Limits, cpu_used: float | None = None
) -> str | None:
    """Which limit most likely ended a bot, with its value, or None (``returncode`` as
    asyncio gives it: -N when killed by signal N). docs/design/faults.md has the table. The
    CPU-time limit is named for a SIGKILL only if ``cpu_used``, the most CPU seconds the bot
    can have used (None: unknown), reached it (give or take :data:`CPU_MEASURE_SLACK`): a
    SIGKILL from outside after a second is no CPU limit. A SIGXCPU is the limit's own signal
    (a seat's cgroup may count less than the kernel's limit does, on a loaded machine)."""
    if returncode < 0 and -returncode in signal.valid_signals():
        sig = signal.Signals(-returncode)
        reached = cpu_used is None or cpu_used >= limits.cpu_seconds * (1 - CPU_MEASURE_SLACK)
        if sig in _SIGNAL_CAUSES:
            key = _SIGNAL_CAUSES[sig]
            return f"hit the {_describe(key, limits)}"  # only the limit itself sends these
        if sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            guess = "cpu_seconds" if sig == signal.SIGKILL else "address_space"
            key = _stderr_cause(stderr_tail) or guess
            if key == "cpu_seconds" and not reached:
                return None
            return f"possibly the {_describe(key, limits)}"
        return None
    found = _stderr_cause(stderr_tail)
    return None if found is None else f"hit the {_describe(found, limits)}"


def _stderr_cause(stderr_tail: str) -> str | None:
    for pattern, key in _STDERR_CAUSES:
        if re.search(pattern, stderr_tail):
            return key
    return None


_LIMIT_NAMES = {
    "address_space": "address-space (memory) limit",
    "cpu_seconds": "CPU-time limit",
    "processes": "process limit",
    "open_files": "open-files limit",
    "file_size": "file-size limit",
    "tmp_size": "private /tmp size",
    "memory": "seat's memory limit",
}
_RLIMITS = {"address_space": "RLIMIT_AS", "cpu_seconds": "RLIMIT_CPU",
            "processes": "RLIMIT_NPROC", "open_files": "RLIMIT_NOFILE",
            "file_size": "RLIMIT_FSIZE"}  # fmt: skip


def describe_limit(key: str, limits: Limits) -> str:
    """A limit's name and value for a fault's detail, e.g. "seat's memory limit (2048 MiB,
    every process of the seat: cgroup)"."""
    return _describe(key, limits)


def _describe(key: str, limits: Limits) -> str:
    value = getattr(limits, key)
    shown = f"{value}"
    if key in Limits._SIZES:
        shown = f"{value // _MIB} MiB" if value % _MIB == 0 else f"{value} bytes"
    if key == "cpu_seconds":
        shown += " s"
    rlimit = f", {_RLIMITS[key]}" if key in _RLIMITS else ""
    if key == "memory":
        rlimit = ", every process of the seat: cgroup"
    return f"{_LIMIT_NAMES[key]} ({shown}{rlimit})"
