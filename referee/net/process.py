"""Spawning, watching and killing untrusted bot processes.

* Each bot runs in its own process group (``process_group=0``), so ``terminate`` can signal the
  bot *and everything it forked* with one ``killpg``, and a Ctrl-C on the referee's terminal
  does not reach it. It stays in the referee's session on purpose: with Linux autogroup
  scheduling a new session is a new scheduling group, and 2 x N bots in their own groups
  starve the referee of CPU (measured: a 20-25% throughput drop at 16-32 games, and loop
  stalls that delay reply time stamps). Bots also run at a lower priority (``nice`` +10 by
  default), so the referee, which keeps every clock, is never the one kept waiting: one
  runnable nice-0 referee weighs as much as ten runnable bots at +10 (three at +5) in the
  kernel's fair scheduler; with 16 games on 2 cores +10 gave a third more decisions per
  second than +5, about the same at 32 (docs/performance.md).
* At most ``cpu_count`` bots are being spawned at once (``fork_exec`` blocks the loop).
* On Linux, bots start through util-linux ``setpriv --pdeathsig KILL``, which execs the bot in
  place: if the referee dies, even by SIGKILL, the kernel kills each bot (its own children are
  left to the bot). Without ``setpriv`` bots start directly and an orphaned SDK bot exits after
  its receive timeout.
* stdin and stdout are ``/dev/null`` (the protocol runs over ZeroMQ); stdout can optionally be
  merged into the stderr capture.  stderr goes to an ``os.pipe`` that the event loop reads
  continuously (``loop.connect_read_pipe``), keeping the last ``tail_bytes`` in memory and
  optionally appending to a log file up to a size cap.  A bot flooding stderr therefore never
  blocks on a full pipe and never grows our memory.  The pipe is ours, not asyncio's subprocess
  machinery's, so ``wait`` only waits for the bot's exit even if a grandchild keeps the pipe.
* Startup failures (missing executable, permission denied, bad cwd, ...) raise
  ``BotStartError``; no bare ``OSError`` escapes ``BotProcess.start``.

* Each bot runs in the sandbox its ``BotCommand.sandbox`` asks for (default ``auto``: the
  strongest this machine allows; :mod:`referee.net.sandbox`) with a minimal environment. In
  the ``namespaces`` sandbox the process started is ``bwrap``: killing its group kills the
  PID namespace, so nothing the bot forked survives, ``setsid`` escapees included.

Limits (documented, not handled): below the ``namespaces`` level a grandchild that calls
``setsid`` leaves the group and escapes ``terminate``; if the bot's whole group has already
vanished before ``terminate`` and its pid was recycled by a new group leader in between, the
final SIGKILL could hit that group (requires pid wrap-around).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import subprocess
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, TracebackType

from referee.net import sandbox
from referee.net.limits import Limits, limit_cause
from referee.net.sandbox import SandboxLevel
from referee.net.stderr import StderrSink, open_log

__all__ = ["BotCommand", "BotProcess", "BotStartError"]

logger = logging.getLogger(__name__)

_PIPE_CLOSE_TIMEOUT = 0.5  # after the group is dead, wait this long for stderr EOF


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
        object.__setattr__(self, "argv", argv)
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


_SPAWN_LIMITS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _spawn_limit() -> asyncio.Semaphore:
    """This loop's limit on concurrent spawns (one per core)."""
    loop = asyncio.get_running_loop()
    limit = _SPAWN_LIMITS.get(loop)
    if limit is None:
        limit = _SPAWN_LIMITS[loop] = asyncio.Semaphore(os.cpu_count() or 2)
    return limit


