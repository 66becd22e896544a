"""The sandbox each spawned bot runs in: levels, the environment, the command line.

Pure command building plus a one-time probe of what this machine allows; ``process.py``
spawns what :func:`command_line` returns. Three levels (docs/security.md says what each guarantees):

* ``namespaces``: bubblewrap (``bwrap``) puts the bot and everything it forks in new PID,
  network, mount, IPC, UTS and cgroup namespaces, with no capabilities and ``no_new_privs``,
  and a filesystem of read-only allowlisted paths, a private ``/tmp`` (tmpfs, also ``HOME``),
  its own ``/proc`` and a read-only ``/dev`` of five devices (:mod:`referee.net.mounts`),
  plus the referee's ``ipc://`` socket. As root, bubblewrap runs privileged (no user
  namespace: root makes the mounts, so a bot's files may lie under a 0700 home) and the bot
  runs as a host uid of its own (``setpriv`` inside, every capability set emptied;
  :mod:`referee.net.botuid`), with new user namespaces refused by a seccomp filter
  (:mod:`referee.net.seccomp`). Otherwise a user namespace maps the referee's uid to 65534 and
  forbids further ones. No network but loopback inside the namespace; when local bots connect
  over TCP the host network is kept (a warning says so). When the outer ``bwrap`` dies, the
  namespace's init gets SIGKILL and the kernel kills every process in it, ``setsid``
  escapees included.
* ``rlimits``: ``setpriv --no-new-privs`` (as root: every capability dropped, and the bot's
  own host uid) then ``prlimit``: the limits (:mod:`referee.net.limits`), nothing else. A root
  referee's bot sees the host's paths as they are, so its files must be reachable by a
  stranger (:func:`wrap` refuses, naming the directory, when they are not).
* ``none``: the bot runs as the referee's user, for bots that run in their own containers.

Every level gets the same minimal environment (:func:`bot_env`) and, where util-linux
``setpriv`` exists, a parent-death signal: if the referee dies, even by SIGKILL, the kernel
kills the bot (``bwrap --die-with-parent`` in ``namespaces``). The limits apply to each
process of the bot; ``auto`` picks the strongest level the
kernel allows and says why it could not go further.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from referee.net import bubblewrap, mounts, private, seccomp
from referee.net.keys import secret_dirs
from referee.net.limits import Limits

__all__ = [
    "SANDBOX_CHOICES",
    "SANDBOX_UID",
    "Availability",
    "Launch",
    "SandboxLevel",
    "bot_env",
    "bwrap_status",
    "command_line",
    "detect",
    "own_uids",
    "resolve",
    "wrap",
]

logger = logging.getLogger(__name__)

SANDBOX_UID = 65534
"""The uid and gid a bot has inside the ``namespaces`` sandbox (``nobody``)."""
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL")
"""Variables a bot inherits from the referee's environment (plus ``HOME`` and ``GIN_*``)."""


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


@dataclass(frozen=True, slots=True)
class Availability:
    """The strongest level this machine allows, and why not more (empty when namespaces).
    ``shared_uid`` is True when a root referee's ``namespaces`` run in a user namespace (the
    kernel refused bubblewrap's privileged mode: no ``CAP_SYS_ADMIN``), so its bots cannot
    have host uids of their own."""

    level: SandboxLevel
    reason: str = ""
    shared_uid: bool = False


def _tools() -> dict[str, str | None]:
    found = {name: shutil.which(name) for name in ("prlimit", "setpriv", "nice")}
    return {"bwrap": bubblewrap.find().path, **found}


_probe: subprocess.Popen[bytes] | None = None
"""The namespaces probe started by :func:`probe_soon`, until :func:`detect` reads it."""


def _probe_argv(bwrap: str, *, privileged: bool | None = None) -> list[str]:
    as_root = os.geteuid() == 0 if privileged is None else privileged
    fs = mounts.filesystem_args([], tmp_size=Limits().tmp_size)
    return [bwrap, *_bwrap_args(Limits(), share_net=False, as_root=as_root), *fs, "--", "true"]


