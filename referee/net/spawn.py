"""Starting a bot's process, without the event loop: the command, its sandbox's command line,
the process in its own group with its stderr on a pipe.

:func:`spawn` returns a :class:`Spawned` process whose stderr nobody reads yet;
:meth:`referee.net.process.BotProcess.adopt` takes it over on the event loop (reads the pipe,
watches the exit, ends the group). Nothing here imports asyncio, so that a match can start its
bots before it imports the event loop's machinery and the rest of the referee
(docs/performance.md, "Start-up"); a bot started here and never adopted is ended with
:meth:`Spawned.kill`. See :mod:`referee.net.process` for what a bot's process is guaranteed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shlex
import signal
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from referee.net import acl, cgroups, leftovers, mounts, sandbox
from referee.net.botuid import UidLease, UidRangeError
from referee.net.cgroups import SeatCgroup
from referee.net.limits import Limits, runtime_env
from referee.net.sandbox import SandboxLevel

__all__ = ["BotCommand", "BotStartError", "Spawned", "spawn"]

logger = logging.getLogger(__name__)


class BotStartError(Exception):
    """A bot program could not be started; ``argv`` and a human-readable ``reason``."""

    def __init__(self, argv: Sequence[str], reason: str) -> None:
        self.argv = tuple(argv)
        self.reason = reason
        super().__init__(f"cannot start bot {shlex.join(self.argv)!r}: {reason}")


@dataclass(frozen=True, slots=True)
class BotCommand:
    """How to run a bot: ``argv`` (no shell), optional ``cwd``, extra environment values
    (``env``), names of the referee's variables to pass on (``pass_env``), its sandbox level
    (``auto``, ``none``, ``rlimits``, ``namespaces``) and its resource ``limits``."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    pass_env: tuple[str, ...] = ()
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    expose: tuple[str, ...] = ()
    """More host paths the bot sees, read-only, under ``namespaces`` (:mod:`referee.net.mounts`)."""
    own_dir: str | None = None
    """The directory of the bot's own files (a version's snapshot, its working directory):
    shown to it even inside the referee's hidden output, and nothing in it makes another host
    path visible (:func:`referee.net.mounts.command_paths`); at ``rlimits`` a root referee lets
    the seat's uid into it (:func:`_let_in`)."""

    def __post_init__(self) -> None:
        if self.sandbox not in sandbox.SANDBOX_CHOICES:
            choices = ", ".join(sandbox.SANDBOX_CHOICES)
            raise ValueError(f"sandbox must be one of {choices}, got {self.sandbox!r}")
        for name in self.pass_env:
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"bad environment variable name {name!r}")
        argv = tuple(self.argv)
        if not argv or not argv[0]:
            raise ValueError("bot command is empty")
        for arg in argv:
            if not isinstance(arg, str) or "\0" in arg:
                raise ValueError(f"bad bot command argument {arg!r}")
        for path in (*self.expose, *([] if self.own_dir is None else [self.own_dir])):
            if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
                raise ValueError(f"a path to expose must be absolute, got {path!r}")
        object.__setattr__(self, "argv", argv)
        object.__setattr__(self, "expose", tuple(self.expose))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))

    @classmethod
    def parse(
        cls, text: str, *, cwd: str | None = None, env: Mapping[str, str] | None = None
    ) -> BotCommand:
        """Split a command line such as ``"python3 my_bot.py --fast"`` POSIX-shell style.

        No shell is involved (no globbing, pipes or variable expansion).  Raises ValueError
        for an empty or unparsable line (e.g. an unclosed quote).
        """
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise ValueError(f"cannot parse bot command {text!r}: {exc}") from exc
        if not argv:
            raise ValueError(f"bot command is empty: {text!r}")
        return cls(tuple(argv), cwd, {} if env is None else env)