class BotProcess:
    """A running bot in its own process group.  Create with ``await BotProcess.start(...)``.

    Always finish with ``await terminate()`` (cheap if it already exited): it kills stragglers
    in the group, reaps the child and closes the stderr pipe and log.
    """

    def __init__(
        self,
        cmd: BotCommand,
        proc: asyncio.subprocess.Process,
        sink: StderrSink,
        level: SandboxLevel = SandboxLevel.NONE,
    ) -> None:
        """Internal; use ``BotProcess.start``."""
        self.argv = cmd.argv
        self.limits = cmd.limits
        self.sandbox = level
        """The sandbox level the bot runs at."""
        self._proc = proc
        self._sink = sink
        self._lock = asyncio.Lock()
        self._group_killed = False
        self._terminated = False

    @classmethod
    async def start(
        cls,
        cmd: BotCommand,
        *,
        env: Mapping[str, str] | None = None,
        base_env: Mapping[str, str] | None = None,
        stderr_path: Path | None = None,
        stderr_cap: int = 1 << 20,
        tail_bytes: int = 4096,
        merge_stdout: bool = False,
        nice: int = 10,
        hide: Sequence[str] = (),
    ) -> BotProcess:
        """Spawn ``cmd`` in a new process group and start capturing its stderr.

        The child's environment is the allowlist of :func:`sandbox.bot_env` and the names in
        ``cmd.pass_env`` taken from ``base_env`` (default: ``os.environ``), updated with
        ``cmd.env``, then with ``env`` (the referee's variables, e.g. the endpoint, win).
        ``cmd.sandbox`` is resolved to a level (a weaker one than asked only with a warning).
        ``stderr_path`` (appended to, at most ``stderr_cap`` bytes per run) is optional; if it
        cannot be opened a warning is logged and only the in-memory tail is kept.  With
        ``merge_stdout`` the bot's stdout goes into the same capture instead of /dev/null.
        The bot runs ``nice`` steps below the referee's own priority (capped at 19; 0 keeps
        it equal). Under ``namespaces`` the directories in ``hide`` (the referee's output)
        look empty to the bot. Raises ``BotStartError`` if the program cannot be started.
        """
        level = await asyncio.to_thread(sandbox.resolve, cmd.sandbox)
        child_env = sandbox.bot_env(
            os.environ if base_env is None else base_env,
            level=level,
            pass_env=cmd.pass_env,
            extra=cmd.env,
            gin=env,
        )
        argv = sandbox.command_line(
            cmd.argv, cwd=cmd.cwd, env=child_env, level=level, limits=cmd.limits, nice=nice,
            hide=hide,
        )  # fmt: skip
        log = None if stderr_path is None else open_log(stderr_path)
        loop = asyncio.get_running_loop()
        rfd, wfd = os.pipe()
        proc = None
        try:
            async with _spawn_limit():
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=subprocess.DEVNULL,
                    stdout=wfd if merge_stdout else subprocess.DEVNULL,
                    stderr=wfd,
                    cwd=cmd.cwd,
                    env=child_env,
                    process_group=0,
                )
            if nice and level is not SandboxLevel.NAMESPACES:  # there: ``nice`` in the chain
                with contextlib.suppress(OSError):
                    own = os.getpriority(os.PRIO_PROCESS, 0)
                    os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, own + nice))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            raise BotStartError(cmd.argv, _start_reason(exc, cmd)) from exc
        finally:
            os.close(wfd)  # the child has its copy
            if proc is None:  # failed or cancelled: release everything
                os.close(rfd)
                if log is not None:
                    log.close()
        sink = StderrSink(tail_bytes, log, stderr_cap)
        bot = cls(cmd, proc, sink, level)
        pipe = os.fdopen(rfd, "rb", buffering=0)  # owned by the pipe transport from here on
        connected = False
        try:
            await loop.connect_read_pipe(lambda: sink, pipe)
            connected = True
        finally:
            if not connected:  # includes cancellation: never leak a running bot
                pipe.close()
                sink.connection_lost(None)
                await bot.terminate(grace=0)
        logger.debug("started bot pid %d: %s", proc.pid, shlex.join(cmd.argv))
        return bot

    @property
    def pid(self) -> int:
        """The bot's process id."""
        return self._proc.pid

    @property
    def pgid(self) -> int:
        """The bot's process-group id (== pid: it is its group's leader)."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """Exit code, ``-signal`` if killed by a signal, None while running."""
        rc = self._proc.returncode
        return None if rc is None else self._status(rc)

    def _status(self, rc: int) -> int:
        """The bot's own status (bwrap reports a bot killed by signal N as 128+N)."""
        return sandbox.bwrap_status(rc) if self.sandbox is SandboxLevel.NAMESPACES else rc

    async def wait(self) -> int:
        """Wait for the bot process itself to exit; return its returncode.

        Then waits up to 0.5 s more for stderr EOF, so that ``stderr_tail`` is complete in the
        usual case (a surviving grandchild may hold the pipe open: ``terminate`` cleans up).
        """
        rc = await self._proc.wait()
        if not self._sink.closed.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._sink.closed.wait(), _PIPE_CLOSE_TIMEOUT)
        return self._status(rc)

    def exit_hint(self) -> str:
        """Describe how the bot ended, e.g. "exited with code 3", "killed by signal SIGSEGV";
        in a sandbox, the limit that most likely ended it (``limits.limit_cause``)."""
        rc = self.returncode
        if rc is None:
            return "still running"
        if rc >= 0:
            hint = f"exited with code {rc}"
        else:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            hint = f"killed by signal {name}"
        if self._terminated:
            hint += " (terminated by the referee)"
        elif self.sandbox is not SandboxLevel.NONE:
            cause = limit_cause(rc, self.stderr_tail(4096), self.limits)
            if cause is not None:
                hint += f": {cause}"
        return hint

    def stderr_tail(self, n: int = 1024) -> str:
        """The last ``n`` bytes of the bot's stderr, decoded as UTF-8 with replacement."""
        if n <= 0:
            return ""
        return bytes(self._sink.tail[-n:]).decode("utf-8", errors="replace")

    async def terminate(self, grace: float = 1.0) -> int:
        """Stop the bot and its whole process group; return the bot's returncode.

        SIGTERM (+SIGCONT, so a stopped bot can act on it) to the group, wait up to ``grace``
        seconds for the bot to exit, then SIGKILL the group (also grandchildren that ignore
        SIGTERM or survived the bot).  Always reaps the child and closes the stderr capture.
        Safe to call repeatedly, concurrently, and on an already dead bot.  In the
        ``namespaces`` sandbox the group is ``bwrap``'s, which does not pass SIGTERM on (its
        death SIGKILLs the namespace): there the bot gets ``grace`` seconds to exit by itself
        (after ``match_end``) before the group is signalled.  Cancelled meanwhile, it still
        SIGKILLs the group before the cancellation propagates.
        """
        try:
            async with self._lock:
                if self._proc.returncode is None and self.sandbox is SandboxLevel.NAMESPACES:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._proc.wait(), grace)
                if self._proc.returncode is None:
                    self._terminated = True
                    self._signal_group(signal.SIGTERM)
                    self._signal_group(signal.SIGCONT)
                    if grace > 0:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._proc.wait(), grace)
                self._kill_group()
                rc = await self._proc.wait()
                await self._close_capture()
                return self._status(rc)
        except asyncio.CancelledError:
            # Cancelled while waiting out the grace (e.g. a caller's own deadline): the
            # group still dies now, so nothing outlives the seat; the child is reaped later.
            self._terminated = True
            self._kill_group()
            raise

    def _kill_group(self) -> None:
        if not self._group_killed:
            self._group_killed = True
            self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.pgid, sig)
        except ProcessLookupError:
            pass
        except PermissionError as exc:  # the pgid was recycled by someone else's process
            logger.warning("cannot signal process group %d: %s", self.pgid, exc)

    async def _close_capture(self) -> None:
        sink = self._sink
        if sink.closed.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sink.closed.wait(), _PIPE_CLOSE_TIMEOUT)
        if not sink.closed.is_set():
            # A process outside our group still holds the pipe; stop listening to it.
            logger.info("bot pid %d: stderr still open after kill; closing it", self.pid)
            if sink.transport is not None:
                sink.transport.close()
            await sink.closed.wait()

    async def __aenter__(self) -> BotProcess:
        """Return self (the process is already running)."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Terminate the bot."""
        await self.terminate()


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
