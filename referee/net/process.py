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
  second than +5, about the same at 32 (docs/design/performance-notes.md).
* A bot is started by :func:`referee.net.spawn.spawn`, without the event loop (``fork_exec``
  blocks the caller for a few ms), and adopted by :meth:`BotProcess.adopt`, which reads its
  stderr pipe and watches its exit on the loop: through a pidfd (Linux 5.3+) the loop polls
  with everything else, else a waiting thread. The two steps can be apart: a match starts its
  bots before it imports the rest of the referee (docs/performance.md, "Start-up").
* On Linux, bots start through util-linux ``setpriv --pdeathsig KILL``, which execs the bot in
  place: if the referee dies, even by SIGKILL, the kernel kills each bot (its own children are
  left to the bot). Without ``setpriv`` bots start directly and an orphaned SDK bot exits after
  its receive timeout.
* stdin is ``/dev/null`` (the protocol runs over ZeroMQ); stdout is kept with stderr until the
  bot said hello (:meth:`BotProcess.stop_keeping_stdout`), then dropped, or merged into the
  stderr capture for good.  stderr goes to an ``os.pipe`` that the event loop reads
  continuously (``loop.connect_read_pipe``), keeping the last ``tail_bytes`` in memory and
  optionally appending to a log file up to a size cap.  A bot flooding stderr therefore never
  blocks on a full pipe (once adopted) and never grows our memory.  ``wait`` waits for the
  bot's own exit even if a grandchild keeps the pipe.
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
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from referee.net import hidden, leftovers, sandbox
from referee.net.limits import describe_limit, limit_cause
from referee.net.runqueue import RunQueueMeter
from referee.net.sandbox import SandboxLevel
from referee.net.spawn import BotCommand, BotStartError, Spawned, spawn
from referee.net.stderr import StderrSink, StdoutSink, open_log

__all__ = ["BotCommand", "BotProcess", "BotStartError"]

logger = logging.getLogger(__name__)

_PIPE_CLOSE_TIMEOUT = 0.5  # after the group is dead, wait this long for stderr EOF