def probe_soon() -> None:
    """Start :func:`detect`'s probe now (``bwrap ... true``, a few ms) without waiting for it:
    a caller that has other work to do first (the command line checking its input) then finds
    the answer ready. Does nothing if the tools are missing or the probe ran."""
    global _probe  # noqa: PLW0603 (one probe per process, read by detect)
    tools = _tools()
    if _probe is not None or _detected.cache_info().currsize or None in tools.values():
        return
    with contextlib.suppress(OSError):
        _probe = subprocess.Popen(
            _probe_argv(tools["bwrap"] or "bwrap"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )


PROBE_TIMEOUT = 120.0
"""Seconds the probe may take before it counts as one that could not run. ``bwrap ... true``
takes milliseconds, but a loaded machine or a paused referee (SIGSTOP, a frozen VM) can hold it
far longer: a 10 s limit once made a worker paused for 20 s run its bots at ``rlimits``."""


class _Unsettled(Exception):
    """The probe did not end in time: an answer for now, probed again next time."""

    def __init__(self, found: Availability) -> None:
        super().__init__(found.reason)
        self.found = found


def _run_probe(bwrap: str) -> tuple[int, bytes]:
    """The probe's exit status and stderr: the one :func:`probe_soon` started, else a new one.
    Raises OSError or SubprocessError when it cannot run (``TimeoutExpired`` after
    :data:`PROBE_TIMEOUT`)."""
    global _probe
    started, _probe = _probe, None
    if started is None:
        argv = _probe_argv(bwrap)
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT, check=False)
        return done.returncode, done.stderr
    try:
        _, err = started.communicate(timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        started.kill()
        started.wait()
        raise
    return started.returncode, err


def detect() -> Availability:
    """What the kernel and the installed tools allow, probed once (runs ``bwrap ... true``).
    A probe that did not end within :data:`PROBE_TIMEOUT` gives ``rlimits`` for now and is not
    remembered: the next call probes again (a slow machine is no evidence that namespaces are
    refused, and a level once weakened would stay so for the process's life)."""
    try:
        return _detected()
    except _Unsettled as unsettled:
        return unsettled.found


@functools.cache
def _detected() -> Availability:
    """:func:`detect`'s answer, remembered; raises :class:`_Unsettled` (not remembered) when
    the probe timed out."""
    tools = _tools()
    if tools["prlimit"] is None or tools["setpriv"] is None:
        return Availability(SandboxLevel.NONE, "util-linux prlimit/setpriv not found")
    if tools["bwrap"] is None:
        return Availability(SandboxLevel.RLIMITS, bubblewrap.find().missing)
    try:
        returncode, err = _run_probe(tools["bwrap"])
    except subprocess.TimeoutExpired as exc:
        raise _Unsettled(Availability(SandboxLevel.RLIMITS, f"bwrap could not run: {exc}")) from exc
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(SandboxLevel.RLIMITS, f"bwrap could not run: {exc}")
    if returncode != 0:
        why = err.decode(errors="replace").strip() or f"exit {returncode}"
        if os.geteuid() == 0 and _user_namespace_works(tools["bwrap"]):
            return Availability(
                SandboxLevel.NAMESPACES,
                f"the kernel refused bubblewrap's privileged mode ({why}): bots run in a user "
                "namespace, as root's uid outside it, with no capability",
                shared_uid=True,
            )
        return Availability(SandboxLevel.RLIMITS, f"the kernel refused namespaces ({why})")
    return Availability(SandboxLevel.NAMESPACES)


def _user_namespace_works(bwrap: str) -> bool:
    """Whether ``bwrap`` can make its namespaces inside a new user namespace here (a root
    without ``CAP_SYS_ADMIN`` often may)."""
    argv = _probe_argv(bwrap, privileged=False)
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def own_uids(level: SandboxLevel) -> bool:
    """Whether a bot at ``level`` runs as a host uid of its own: the referee is root, the
    level is sandboxed, and (at ``namespaces``) bubblewrap runs privileged."""
    if level is SandboxLevel.NONE or os.geteuid() != 0:
        return False
    return level is SandboxLevel.RLIMITS or not detect().shared_uid


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


def _bwrap_args(limits: Limits, *, share_net: bool, as_root: bool) -> list[str]:
    """bwrap options common to every bot (and the probe), before the filesystem's. As root,
    bubblewrap runs privileged (no user namespace: the mounts are root's, the bot's uid is the
    host's, set by ``setpriv`` inside) and new user namespaces are refused by a seccomp
    filter; otherwise a user namespace maps the referee's uid to :data:`SANDBOX_UID`."""
    if as_root:
        args = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        args += [] if share_net else ["--unshare-net"]
        args += ["--die-with-parent", "--cap-drop", "ALL"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    else:
        args = ["--unshare-all", "--unshare-user", "--disable-userns"]
        args += ["--share-net"] if share_net else []
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        args += ["--die-with-parent", "--cap-drop", "ALL"]
    if _terminal_injection_possible():
        args.append("--new-session")
    return args


_DROP_CAPS = ("--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all")
"""``setpriv`` options that empty every capability set a process keeps across exec."""


def _uid_options(uid: int) -> list[str]:
    """``setpriv`` options that make a process ``uid`` (group ``uid``, no other group)."""
    return [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def _setuid_argv(uid: int) -> list[str]:
    """``setpriv`` taking a bot from root to ``uid`` with no capability left in any set."""
    return [_tools()["setpriv"] or "setpriv", *_uid_options(uid), *_DROP_CAPS, "--"]


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


@dataclass(frozen=True, slots=True)
class Launch:
    """What to spawn for a bot: ``argv``, and the descriptors it must inherit (``pass_fds``:
    the seccomp program's; the spawner closes them once the process is started)."""

    argv: tuple[str, ...]
    pass_fds: tuple[int, ...] = ()


def wrap(
    argv: Sequence[str],
    *,
    level: SandboxLevel,
    limits: Limits,
    cwd: str | None,
    endpoint: str,
    nice: int,
    env: Mapping[str, str],
    hide: Sequence[str] = (),
    uid: int | None = None,
    expose: Sequence[str] = (),
    own: str | None = None,
    granted: Sequence[str] = (),
) -> Launch:
    """The command line that runs ``argv`` at ``level`` (``none``: ``argv`` unchanged; the
    caller adds its parent-death signal), as host ``uid`` when given (the referee is root).
    ``endpoint`` is the bot's ``GIN_REFEREE_ENDPOINT``: an ``ipc://`` socket is bound in;
    ``tcp://`` keeps the host network; any other (none) gives no network at all. ``expose``
    lists more host paths the bot sees (read-only); ``own`` is the directory of its own files,
    shown even inside a hidden one (at ``rlimits``, ``granted`` lists the directories its
    ``uid`` was let into: :mod:`referee.net.mounts`)."""
    tools = _tools()
    prlimit = [tools["prlimit"] or "prlimit", *limits.prlimit_args(), "--"]
    setuid = [] if uid is None else _setuid_argv(uid)
    if level is SandboxLevel.RLIMITS:
        setpriv = [tools["setpriv"] or "setpriv", "--pdeathsig", "KILL", "--no-new-privs"]
        if os.geteuid() == 0:
            setpriv += _DROP_CAPS
        if uid is not None:
            mounts.check_reachable(argv, cwd, env.get("PATH"), uid, granted)
            setpriv += _uid_options(uid)
        return Launch((*setpriv, "--", *prlimit, *argv))
    if level is not SandboxLevel.NAMESPACES:
        return Launch(tuple(argv))
    share_net = endpoint.startswith("tcp://")
    if share_net:
        _warn_once("local bots connect over TCP: the sandbox keeps the host network "
                   "(the ipc local transport cuts it off)")  # fmt: skip
    workdir = os.path.abspath(cwd or os.getcwd())
    as_root = uid is not None
    args = [tools["bwrap"] or "bwrap", *_bwrap_args(limits, share_net=share_net, as_root=as_root)]
    fds: tuple[int, ...] = ()
    if as_root:
        fd = seccomp.program_fd()
        if fd is None:
            _warn_once(f"no seccomp filter for {os.uname().machine}: bots of a root referee "
                       "can make user namespaces of their own")  # fmt: skip
        else:
            args += ["--seccomp", str(fd)]
            fds = (fd,)
    paths = [*mounts.command_paths(argv, workdir, env.get("PATH"), own), *expose]
    socket_path = endpoint.removeprefix("ipc://")
    sockets = [socket_path] if endpoint.startswith("ipc://") and not share_net else []
    # the referee's output (this run's, every run's: a bot may share the referee's uid) and
    # keys: an empty tmpfs
    hidden = [*hide, *secret_dirs(), *private.outputs()]
    args += mounts.filesystem_args(
        paths, tmp_size=limits.tmp_size, hide=hidden, sockets=sockets, own=own
    )
    args += ["--clearenv", "--chdir", workdir if os.path.isdir(workdir) else "/"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    # bwrap's children are not the process the caller renices: lower their priority here.
    renice = [tools["nice"] or "nice", "-n", str(nice)] if nice > 0 else []
    return Launch((*args, "--", *setuid, *renice, *prlimit, *argv), fds)


def bwrap_status(returncode: int) -> int:
    """bwrap reports a child killed by signal N as exit code 128+N: back to asyncio's -N."""
    if 128 < returncode < 128 + 65 and (returncode - 128) in signal.valid_signals():
        return 128 - returncode
    return returncode


def command_line(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    level: SandboxLevel,
    limits: Limits,
    nice: int,
    hide: Sequence[str] = (),
    uid: int | None = None,
    expose: Sequence[str] = (),
    own: str | None = None,
    granted: Sequence[str] = (),
) -> Launch:
    """What to spawn for ``argv`` at ``level`` (``env`` is the bot's whole environment), as
    host ``uid`` if given; under ``namespaces`` the directories in ``hide`` look empty to the
    bot and it sees ``expose`` and ``own`` besides what its command needs (:func:`wrap`).
    The bare argv when the program or the working directory does not resolve, so that the
    spawn fails with its precise reason."""
    if not _resolves(argv[0], cwd, env):
        return Launch(tuple(argv))
    if level is SandboxLevel.NONE:
        setpriv = _setpriv()
        bare = tuple(argv) if setpriv is None else (setpriv, "--pdeathsig", "KILL", "--", *argv)
        return Launch(bare)
    endpoint = env.get("GIN_REFEREE_ENDPOINT", "")
    return wrap(
        argv, level=level, limits=limits, cwd=cwd, endpoint=endpoint, nice=nice, env=env,
        hide=hide, uid=uid, expose=expose, own=own, granted=granted,
    )  # fmt: skip


@functools.cache
def _setpriv() -> str | None:
    """util-linux ``setpriv`` if it exists here and knows ``--pdeathsig`` (checked once).
    It sets the signal and execs the bot in place (same pid, same process group)."""
    path = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--help"], capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if b"--pdeathsig" in out.stdout else None


def _resolves(program: str, cwd: str | None, env: Mapping[str, str]) -> bool:
    """True if the working directory exists and the program is an executable file."""
    if cwd is not None and not os.path.isdir(cwd):
        return False
    if "/" in program:
        path = os.path.join(cwd or os.getcwd(), program)
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None
