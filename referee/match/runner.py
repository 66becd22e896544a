"""Run one match end to end: start the local bots, bind the transport, await the bots, play,
tear down. The local bots start first, on the private ``ipc://`` socket bound for them, and
the transport, hub and game loop are imported only then (see :func:`run_match`).

Local bots are started in their own process group and sandbox (``BotCommand.sandbox``, see
docs/security.md) with ``GIN_REFEREE_ENDPOINT``, ``GIN_REFEREE_TOKEN`` and ``GIN_BOT_SEED`` in
their environment; the weakest sandbox level used is the result's and the record's
``sandbox``; a ``remote:NAME`` seat gets a
token that the organiser hands to a bot connecting from elsewhere. With the referee's CURVE
key pair (``curve``), the TCP endpoint admits only the remote seats' public keys
(``BotSpec.public_key``), and a local bot connecting over TCP gets a fresh key pair of its own
with the referee's public key in its environment (:func:`curve_env`). The processes are the
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
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.schema import LINK_PATIENCE_MS
from referee.match.bots import (
    BotSpec,
    curve_env,
    curve_transport,
    local_bot_keys,
    sandbox_level,
    seated,
    start_bot,
    watch_bot,
)
from referee.match.config import MatchConfig
from referee.match.early import (
    EarlyStart,
    binds_endpoint,
    can_start_early,
    seat_stderr,
    start_early,
)
from referee.match.result import MatchResult
from referee.net.process import BotProcess
from referee.net.spawn import BotStartError, Spawned

if TYPE_CHECKING:
    from referee.match.hub import Hub
    from referee.match.play import DeckSource
    from referee.match.record import MatchRecorder
    from referee.match.seat import SeatLink
    from referee.net.keys import KeyPair

__all__ = [
    "BOT_EXIT_GRACE",
    "FAREWELL_FLUSH",
    "TokenNotice",
    "play_watched",
    "release_seats",
    "run_match",
]

BOT_EXIT_GRACE = 1.0
"""Seconds a bot of a clean seat gets after ``match_end`` to say ``bye`` and exit by itself."""
FAREWELL_FLUSH = 0.3
"""Seconds the last messages to remote bots (``match_end``, ``shutdown``, ``bye``) get to leave
before the socket closes with linger 0."""

TokenNotice = Callable[[str, str, str], None]
"""Called with (seat name, endpoint, token) for every remote seat."""


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
    from referee.match.fairclock import fair_clock
    from referee.match.play import play_match
    from referee.match.seat import LOCAL_LOST_GRACE

    for link, process in zip(links, processes, strict=True):
        if process is not None:  # a lost connection waits for the process's exit to win
            link.lost_grace = LOCAL_LOST_GRACE
            link.fair = fair_clock(process)
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
    curve: KeyPair | None = None,
    early: EarlyStart | None = None,
) -> MatchResult:
    """Play one match between two bot specs; always tears everything down.

    Bots the referee starts connect to a private ``ipc://`` endpoint unless ``local_ipc`` is
    False (then to ``bind``); ``remote:`` bots always use ``bind``. Setting ``stop`` (the
    referee is shutting down) aborts the match at once (``play_match``'s ``abort``) and
    refuses later hellos with ``shutdown``. With ``curve`` (the referee's key pair) a
    ``tcp://`` endpoint requires CURVE: every remote spec needs a ``public_key``; without it
    the endpoint is plain (``--insecure``).

    On the private endpoint the bots are started first (:mod:`referee.match.early`): by the
    caller before its loop (``early``, which this call then owns and ends), or here; the
    transport, the hub and the game loop are imported only after that, while the bots start.
    A match whose seats are all local and started so listens on their private socket alone:
    ``bind`` is not bound and ``curve`` not used (:func:`~referee.match.early.binds_endpoint`).
    """
    if curve is not None:
        for spec in specs:
            if spec.command is None and spec.public_key is None:
                raise ValueError(f"remote seat {spec.name!r} needs its bot's public key")
    recorder: MatchRecorder | None = None
    links: list[SeatLink] = []
    processes: list[BotProcess | None] = [None] * len(specs)
    hub: Hub | None = None
    result: MatchResult | None = None
    closer: asyncio.Future[None] | None = None
    transport = None
    try:
        if early is None and can_start_early(specs, bind=bind, local_ipc=local_ipc):
            early = start_early(config, specs, out_dir=out_dir)
        started = [None] * len(specs) if early is None else early.started
        for seat, begun in enumerate(started):
            if isinstance(begun, Spawned):  # its stderr read and its exit watched from now
                stderr_path = seat_stderr(out_dir, config, seat)
                processes[seat] = await BotProcess.adopt(begun, stderr_path=stderr_path)
        # Imported only now: the bots started above start meanwhile.
        from referee.match.hub import Hub
        from referee.match.record import MatchRecorder
        from referee.net.keys import KeyRing
        from referee.net.transport import RouterTransport, TransportConfig, TransportError

        ring = KeyRing()
        public = binds_endpoint(specs, early)  # else the bots' private socket alone
        transport = RouterTransport(
            TransportConfig(
                endpoint=bind if public or early is None else early.endpoint,
                curve=curve_transport(curve, ring) if public else None,
                local_ipc=local_ipc,
                heartbeat_ivl_ms=1000,
                heartbeat_timeout_ms=round(5000 * config.time.heartbeat),
                heartbeat_ttl_ms=LINK_PATIENCE_MS,
            ),
            private_ipc=None if early is None else early.take_ipc(),
        )
        endpoint = await transport.start()
        if early is not None and transport.local_endpoint != early.endpoint:
            raise TransportError(f"cannot serve {early.endpoint}, where the bots were sent")
        hub = Hub(transport, keys=ring)
        if stop is not None:  # stopping: later hellos are refused with ``shutdown``
            closer = asyncio.ensure_future(hub.shutdown_when(stop))
        pairs: list[KeyPair | None] = []
        for seat, spec in enumerate(specs):
            pair = None if spec.command is None else local_bot_keys(curve, hub.local_endpoint)
            pairs.append(pair)
            key = spec.public_key if pair is None else pair.public
            token, seed = spec.token, None
            if early is not None:
                token, seed = early.tokens[seat], early.seeds[seat]
            elif spec.command is not None:
                seed = config.deal.bot_seed(f"{config.match_id}/{seat}")
            links.append(
                hub.open_seat(
                    seat,
                    config.time if spec.time is None else spec.time,
                    token,
                    name=spec.name,
                    seed=seed,
                    public_key=None if curve is None else key,
                )
            )
            links[-1].startup = spec.startup
        if out_dir is not None:
            recorder = MatchRecorder(out_dir / f"{config.match_id}.jsonl")
        for spec, link, pair in zip(specs, links, pairs, strict=True):
            if spec.command is None:
                if on_token is not None:
                    on_token(spec.name, endpoint, link.token)
                continue
            begun = started[link.seat]
            if isinstance(begun, BotStartError):
                seated(link, begun)
            elif begun is None:  # not started early: on the transport's local endpoint
                processes[link.seat] = await start_bot(
                    link,
                    spec.command,
                    endpoint=transport.local_endpoint,
                    stderr_path=seat_stderr(out_dir, config, link.seat),
                    hide=out_dir,
                    extra_env=curve_env(curve, pair),
                )
        level = sandbox_level(
            processes, [s.command.sandbox for s in specs if s.command is not None]
        )
        if recorder is not None:
            recorder.header_extra["sandbox"] = level
            if any(spec.time is not None for spec in specs):  # a seat with clocks of its own
                recorder.header_extra["seat_time_controls"] = [
                    (config.time if spec.time is None else spec.time).to_wire() for spec in specs
                ]
        result = await play_watched(
            config, (links[0], links[1]), processes, recorder=recorder, abort=stop
        )
        result = dataclasses.replace(result, sandbox=level)
        return result
    finally:
        await release_seats(
            hub, links, processes, grace=kill_grace, result=result, exit_grace=BOT_EXIT_GRACE
        )
        if early is not None:  # a bot it started and nobody adopted, a socket nobody took
            early.discard()
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
        if transport is not None:
            await transport.close()
