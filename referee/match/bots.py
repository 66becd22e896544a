"""A seat's bot: its spec (a command line or a remote seat), its start with the referee's
environment (endpoint, token, seed, CURVE keys), its watch (an exit before the seat is done is
a crash fault) and what its fault quotes of its stderr (:mod:`referee.net.quoting`).
:mod:`referee.match.runner` plays a match with these; ``check`` and ``replay --feed`` start
their bots with them too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from referee.match.clock import TimeControl
from referee.match.faults import FaultKind
from referee.net import sandbox
from referee.net.quoting import quote_stderr, start_hint
from referee.net.sandbox import SandboxLevel
from referee.net.spawn import BotCommand, BotStartError

if TYPE_CHECKING:
    from referee.match.seat import SeatLink
    from referee.net.keys import KeyPair, KeyRing
    from referee.net.process import BotProcess
    from referee.net.transport import CurveServerKeys

__all__ = [
    "BotSpec",
    "command_name",
    "curve_env",
    "curve_transport",
    "local_bot_keys",
    "referee_env",
    "sandbox_level",
    "seated",
    "start_bot",
    "watch_bot",
]


def curve_env(server: KeyPair | None, bot: KeyPair | None) -> dict[str, str]:
    """The variables that make a local bot connect over CURVE: the referee's public key and
    the bot's own pair (docs/protocol.md, "Connecting over the network"); none without both."""
    if server is None or bot is None:
        return {}
    return {
        "GIN_REFEREE_SERVER_KEY": server.public_z85,
        "GIN_BOT_PUBLIC_KEY": bot.public_z85,
        "GIN_BOT_SECRET_KEY": bot.secret_z85,
    }


def local_bot_keys(server: KeyPair | None, local_endpoint: str) -> KeyPair | None:
    """A fresh key pair for a local bot when it must connect over CURVE (the referee has a
    key pair and its local endpoint is TCP), else None."""
    if server is None or not local_endpoint.startswith("tcp://"):
        return None
    from referee.net.keys import KeyPair

    return KeyPair.generate()


def curve_transport(server: KeyPair | None, ring: KeyRing) -> CurveServerKeys | None:
    """The transport's CURVE settings for the referee's pair, admitting the keys in ``ring``."""
    if server is None:
        return None
    from referee.net.transport import CurveServerKeys

    return CurveServerKeys(server.public, server.secret, ring)


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A seat's bot: a command line to start, or a remote seat awaiting a connection."""

    name: str
    """Display name until the bot's hello names it."""
    command: BotCommand | None
    """The program to start, or None for a remote bot."""
    token: str | None = None
    """A pre-issued token for a remote bot (None: generate one)."""
    public_key: bytes | None = None
    """A remote bot's CURVE public key (raw 32 bytes): its token is accepted only from a
    connection authenticated with it."""
    startup: float | None = None
    """The seat's own start-up limit, seconds (a remote seat's in ``match``:
    ``referee.match.clock.REMOTE_STARTUP``); None: the match's."""
    time: TimeControl | None = None
    """The seat's own clocks (a person's seat in ``play``); None: the match's."""

    @staticmethod
    def parse(text: str) -> BotSpec:
        """``remote:NAME`` for a remote seat, otherwise a shell-style command line."""
        if text.startswith("remote:"):
            name = text.removeprefix("remote:").strip()
            if not name:
                raise ValueError("remote seat needs a name: remote:NAME")
            return BotSpec(name=name, command=None)
        command = BotCommand.parse(text)
        return BotSpec(name=command_name(command.argv), command=command)


_INTERPRETER = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|ruby|perl|php|lua|luajit|tclsh|bash|sh|dash|zsh|ksh"
    r"|Rscript|julia|java|dotnet|go|escript|elixir|guile|racket|sbcl|tsx|ts-node)[0-9.]*"
)
"""Programs that run another file, named by it (``python3.11``, ``node``, ``bash``...)."""
_VALUED = frozenset({"-X", "-W", "-Q", "-r", "--require", "--loader", "--import", "-cp",
                     "-classpath", "--class-path", "-I"})  # fmt: skip
"""An interpreter's options that take the next word as their value."""
_LAUNCHERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch"})
"""Programs whose ``run`` runs the command that follows, named by it."""
_INLINE = frozenset({"-c", "-e", "--eval", "-p", "--print"})
"""An interpreter's options whose value is the program itself (no file to name it by)."""


