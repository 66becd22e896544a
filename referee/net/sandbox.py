"""The sandbox each spawned bot runs in: levels, limits, the command line, exit causes.

Pure command building plus a one-time probe of what this machine allows; ``process.py``
spawns what :func:`wrap` returns. Three levels (docs/security.md says what each guarantees):

* ``namespaces``: bubblewrap (``bwrap``) puts the bot and everything it forks in new user,
  PID, network, mount, IPC, UTS and cgroup namespaces: uid 65534 inside, no capabilities,
  ``no_new_privs``, no further user namespaces, the whole filesystem read-only
  except a private ``/tmp`` (tmpfs, also ``HOME``), its own ``/proc``, a minimal ``/dev`` and
  the referee's ``ipc://`` socket directory. No network but loopback inside the namespace;
  when local bots connect over TCP the host network is kept (a warning says so). When the
  outer ``bwrap`` dies, the namespace's init gets SIGKILL and the kernel kills every process
  in it, ``setsid`` escapees included.
* ``rlimits``: ``setpriv --no-new-privs`` (dropping every capability when the referee is
  root) then ``prlimit``: the limits below, nothing else.
* ``none``: the bot runs as the referee's user, for bots that run in their own containers.

Every level gets the same minimal environment (:func:`bot_env`). The limits (``prlimit``
inside the sandbox) apply to each process of the bot; ``auto`` picks the strongest level the
kernel allows and says why it could not go further.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from enum import StrEnum

__all__ = [
    "SANDBOX_CHOICES",
    "Limits",
    "SandboxLevel",
    "bot_env",
    "detect",
    "limit_cause",
    "parse_size",
    "resolve",
    "wrap",
    "bwrap_status",
]

logger = logging.getLogger(__name__)

SANDBOX_UID = 65534
"""The uid and gid a bot has inside the ``namespaces`` sandbox (``nobody``)."""
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL")
"""Variables a bot inherits from the referee's environment (plus ``HOME`` and ``GIN_*``)."""
_MIB = 1 << 20


class SandboxLevel(StrEnum):
    """How strongly a bot is confined, weakest first."""

    NONE = "none"
    RLIMITS = "rlimits"
    NAMESPACES = "namespaces"

    @property
    def rank(self) -> int:
        """0 for none, 1 for rlimits, 2 for namespaces."""
        return list(SandboxLevel).index(self)


SANDBOX_CHOICES = ("auto", "none", "rlimits", "namespaces")
"""Values of ``--sandbox`` and of the ``sandbox`` config keys."""


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

    _SIZES = ("address_space", "file_size", "tmp_size")

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


@dataclass(frozen=True, slots=True)
class Availability:
    """The strongest level this machine allows, and why not more (empty when namespaces)."""

    level: SandboxLevel
    reason: str = ""


def _tools() -> dict[str, str | None]:
    return {name: shutil.which(name) for name in ("bwrap", "prlimit", "setpriv", "nice")}