class BotProcess:
    """A running bot in its own process group.  Create with ``await BotProcess.start(...)``.

    Always finish with ``await terminate()`` (cheap if it already exited): it kills stragglers
    in the group, reaps the child and closes the stderr pipe and log.
    """

    def __init__(self, spawned: Spawned, sink: StderrSink) -> None:
        """Internal; use ``BotProcess.start`` or ``BotProcess.adopt`` (on the running loop:
        the exit is watched from here on)."""
        spawned.taken = True
        self.argv = spawned.cmd.argv
        self._spawned = spawned
        self.limits = spawned.cmd.limits
        self.sandbox = spawned.level
        """The sandbox level the bot runs at."""
        self.uid = None if spawned.lease is None else spawned.lease.uid
        """The host uid the bot runs as (a root referee's bots), else None: the referee's."""
        self._lease = spawned.lease
        self._started = spawned.at
        self._ended: float | None = None
        self._cgroup = spawned.cgroup
        self._out_of_memory = False
        self._popen = spawned.popen
        self._sink = sink
        self._stdout: StdoutSink | None = None
        self._lock = asyncio.Lock()
        self._group_killed = False
        self._terminated = False
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self._popen.pid)
        except (AttributeError, OSError):  # no pidfd here: a thread waits instead
            threading.Thread(target=self._wait_in_thread, daemon=True).start()
        else:
            self._loop.add_reader(self._pidfd, self._on_pidfd)
        if self._cgroup is not None:
            self._cgroup.watch_oom(self._loop, self._on_oom)

    def _on_oom(self) -> None:
        """The kernel killed a process of the seat for its memory limit: the seat ends (a
        child of the bot may have been the one killed; the bot itself plays no further)."""
        self._out_of_memory = True
        self._kill_group()
        if self._cgroup is not None:
            self._cgroup.kill()

    def _on_pidfd(self) -> None:
        """The pidfd is readable: the process has exited; reap it."""
        rc = self._popen.poll()
        if rc is None or self._pidfd is None:
            return
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        self._settle(rc)

    def _wait_in_thread(self) -> None:
        rc = self._popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._settle, rc)

    def _settle(self, rc: int) -> None:
        if not self._exited.done():
            self._ended = time.monotonic()
            self._exited.set_result(rc)

    def cpu_at_most(self) -> float:
        """The most CPU seconds the bot can have used: its lifetime times the CPUs it may run
        on, or less, the seat cgroup's measure where it counts (every process of the seat)."""
        lived = (self._ended or time.monotonic()) - self._started
        bound = lived * len(os.sched_getaffinity(0))
        measured = 0 if self._cgroup is None else self._cgroup.cpu_usage_ns()
        return min(bound, measured / 1e9) if measured > 0 else bound  # 0: unreadable

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
        """Spawn ``cmd`` in a new process group (:func:`referee.net.spawn.spawn`: the
        environment, ``merge_stdout``, ``nice`` and ``hide`` are its) and :meth:`adopt` it.

        ``cmd.sandbox`` is resolved to a level (a weaker one than asked only with a warning).
        Raises ``BotStartError`` if the program cannot be started.
        """
        level = await asyncio.to_thread(sandbox.resolve, cmd.sandbox)
        spawned = spawn(
            cmd, level=level, env=env, base_env=base_env, merge_stdout=merge_stdout, nice=nice,
            hide=hide,
        )  # fmt: skip
        return await cls.adopt(
            spawned, stderr_path=stderr_path, stderr_cap=stderr_cap, tail_bytes=tail_bytes
        )

    @classmethod
    async def adopt(
        cls,
        spawned: Spawned,
        *,
        stderr_path: Path | None = None,
        stderr_cap: int = 1 << 20,
        tail_bytes: int = 4096,
    ) -> BotProcess:
        """Take over a started bot on the running loop: read its stderr pipe (the last
        ``tail_bytes`` in memory; appended to ``stderr_path``, if given, at most
        ``stderr_cap`` bytes: if the file cannot be opened a warning is logged and only the
        tail is kept) and watch its exit. Cancelled or failing, it ends the bot first."""
        log = None if stderr_path is None else open_log(stderr_path)
        sink = StderrSink(tail_bytes, log, stderr_cap)
        bot = cls(spawned, sink)
        pipe = os.fdopen(spawned.stderr_fd, "rb", buffering=0)  # the pipe transport's now
        out = None
        if spawned.stdout_fd is not None:
            out = os.fdopen(spawned.stdout_fd, "rb", buffering=0)
            bot._stdout = StdoutSink(sink)
        connected = 0
        try:
            await bot._loop.connect_read_pipe(lambda: sink, pipe)
            connected = 1
            if out is not None and bot._stdout is not None:
                stdout = bot._stdout
                await bot._loop.connect_read_pipe(lambda: stdout, out)
            connected = 2
        finally:
            if connected < 2:  # includes cancellation: never leak a running bot
                if connected == 0:
                    pipe.close()
                    sink.connection_lost(None)
                if out is not None:
                    out.close()
                    if bot._stdout is not None:
                        bot._stdout.connection_lost(None)
                await bot.terminate(grace=0)
        ago = 1000 * (time.monotonic() - spawned.at)
        logger.debug("started bot pid %d %.0f ms ago: %s", bot.pid, ago, shlex.join(bot.argv))
        return bot

    @property
    def confinement(self) -> str:
        """The sandbox level and what a root referee adds to it, as results and records name
        it: ``namespaces``, ``namespaces+uid``, ``rlimits+uid`` ... (docs/security.md)."""
        extra = [*(["uid"] if self.uid is not None else []), *(["cgroup"] if self._cgroup else [])]
        return "+".join([str(self.sandbox), *extra])

    def run_queue_meter(self) -> RunQueueMeter | None:
        """A :class:`~referee.net.runqueue.RunQueueMeter` of this bot's seat (its cgroup's
        processes and CPU when it has one, else its process group), or None where the kernel
        gives no per-task run-queue delay."""
        cgroup = self._cgroup
        if cgroup is None:
            return RunQueueMeter.create(pid=self.pid)
        return RunQueueMeter.create(
            pid=self.pid,
            cgroup_pids=cgroup.pids,
            cgroup_cpu_ns=cgroup.cpu_usage_ns if cgroup.counts_cpu else None,
        )

    @property
    def pid(self) -> int:
        """The bot's process id."""
        return self._popen.pid

    @property
    def pgid(self) -> int:
        """The bot's process-group id (== pid: it is its group's leader)."""
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """Exit code, ``-signal`` if killed by a signal, None while running."""
        if not self._exited.done():
            return None
        return self._status(self._exited.result())

    def _status(self, rc: int) -> int:
        """The bot's own status (bwrap reports a bot killed by signal N as 128+N)."""
        return sandbox.bwrap_status(rc) if self.sandbox is SandboxLevel.NAMESPACES else rc

    async def wait(self) -> int:
        """Wait for the bot process itself to exit; return its returncode.

        Then waits up to 0.5 s more for stderr EOF, so that ``stderr_tail`` is complete in the
        usual case (a surviving grandchild may hold the pipe open: ``terminate`` cleans up).
        """
        rc = await asyncio.shield(self._exited)
        closing = [
            asyncio.ensure_future(sink.closed.wait())
            for sink in self._sinks()
            if not sink.closed.is_set()
        ]
        if closing:  # (no gather: a cancelled one's CancelledError is logged as never retrieved)
            try:
                await asyncio.wait(closing, timeout=_PIPE_CLOSE_TIMEOUT)
            finally:
                for waiting in closing:
                    waiting.cancel()
        return self._status(rc)

    def _sinks(self) -> list[StderrSink | StdoutSink]:
        return [self._sink] if self._stdout is None else [self._sink, self._stdout]

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
        if self._out_of_memory or (self._cgroup is not None and self._cgroup.oom_kills()):
            hint += f": hit the {describe_limit('memory', self.limits)}"
        elif self._terminated:
            hint += " (terminated by the referee)"
        elif self.sandbox is not SandboxLevel.NONE:
            cause = limit_cause(rc, self.stderr_tail(4096), self.limits, self.cpu_at_most())
            if cause is not None:
                hint += f": {cause}"
        return hint

    def hidden_hint(self) -> str:
        """Under ``namespaces``, what to expose when the bot's stderr complains of a missing
        file that the host has but its sandbox hides (:mod:`referee.net.hidden`), else ""."""
        if self.sandbox is not SandboxLevel.NAMESPACES:
            return ""
        cmd = self._spawned.cmd
        cwd = os.path.abspath(cmd.cwd or os.getcwd())
        search = cmd.env.get("PATH", os.environ.get("PATH", os.defpath))
        found = hidden.hidden_path(
            self.stderr_tail(4096), cmd.argv, cwd, search, cmd.expose, self._spawned.hide
        )
        return "" if found is None else hidden.hint(found)

    def stop_keeping_stdout(self) -> None:
        """The bot said hello: its stdout is dropped from now on (idempotent)."""
        if self._stdout is not None:
            self._stdout.stop()

    @property
    def stdout_kept(self) -> int:
        """How many bytes of the bot's stdout its stderr capture holds (before its hello)."""
        return 0 if self._stdout is None else self._stdout.kept

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
                if not self._exited.done() and self.sandbox is SandboxLevel.NAMESPACES:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(self._exited), grace)
                if not self._exited.done():
                    self._terminated = True
                    self._signal_group(signal.SIGTERM)
                    self._signal_group(signal.SIGCONT)
                    if grace > 0:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(asyncio.shield(self._exited), grace)
                self._kill_group()
                rc = await asyncio.shield(self._exited)
                self._unwatch()
                await asyncio.to_thread(self._release)  # a cgroup's removal may wait a little
                await self._close_capture()
                return self._status(rc)
        except asyncio.CancelledError:
            # Cancelled while waiting out the grace (e.g. a caller's own deadline): the
            # group still dies now, so nothing outlives the seat; the child is reaped later,
            # and only then is its uid given back.
            self._terminated = True
            self._kill_group()
            self._unwatch()
            self._exited.add_done_callback(
                lambda _: self._loop.run_in_executor(None, self._release)
            )
            raise

    def _unwatch(self) -> None:
        """Stop watching the seat's OOM events (on the loop, before :meth:`_release`)."""
        if self._cgroup is not None:
            self._cgroup.unwatch()

    def _release(self) -> None:
        """Give back what the seat held beside its processes (its uid, its cgroup), once its
        bot is dead: whatever of the seat still runs (a ``setsid`` escapee below the
        ``namespaces`` level) is killed through the cgroup first. Blocking (a group's removal
        waits for its killed tasks to leave): run in a thread. Idempotent."""
        if self._cgroup is not None:
            self._cgroup.kill()
            self._cgroup.close()
        if self._lease is not None:
            if self.sandbox is SandboxLevel.RLIMITS:  # no namespace ended what it left
                leftovers.purge(self._lease.uid)
            self._lease.release()

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
        for sink in self._sinks():
            if sink.closed.is_set():
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sink.closed.wait(), _PIPE_CLOSE_TIMEOUT)
            if not sink.closed.is_set():
                # A process outside our group still holds the pipe; stop listening to it.
                logger.info("bot pid %d: output still open after kill; closing it", self.pid)
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
