"""Run one match end to end: bind the transport, start or await the bots, play, tear down.

Local bots are started in their own process group and sandbox (``BotCommand.sandbox``, see
docs/security.md) with ``GIN_REFEREE_ENDPOINT``, ``GIN_REFEREE_TOKEN`` and ``GIN_BOT_SEED`` in
their environment; the weakest sandbox level used is the result's and the record's
``sandbox``; a ``remote:NAME`` seat gets a
token that the organiser hands to a bot connecting from elsewhere. The processes are the
runner's: it watches them while the match is played (an exit is a fault on the seat) and ends
them. Teardown always runs, in
this order: stop the match, terminate every bot process group (SIGTERM, then SIGKILL after a
grace period), forget the seats, close the socket (linger 0) and the context.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.match.config import MatchConfig
from referee.match.faults import FaultKind
from referee.match.hub import Hub
from referee.match.play import DeckSource, play_match
from referee.match.record import MatchRecorder
from referee.match.result import MatchResult
from referee.match.seat import LOCAL_LOST_GRACE, SeatLink
from referee.net.process import BotCommand, BotProcess, BotStartError
from referee.net.sandbox import SandboxLevel
from referee.net.transport import RouterTransport, TransportConfig

__all__ = [
    "BotSpec",
    "FAREWELL_FLUSH",
    "last_lines",
    "play_watched",
    "release_seats",
    "run_match",
    "sandbox_level",
    "start_bot",
    "watch_bot",
]

BOT_EXIT_GRACE = 1.0
"""Seconds a bot of a clean seat gets after ``match_end`` to say ``bye`` and exit by itself."""
FAREWELL_FLUSH = 0.3
"""Seconds the last messages to remote bots (``match_end``, ``shutdown``, ``bye``) get to leave
before the socket closes with linger 0."""

TokenNotice = Callable[[str, str, str], None]
"""Called with (seat name, endpoint, token) for every remote seat."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A seat's bot: a command line to start, or a remote seat awaiting a connection."""

    name: str
    """Display name until the bot's hello names it."""
    command: BotCommand | None
    """The program to start, or None for a remote bot."""
    token: str | None = None
    """A pre-issued token for a remote bot (None: generate one)."""

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


def command_name(argv: Sequence[str]) -> str:
    """A display name from a command line: its last word's file stem, or the module's own name
    for ``python -m package.module``.

    >>> command_name(["python3", "-m", "sample_bots.greedy_bot"])
    'greedy_bot'
    >>> command_name(["node", "x/bot.js"])
    'bot'
    """
    last = argv[-1]
    if len(argv) >= 2 and argv[-2] == "-m":
        return last.rsplit(".", 1)[-1] or last
    return Path(last).stem or argv[0]


async def start_bot(
    link: SeatLink,
    command: BotCommand,
    *,
    endpoint: str,
    stderr_path: Path | None,
    hide: Path | None = None,
) -> BotProcess | None:
    """Start a seat's bot with the referee's environment (its seed is the seat's); a start
    failure is recorded as a startup fault and None returned. ``hide`` is the referee's output
    directory: a sandboxed bot sees it empty."""
    env = {"GIN_REFEREE_ENDPOINT": endpoint, "GIN_REFEREE_TOKEN": link.token}
    if link.seed is not None:
        env["GIN_BOT_SEED"] = link.seed
    try:
        return await BotProcess.start(
            command, env=env, stderr_path=stderr_path, hide=() if hide is None else (str(hide),)
        )
    except BotStartError as err:
        link.record_fault(FaultKind.STARTUP, str(err))
        return None


def sandbox_level(processes: Sequence[BotProcess | None]) -> str:
    """The weakest sandbox level among started bots (``none`` if none started)."""
    levels = [p.sandbox for p in processes if p is not None]
    return str(min(levels, key=lambda level: level.rank, default=SandboxLevel.NONE))


async def watch_bot(link: SeatLink, process: BotProcess) -> None:
    """Wait for a seat's bot process to exit; an exit before the seat is finished is a crash
    fault (before the hello, the match makes it a startup fault)."""
    await process.wait()
    if not link.finished:
        detail = process.exit_hint()
        if not link.connected.done():
            detail += " before saying hello"
        tail = last_lines(process.stderr_tail(4096))
        if tail:
            detail += f"; last stderr: {tail}"
        link.record_fault(FaultKind.CRASH, detail)


STDERR_LINES, STDERR_CHARS = 3, 300
"""How much of a dead bot's stderr its fault names: the last lines, where the error is (a
Python traceback ends with the exception), not the traceback's head."""


def last_lines(text: str, lines: int = STDERR_LINES, chars: int = STDERR_CHARS) -> str:
    """The last ``lines`` non-blank lines of ``text``, joined with `` | ``, cut to their last
    ``chars`` characters.

    >>> last_lines("Traceback (most recent call last):\\n  File x\\nImportError: no foo\\n", 2)
    'File x | ImportError: no foo'
    """
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    joined = " | ".join(kept)
    return joined if len(joined) <= chars else "..." + joined[-chars:]