@dataclass(eq=False, slots=True)
class Spawned:
    """A bot's process just started: its own process group's leader, its stderr on the pipe
    whose read end is ``stderr_fd``, its stdout on ``stdout_fd`` (None: merged into stderr).
    Adopt it (``BotProcess.adopt``) or :meth:`kill` it."""

    cmd: BotCommand
    popen: subprocess.Popen[bytes]
    stderr_fd: int
    level: SandboxLevel
    """The sandbox level it runs at."""
    stdout_fd: int | None = None
    """The read end of its stdout's pipe (kept until its hello, :mod:`referee.net.stderr`)."""
    lease: UidLease | None = None
    """The host uid it runs as, when the referee is root (released when it ends)."""
    cgroup: SeatCgroup | None = None
    """The seat's cgroup, where the host offers one (removed when it ends)."""
    taken: bool = False
    """True once adopted: the adopter owns the process and the pipe from then on."""
    at: float = field(default_factory=time.monotonic)
    """When it was started (``time.monotonic``)."""
    hide: tuple[str, ...] = ()
    """The directories it sees empty (``namespaces``): the referee's output."""

    def kill(self) -> None:
        """SIGKILL the process group, reap the process and close the pipe, unless adopted
        (then the adopter ends it). Idempotent."""
        if self.taken:
            return
        self.taken = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        os.close(self.stderr_fd)
        if self.stdout_fd is not None:
            os.close(self.stdout_fd)
        if self.cgroup is not None:
            self.cgroup.kill()
            self.cgroup.close()
        if self.lease is not None:
            if self.level is SandboxLevel.RLIMITS:
                leftovers.purge(self.lease.uid)
            self.lease.release()


def spawn(
    cmd: BotCommand,
    *,
    level: SandboxLevel,
    env: Mapping[str, str] | None = None,
    base_env: Mapping[str, str] | None = None,
    merge_stdout: bool = False,
    nice: int = 10,
    hide: Sequence[str] = (),
) -> Spawned:
    """Start ``cmd`` at sandbox ``level`` in a new process group, stdin on ``/dev/null``,
    stderr and stdout on new pipes (stdout into the stderr pipe with ``merge_stdout``).

    The environment is the allowlist of :func:`sandbox.bot_env` and the names in
    ``cmd.pass_env`` taken from ``base_env`` (default: ``os.environ``), updated with
    ``cmd.env``, then with ``env`` (the referee's variables, e.g. the endpoint, win). The bot
    runs ``nice`` steps below the referee's own priority (capped at 19; 0 keeps it equal).
    Under ``namespaces`` the directories in ``hide`` look empty to it. Raises
    :class:`BotStartError` if the program cannot be started.
    """
    child_env = sandbox.bot_env(
        os.environ if base_env is None else base_env,
        level=level,
        pass_env=cmd.pass_env,
        extra=cmd.env,
        gin=env,
    )
    if level is not SandboxLevel.NONE:
        for key, value in runtime_env(cmd.limits).items():
            child_env.setdefault(key, value)
    lease = _lease(cmd, level)
    try:
        launch = sandbox.command_line(
            cmd.argv, cwd=cmd.cwd, env=child_env, level=level, limits=cmd.limits, nice=nice,
            hide=hide, uid=None if lease is None else lease.uid, expose=cmd.expose,
            own=cmd.own_dir, granted=_let_in(cmd, level, lease, hide),
        )  # fmt: skip
    except BaseException as exc:
        if lease is not None:
            lease.release()
        if isinstance(exc, mounts.UnreachableError):
            raise BotStartError(cmd.argv, str(exc)) from exc
        raise
    endpoint = (env or {}).get("GIN_REFEREE_ENDPOINT", "")
    ipc_dir = os.path.dirname(endpoint.removeprefix("ipc://"))
    if (
        lease
        and level is SandboxLevel.RLIMITS
        and endpoint.startswith("ipc://")
        and os.path.isdir(ipc_dir)
    ):
        acl.allow_search(ipc_dir, lease.uid)  # no mounts at rlimits: the uid walks to the socket
    bare = launch.argv == cmd.argv  # it does not resolve: let the spawn fail with its reason
    cgroup = None if bare else _seat_cgroup(cmd, level, nice)
    argv = launch.argv if cgroup is None else (*cgroup.join_argv, *launch.argv)
    rfd, wfd = os.pipe()
    out_r, out_w = (None, wfd) if merge_stdout else os.pipe()
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=wfd,
            cwd=cmd.cwd,
            env=child_env,
            process_group=0,
            pass_fds=launch.pass_fds,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        os.close(rfd)
        if out_r is not None:
            os.close(out_r)
        if cgroup is not None:
            cgroup.close()
        if lease is not None:
            lease.release()
        raise BotStartError(cmd.argv, _start_reason(exc, cmd)) from exc
    finally:
        os.close(wfd)  # the child has its copy
        if out_w != wfd:
            os.close(out_w)
        for fd in launch.pass_fds:
            os.close(fd)
    if nice and level is not SandboxLevel.NAMESPACES:  # there: ``nice`` in the chain
        with contextlib.suppress(OSError):
            own = os.getpriority(os.PRIO_PROCESS, 0)
            os.setpriority(os.PRIO_PROCESS, popen.pid, min(19, own + nice))
    return Spawned(cmd, popen, rfd, level, out_r, lease, cgroup, hide=tuple(hide))