@functools.cache
def detect() -> Availability:
    """Probe once what the kernel and the installed tools allow (runs ``bwrap ... true``)."""
    tools = _tools()
    if tools["prlimit"] is None or tools["setpriv"] is None:
        return Availability(SandboxLevel.NONE, "util-linux prlimit/setpriv not found")
    if tools["bwrap"] is None:
        return Availability(SandboxLevel.RLIMITS, "bubblewrap (bwrap) is not installed")
    probe = [tools["bwrap"] or "bwrap", *_bwrap_args(Limits(), share_net=False), "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(SandboxLevel.RLIMITS, f"bwrap could not run: {exc}")
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return Availability(SandboxLevel.RLIMITS, f"the kernel refused namespaces ({why})")
    return Availability(SandboxLevel.NAMESPACES)


def resolve(requested: str) -> SandboxLevel:
    """The level to run at for ``requested`` (``auto`` or a level): the strongest available
    not above it. Logs a warning naming why whenever the result is weaker than asked (or,
    for ``auto``, weaker than ``namespaces``)."""
    if requested not in SANDBOX_CHOICES:
        raise ValueError(f"sandbox must be one of {', '.join(SANDBOX_CHOICES)}: {requested!r}")
    wanted = SandboxLevel.NAMESPACES if requested == "auto" else SandboxLevel(requested)
    if wanted is SandboxLevel.NONE:
        return wanted
    found = detect()
    if found.level.rank >= wanted.rank:
        return wanted
    _warn_once(f"sandbox {wanted} unavailable: {found.reason}; bots run at level {found.level}")
    return found.level


@functools.cache
def _warn_once(message: str) -> None:
    logger.warning("%s", message)


def bot_env(
    referee_env: Mapping[str, str],
    *,
    level: SandboxLevel,
    pass_env: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
    gin: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A bot's whole environment: the allowlist and the names in ``pass_env`` taken from
    ``referee_env``, ``HOME`` (the private ``/tmp`` under ``namespaces``), then ``extra``
    (the operator's values for this bot), then ``gin`` (the referee's ``GIN_*`` variables)."""
    env = {k: referee_env[k] for k in (*ENV_ALLOWLIST, *pass_env) if k in referee_env}
    env.setdefault("PATH", os.defpath)
    if level is SandboxLevel.NAMESPACES:
        env["HOME"] = env["TMPDIR"] = "/tmp"
    elif "HOME" in referee_env:
        env.setdefault("HOME", referee_env["HOME"])
    env.update(extra or {})
    env.update(gin or {})
    return env


def _bwrap_args(limits: Limits, *, share_net: bool) -> list[str]:
    """bwrap options common to every bot (and the probe)."""
    args = ["--unshare-all", "--unshare-user", "--disable-userns"]
    if share_net:
        args.append("--share-net")
    args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    args += ["--die-with-parent", "--cap-drop", "ALL"]
    if _terminal_injection_possible():
        args.append("--new-session")
    args += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(limits.tmp_size), "--tmpfs", "/tmp"]
    return args


@functools.cache
def _terminal_injection_possible() -> bool:
    """True if a bot could push keystrokes into the operator's terminal (TIOCSTI): the
    referee has a controlling terminal and the kernel still allows TIOCSTI on it. Only then
    does the bot get a session of its own, because a session is also a scheduling autogroup
    (see ``process.py``): the bot's priority below the referee's then no longer holds."""
    try:
        with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
            if f.read().strip() == "0":
                return False
    except OSError:
        pass  # kernels before 6.2 always allow it
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _hidden_paths(argv: Sequence[str], cwd: str) -> list[str]:
    """Directories under ``/tmp`` that the command names (its cwd, files in argv): the
    private tmpfs would hide them, so they are bound back read-only."""
    found: list[str] = []
    for word in (cwd, *argv):
        path = os.path.normpath(os.path.join(cwd, word)) if word else ""
        if not (path == "/tmp" or path.startswith("/tmp/")) or not os.path.exists(path):
            continue
        directory = path if os.path.isdir(path) else os.path.dirname(path)
        if directory != "/tmp" and directory not in found:
            found.append(directory)
    return found


def wrap(
    argv: Sequence[str],
    *,
    level: SandboxLevel,
    limits: Limits,
    cwd: str | None,
    endpoint: str,
    nice: int,
    env: Mapping[str, str],
) -> tuple[str, ...]:
    """The command line that runs ``argv`` at ``level`` (``none``: ``argv`` unchanged; the
    caller adds its parent-death signal). ``endpoint`` is the bot's ``GIN_REFEREE_ENDPOINT``:
    an ``ipc://`` socket's directory is bound in; ``tcp://`` keeps the host network; any
    other (none) gives no network at all."""
    tools = _tools()
    prlimit = [tools["prlimit"] or "prlimit", *limits.prlimit_args(), "--"]
    if level is SandboxLevel.RLIMITS:
        setpriv = [tools["setpriv"] or "setpriv", "--pdeathsig", "KILL", "--no-new-privs"]
        if os.geteuid() == 0:
            setpriv += ["--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
        return (*setpriv, "--", *prlimit, *argv)
    if level is not SandboxLevel.NAMESPACES:
        return tuple(argv)
    share_net = endpoint.startswith("tcp://")
    if share_net:
        _warn_once("local bots connect over TCP: the sandbox keeps the host network "
                   "(the ipc local transport cuts it off)")  # fmt: skip
    workdir = os.path.abspath(cwd or os.getcwd())
    args = [tools["bwrap"] or "bwrap", *_bwrap_args(limits, share_net=share_net)]
    binds = _hidden_paths(argv, workdir)
    ipc_dir = os.path.dirname(endpoint.removeprefix("ipc://"))
    if not share_net and os.path.isdir(ipc_dir):
        binds.append(ipc_dir)
    for path in binds:
        args += ["--ro-bind", path, path]
    args += ["--clearenv", "--chdir", workdir]
    for key, value in env.items():
        args += ["--setenv", key, value]
    # bwrap's children are not the process the caller renices: lower their priority here.
    renice = [tools["nice"] or "nice", "-n", str(nice)] if nice > 0 else []
    return (*args, "--", *renice, *prlimit, *argv)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


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


def limit_cause(returncode: int, stderr_tail: str, limits: Limits) -> str | None:
    """Which limit most likely ended a bot, with its value, or None (``returncode`` as
    asyncio gives it: -N when killed by signal N). docs/design/faults.md has the table."""
    if returncode < 0 and -returncode in signal.valid_signals():
        sig = signal.Signals(-returncode)
        if sig in _SIGNAL_CAUSES:
            return f"hit the {_describe(_SIGNAL_CAUSES[sig], limits)}"
        if sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            guess = "cpu_seconds" if sig == signal.SIGKILL else "address_space"
            return f"possibly the {_describe(_stderr_cause(stderr_tail) or guess, limits)}"
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
}
_RLIMITS = {"address_space": "RLIMIT_AS", "cpu_seconds": "RLIMIT_CPU",
            "processes": "RLIMIT_NPROC", "open_files": "RLIMIT_NOFILE",
            "file_size": "RLIMIT_FSIZE"}  # fmt: skip


def _describe(key: str, limits: Limits) -> str:
    value = getattr(limits, key)
    shown = f"{value}"
    if key in Limits._SIZES:
        shown = f"{value // _MIB} MiB" if value % _MIB == 0 else f"{value} bytes"
    if key == "cpu_seconds":
        shown += " s"
    rlimit = f", {_RLIMITS[key]}" if key in _RLIMITS else ""
    return f"{_LIMIT_NAMES[key]} ({shown}{rlimit})"


def bwrap_status(returncode: int) -> int:
    """bwrap reports a child killed by signal N as exit code 128+N: back to asyncio's -N."""
    if 128 < returncode < 128 + 65 and (returncode - 128) in signal.valid_signals():
        return 128 - returncode
    return returncode