def command_name(argv: Sequence[str]) -> str:
    """A display name from a command line: its program's file stem, or for an interpreter
    (``python3``, ``node``, ...) the script's or the module's (``python -m package.module``),
    whatever arguments follow.

    >>> command_name(["python3", "-m", "sample_bots.greedy_bot"])
    'greedy_bot'
    >>> command_name(["node", "x/bot.js", "--level", "hard"])
    'bot'
    >>> command_name(["./my_bot", "--depth", "3"])
    'my_bot'
    >>> command_name(["python3", "-u", "my_bot.py", "--seed", "4"])
    'my_bot'
    >>> command_name(["env", "DEPTH=3", "java", "-jar", "bots/alpha.jar"])
    'alpha'
    >>> command_name(["java", "-cp", "build", "gin.StarterBot"])
    'StarterBot'
    """
    words = list(argv)
    start = 0
    if Path(words[0]).name == "env":  # env NAME=VALUE... PROGRAM ...
        start = 1
        while start < len(words) - 1 and ("=" in words[start] or words[start][0:1] == "-"):
            start += 1
    program = words[start]
    rest = words[start + 2 :]
    if Path(program).name in _LAUNCHERS and words[start + 1 : start + 2] == ["run"]:
        while rest and rest[0].startswith("-"):  # uv run --frozen python bot.py
            rest = rest[1:]
        if rest:
            return command_name(rest)
    if not _INTERPRETER.fullmatch(Path(program).name):
        return _stem(program)
    at = start + 1
    while at < len(words):
        word = words[at]
        if word in ("-m", "-jar") and at + 1 < len(words):
            target = words[at + 1]
            return (target.rsplit(".", 1)[-1] or target) if word == "-m" else _stem(target)
        if word in _INLINE:
            break
        if word.startswith("-"):
            at += 2 if word in _VALUED else 1
        elif word == "run" and Path(program).name in ("deno", "bun", "go"):
            at += 1
        elif Path(program).name.startswith("java") and not word.endswith(".java"):
            return word.rsplit(".", 1)[-1] or word  # a main class: gin.StarterBot
        else:
            return _stem(word)
    return _stem(program)


def _stem(word: str) -> str:
    """A path's file name without its extension (``x/bot.js``: ``bot``), or ``word``."""
    return Path(word).stem or word


def referee_env(
    endpoint: str, token: str, seed: str | None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables the referee gives a bot it starts: its endpoint, its seat's token and
    seed (docs/protocol.md), and ``extra`` (e.g. :func:`curve_env`)."""
    env = {"GIN_REFEREE_ENDPOINT": endpoint, "GIN_REFEREE_TOKEN": token, **(extra or {})}
    if seed is not None:
        env["GIN_BOT_SEED"] = seed
    return env


def seated(link: SeatLink, started: BotProcess | BotStartError) -> BotProcess | None:
    """The seat's started bot, or None after recording its start failure as a startup fault."""
    if isinstance(started, BotStartError):
        link.record_fault(FaultKind.STARTUP, str(started))
        return None
    return started


async def start_bot(
    link: SeatLink,
    command: BotCommand,
    *,
    endpoint: str,
    stderr_path: Path | None,
    hide: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> BotProcess | None:
    """Start a seat's bot with the referee's environment (the endpoint, the seat's token and
    seed, plus ``extra_env``, e.g. :func:`curve_env`); a start failure is recorded as a startup
    fault and None returned. ``hide`` is the referee's output directory: a sandboxed bot sees
    it empty."""
    from referee.net.process import BotProcess

    env = referee_env(endpoint, link.token, link.seed, extra_env)
    try:
        return await BotProcess.start(
            command, env=env, stderr_path=stderr_path, hide=() if hide is None else (str(hide),)
        )
    except BotStartError as err:
        return seated(link, err)


def sandbox_level(processes: Sequence[BotProcess | None], requested: Sequence[str] = ()) -> str:
    """The weakest confinement among started bots: the lowest level, then the fewest
    additions (``namespaces+uid`` is weaker than ``namespaces+uid+cgroup``). When none
    started, the weakest level the ``requested`` ones (``auto`` or a level, one per local
    bot) would have run at, and ``none`` when no bot is local."""
    started = [p for p in processes if p is not None]
    if not started:
        levels = [sandbox.resolve(level) for level in requested]
        return str(min(levels, key=lambda level: level.rank, default=SandboxLevel.NONE))
    weakest = min(started, key=lambda p: (p.sandbox.rank, p.confinement.count("+")))
    return weakest.confinement


async def watch_bot(link: SeatLink, process: BotProcess) -> None:
    """Wait for a seat's bot process to exit; an exit before the seat is finished is a crash
    fault (before the hello, the match makes it a startup fault). Its stdout is kept with its
    stderr until the hello (quoted in the fault too)."""
    if link.connected.done():
        process.stop_keeping_stdout()
    else:
        link.connected.add_done_callback(lambda _: process.stop_keeping_stdout())
    await process.wait()
    if not link.finished:
        detail = process.exit_hint()
        if not link.connected.done():
            detail += " before saying hello"
        stderr = process.stderr_tail(4096)
        hint = start_hint(process.returncode, stderr)
        if hint is not None:
            detail += f"; {hint}"
        tail = quote_stderr(stderr)
        if tail:
            label = "stderr and stdout" if process.stdout_kept else "stderr"
            detail += f"; last {label}: {tail}"
        found = "" if link.connected.done() else process.hidden_hint()
        if found:
            detail += f"; {found}"
        link.record_fault(FaultKind.CRASH, detail)