@functools.cache
def _cgroups_usable() -> bool:
    """Whether seats get cgroups here (checked once; leftovers of a referee killed by
    SIGKILL are removed then). Says once, plainly, when they do not."""
    found = cgroups.detect()
    if found.version is None:
        logger.warning("no cgroup per seat: %s; bots are bounded by rlimits only", found.reason)
        return False
    cgroups.sweep_stale()
    return True


def _seat_cgroup(cmd: BotCommand, level: SandboxLevel, nice: int) -> SeatCgroup | None:
    """A cgroup for a sandboxed bot's seat (every process of the bot is in it from its
    start: :attr:`SeatCgroup.join_argv`), or None where there is none."""
    if level is SandboxLevel.NONE or not _cgroups_usable():
        return None
    try:
        return SeatCgroup.create(
            memory=cmd.limits.memory, processes=cmd.limits.processes, nice=min(19, nice)
        )
    except cgroups.CgroupError as exc:
        logger.warning("no cgroup for this seat: %s", exc)
        return None


def _lease(cmd: BotCommand, level: SandboxLevel) -> UidLease | None:
    """A host uid of its own for a bot of a root referee at a sandboxed level, else None.
    Raises :class:`BotStartError` when none is free."""
    if not sandbox.own_uids(level):
        return None
    try:
        return UidLease.acquire()
    except UidRangeError as exc:
        raise BotStartError(cmd.argv, str(exc)) from exc


def _let_in(
    cmd: BotCommand, level: SandboxLevel, lease: UidLease | None, hide: Sequence[str]
) -> tuple[str, ...]:
    """At ``rlimits`` (no mounts), let a root referee's bot reach its own files inside the
    referee's 0700 output: an ACL entry for its uid on each closed directory on the way that
    lies in the output (``hide``), revoked with its uid's lease; the directories above the
    output are the operator's (:func:`mounts.check_reachable` names one that is closed). The
    directories let in; none at other levels."""
    if lease is None or level is not SandboxLevel.RLIMITS or cmd.own_dir is None:
        return ()
    outputs = [os.path.abspath(path) for path in hide]
    closed, here = [], os.path.abspath(cmd.own_dir)
    while here != "/":
        inside = any(here == o or here.startswith(o.rstrip("/") + "/") for o in outputs)
        if inside and not os.stat(here).st_mode & stat.S_IXOTH:
            closed.append(here)
        here = os.path.dirname(here)
    try:
        lease.let_in(closed[::-1])
    except OSError as err:
        raise mounts.UnreachableError(
            f"at sandbox level rlimits the bot runs as uid {lease.uid}, which cannot be let into"
            f" its files ({err.filename or closed[0]}: no ACL here: {err.strerror}): use the"
            " namespaces level"
        ) from err
    return tuple(closed)


def _start_reason(exc: BaseException, cmd: BotCommand) -> str:
    """A human-readable reason for a failed spawn."""
    if isinstance(exc, OSError):
        target = exc.filename if exc.filename is not None else cmd.argv[0]
        if isinstance(exc, FileNotFoundError):
            if cmd.cwd is not None and target == cmd.cwd:
                return f"working directory not found: {cmd.cwd}"
            return f"executable not found: {target}"
        if isinstance(exc, PermissionError):
            return f"permission denied: {target}"
        return f"{exc.strerror or exc}: {target}"
    return str(exc)