async def play_watched(
    config: MatchConfig,
    links: tuple[SeatLink, SeatLink],
    processes: Sequence[BotProcess | None],
    *,
    recorder: MatchRecorder | None = None,
    deck_source: DeckSource | None = None,
    stop: asyncio.Event | None = None,
    abort: asyncio.Event | None = None,
) -> MatchResult:
    """:func:`~referee.match.play.play_match` while watching the seats' bot processes
    (``processes[seat]``, None for a remote bot) with :func:`watch_bot`."""
    for link, process in zip(links, processes, strict=True):
        if process is not None:  # a lost connection waits for the process's exit to win
            link.lost_grace = LOCAL_LOST_GRACE
    watchers = [
        asyncio.ensure_future(watch_bot(link, process))
        for link, process in zip(links, processes, strict=True)
        if process is not None
    ]
    try:
        return await play_match(
            config, links, recorder=recorder, deck_source=deck_source, stop=stop, abort=abort
        )
    finally:
        for task in watchers:
            task.cancel()
        for task in watchers:
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def release_seats(
    hub: Hub | None,
    links: Sequence[SeatLink],
    processes: Sequence[BotProcess | None],
    *,
    grace: float,
    result: MatchResult | None = None,
    exit_grace: float = 0.0,
) -> None:
    """Teardown of a match's seats: mark them finished, terminate every bot process group
    (SIGTERM, SIGKILL after ``grace``, reaped), then forget the seats on the hub.

    After a match that ended (``result`` given, also an interrupted one), the bots of seats
    without a fault first get up to ``exit_grace`` seconds to exit by themselves: time to read
    ``match_end`` (and, when the referee is shutting down, the ``shutdown`` error and ``bye``
    before it), say ``bye`` and exit 0, as docs/protocol.md asks of them.
    """
    for link in links:
        link.close()
    procs = [p for p in processes if p is not None]
    if result is not None and exit_grace > 0:
        waits = [
            asyncio.ensure_future(p.wait())
            for link, p in zip(links, processes, strict=True)
            if p is not None and p.returncode is None and not result.seats[link.seat].faults
        ]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=exit_grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
    if procs:
        await asyncio.gather(*(p.terminate(grace=grace) for p in procs))
    if hub is not None:
        for link in links:
            hub.close_seat(link)


async def run_match(
    config: MatchConfig,
    specs: tuple[BotSpec, BotSpec],
    *,
    bind: str = "tcp://127.0.0.1:0",
    out_dir: Path | None = None,
    stop: asyncio.Event | None = None,
    on_token: TokenNotice | None = None,
    kill_grace: float = 1.0,
    local_ipc: bool = True,
) -> MatchResult:
    """Play one match between two bot specs; always tears everything down.

    Bots the referee starts connect to a private ``ipc://`` endpoint unless ``local_ipc`` is
    False (then to ``bind``); ``remote:`` bots always use ``bind``. Setting ``stop`` (the
    referee is shutting down) aborts the match at once (``play_match``'s ``abort``) and
    refuses later hellos with ``shutdown``.
    """
    transport = RouterTransport(
        TransportConfig(
            endpoint=bind,
            local_ipc=local_ipc,
            heartbeat_ivl_ms=1000,
            heartbeat_timeout_ms=round(5000 * config.time.heartbeat),
            heartbeat_ttl_ms=round(5000 * config.time.heartbeat),
        )
    )
    recorder: MatchRecorder | None = None
    links: list[SeatLink] = []
    processes: list[BotProcess | None] = []
    hub: Hub | None = None
    result: MatchResult | None = None
    closer: asyncio.Future[None] | None = None
    try:
        endpoint = await transport.start()
        hub = Hub(transport)
        if stop is not None:  # stopping: later hellos are refused with ``shutdown``
            closer = asyncio.ensure_future(hub.shutdown_when(stop))
        for seat, spec in enumerate(specs):
            seed = (
                None if spec.command is None else config.deal.bot_seed(f"{config.match_id}/{seat}")
            )
            links.append(hub.open_seat(seat, config.time, spec.token, name=spec.name, seed=seed))
        if out_dir is not None:
            recorder = MatchRecorder(out_dir / f"{config.match_id}.jsonl")
        for spec, link in zip(specs, links, strict=True):
            if spec.command is None:
                processes.append(None)
                if on_token is not None:
                    on_token(spec.name, endpoint, link.token)
                continue
            stderr_path = None
            if out_dir is not None:
                stderr_path = out_dir / f"{config.match_id}.seat{link.seat}.stderr"
            processes.append(
                await start_bot(
                    link,
                    spec.command,
                    endpoint=transport.local_endpoint,
                    stderr_path=stderr_path,
                    hide=out_dir,
                )
            )
        level = sandbox_level(processes)
        if recorder is not None:
            recorder.header_extra["sandbox"] = level
        result = await play_watched(
            config, (links[0], links[1]), processes, recorder=recorder, abort=stop
        )
        result = dataclasses.replace(result, sandbox=level)
        return result
    finally:
        await release_seats(
            hub, links, processes, grace=kill_grace, result=result, exit_grace=BOT_EXIT_GRACE
        )
        with contextlib.suppress(Exception):
            if recorder is not None:
                recorder.close()
        if closer is not None:
            closer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await closer
        remote = [link for link, spec in zip(links, specs, strict=False) if spec.command is None]
        if any(link.peer is not None for link in remote):
            await asyncio.sleep(FAREWELL_FLUSH)  # a remote bot's last messages leave first
        await transport.close()
