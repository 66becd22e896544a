"""The ``tournament`` and ``serve`` commands (thin: run, print; their options are in
:mod:`referee.cli.parsers`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.cli.addresses import connect_to
from referee.cli.confinement import gate_config
from referee.cli.daemon import raise_fd_limit, run_stoppable
from referee.cli.inputs import check_bind
from referee.cli.keys import server_keys
from referee.cli.logs import configure_cli
from referee.cli.results import results_text
from referee.match import Observer
from referee.tournament.config import ConfigError, TournamentConfig, load_config
from referee.tournament.lease import LEASE_SECONDS
from referee.tournament.progress import Progress
from referee.tournament.runner import GameOutcome, TournamentRun, schedule
from referee.tournament.snapshots import SnapshotError
from referee.tournament.store import StoreError, open_store
from referee.tournament.supervise import Supervisor
from referee.tournament.worker import (
    BOT_FILES_KEY,
    bot_files,
    default_workers,
    start_workers,
)

if TYPE_CHECKING:
    from referee.live import Spectating

__all__ = [
    "failed_text",
    "no_start",
    "unstarted_text",
    "run_with_signals",
    "run_tournament",
    "serve_live",
]

EXIT_OK, EXIT_USAGE, EXIT_NO_START, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 2, 3, 70, 130


def _spectating(args: argparse.Namespace, out: Path, config: TournamentConfig) -> Spectating | None:
    """The live page the arguments ask for (None without ``--spectate``); ValueError names a
    bad option."""
    if getattr(args, "spectate", None) is None:
        return None
    from referee.live import LiveConfig, Spectating, parse_address  # aiohttp: only when asked

    host, port = parse_address(args.spectate)
    live = LiveConfig(delay=args.spectate_delay, max_spectators=args.spectate_max)
    return Spectating(host, port, live, out / "tournament.sqlite", schedule(config))


async def run_with_signals(run: TournamentRun, stop: asyncio.Event) -> bool:
    """Run with signal handling; True if a signal interrupted it."""
    notice = "\ninterrupted: aborting the games in progress (bots are told: shutdown)..."
    try:
        _, signalled = await run_stoppable(run.run(), stop, notice=notice)
    except ExceptionGroup as group:  # the run's slots (a TaskGroup): a store error is named
        failed = group.subgroup(StoreError)
        while isinstance(failed, ExceptionGroup):
            failed = failed.exceptions[0]  # type: ignore[assignment]
        if failed is None:
            raise
        raise failed from group
    return signalled


def _done_count(out: Path, location: str | None = None, name: str | None = None) -> int:
    if location is None:
        path = out / "tournament.sqlite"
        if not path.exists():
            return 0
    store = open_store(location or out / "tournament.sqlite", tournament=name)
    try:
        return store.counts().get("done", 0)
    finally:
        store.close()


async def run_tournament(args: argparse.Namespace, *, serve: bool = False) -> int:
    """``gin-referee tournament CONFIG`` (and ``serve CONFIG``: wait for remote bots
    without limit and, unless ``--until-done``, stay up after the last game)."""
    try:
        config = load_config(args.config)
    except ConfigError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    out = args.out or config.out or Path("runs") / config.name
    try:
        check_bind(args.bind)
        configure_cli(args, out, what="--out" if args.out else f"{args.config}: out")
    except (ValueError, OSError) as err:  # a bad log option, an --out that cannot be made
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    if (refused := gate_config(config, args.require_sandbox)) is not None:
        return refused
    raise_fd_limit()
    try:
        spectating = _spectating(args, out, config)
    except ValueError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    async with contextlib.AsyncExitStack() as stack:
        if not await serve_live(stack, spectating, args.spectate):
            return EXIT_USAGE
        return await _play_tournament(args, config, out, spectating, serve=serve)


async def serve_live(
    stack: contextlib.AsyncExitStack, live: Spectating | None, address: str | None
) -> bool:
    """Serve the live page (if asked) until ``stack`` closes, and say where; False, said on
    stderr, if its address cannot be bound."""
    if live is None:
        return True
    try:
        await stack.enter_async_context(live)
    except OSError as err:
        print(f"gin-referee: cannot serve the live page on {address}: {err}", file=sys.stderr)
        return False
    print(f"spectators: {live.url}", file=sys.stderr, flush=True)
    return True


def nothing_left_text(name: str, out: Path, spectating: bool) -> str:
    """What a run says when every game of its schedule is already recorded (a second run of
    the same command): there is nothing to play, so a live page would close at once."""
    text = f"gin-referee: every game of {name} is already recorded in {out}: nothing left to play"
    if spectating:
        text += (
            "; the live page closes with this run. To watch a new run, give a new --out "
            f"directory (or a new [tournament] name); to see this one: gin-referee report {out}"
        )
    return text


async def _play_tournament(
    args: argparse.Namespace,
    config: TournamentConfig,
    out: Path,
    spectating: Spectating | None,
    *,
    serve: bool,
) -> int:
    """Run the tournament (with its live page's hooks, if any) and print the standings."""
    location = getattr(args, "store", None) or config.store
    try:
        workers = _workers(args, config, serve, spectate=spectating is not None)
        _check_spectate(location, spectating is not None)
        progress = Progress(len(schedule(config)), done=_done_count(out, location, config.name))
    except (ValueError, StoreError) as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    if progress.done >= progress.total:
        print(nothing_left_text(config.name, out, spectating is not None), file=sys.stderr,
              flush=True)  # fmt: skip
    stop = asyncio.Event()
    remotes = [b.name for b in config.bots if b.command is None]
    on_game: Callable[[GameOutcome], None] = progress.on_game
    observe: Callable[[str], Observer] | None = None
    if spectating is not None:
        live = spectating

        def on_game(outcome: GameOutcome) -> None:
            progress.on_game(outcome)
            live.on_game(outcome)

        observe = live.observe
    try:
        curve = server_keys(args, remote=bool(remotes))
    except ValueError as err:  # an unusable key file, named
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    unkeyed = [b.name for b in config.bots if b.command is None and b.public_key is None]
    if curve is not None and unkeyed:
        print(
            f"gin-referee: {args.config}: remote bot(s) {', '.join(unkeyed)} need a public_key "
            "(each bot's `gin-referee keygen --bot NAME` prints it), or run with --insecure",
            file=sys.stderr,
        )
        return EXIT_USAGE
    key = "no CURVE (--insecure)" if curve is None else f"referee key {curve.public_z85}"
    lease = getattr(args, "lease", LEASE_SECONDS)
    each = -(-config.concurrency // workers)  # games at once per process
    store_at = str(location or out / "tournament.sqlite")
    pool = Supervisor(
        workers - 1,
        lambda: start_workers(1, store=store_at, out=out, concurrency=each, lease=lease,
                              require_sandbox=args.require_sandbox)[0],
    )  # fmt: skip

    def ready(endpoint: str) -> None:
        if serve or remotes:
            names, where = ", ".join(remotes) or "none", connect_to(endpoint)
            print(f"serving on {where}; remote bots: {names}; {key}", file=sys.stderr,
                  flush=True)  # fmt: skip
        if workers > 1:
            pool.start()

    run = TournamentRun(
        config,
        out,
        stop=stop,
        bind=args.bind,
        serve=serve,
        linger=serve and not getattr(args, "until_done", False),
        on_ready=ready,
        on_game=on_game,
        observe=observe,
        curve=curve,
        store=location,
        lease=lease,
        config_text=args.config.read_text(encoding="utf-8"),
    )
    if workers > 1:
        run.config = replace(config, concurrency=each)
    run.on_init = lambda store: store.set_meta(BOT_FILES_KEY, json.dumps(bot_files(config)))
    try:
        interrupted = await run_with_signals(run, stop)
    except (StoreError, SnapshotError) as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        progress.close()
        await pool.stop()
    print(results_text(out, "table", location=location, name=config.name))
    if run.failed:
        print(failed_text(run.failed), file=sys.stderr)
        return EXIT_INTERNAL
    unstarted = unstarted_text(out, location, config.name)
    if unstarted:
        print(unstarted, file=sys.stderr)
    if interrupted:  # 130 whenever a signal stopped it, even a daemon with every game played
        if _done_count(out, location, config.name) < progress.total:
            print("interrupted: run the same command again to resume", file=sys.stderr)
        else:
            print("interrupted: every game had been played", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_NO_START if unstarted else EXIT_OK


def no_start(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The bots of a stored game's result that could not start (a ``startup`` fault): (name,
    the fault's detail) each."""
    return [
        (result["seats"][fault["seat"]], str(fault.get("detail", "")))
        for fault in result.get("faults", ())
        if fault.get("kind") == "startup"
    ]


def unstarted_text(out: Path, location: str | None, name: str) -> str:
    """What a run says of the bots that could not start in any of its stored games (each
    such game is a forfeit), or "" when every bot started."""
    store = open_store(location or out / "tournament.sqlite", tournament=name)
    try:
        rows = store.games()
    finally:
        store.close()
    games: dict[str, int] = {}
    first: dict[str, str] = {}
    for row in rows:
        for bot, detail in no_start(row.result or {}):
            games[bot] = games.get(bot, 0) + 1
            first.setdefault(bot, detail)
    if not games:
        return ""
    lines = [f"gin-referee: {len(games)} bot(s) could not start (each such game is a forfeit):"]
    lines += [f"  {bot}: {n} game(s); {first[bot]}" for bot, n in sorted(games.items())]
    lines.append(f"(their stderr is in {out / 'stderr'})")
    return "\n".join(lines)


def failed_text(failed: dict[int, str]) -> str:
    """What a run says about the games a referee bug ended (they stay unplayed)."""
    lines = [f"gin-referee: {len(failed)} game(s) not played because of a referee error:"]
    lines += [f"  game {game + 1} (g{game:06d}): {error}" for game, error in sorted(failed.items())]
    lines.append("run the same command again to retry them")
    return "\n".join(lines)


def worker_count(text: str, config: TournamentConfig) -> int:
    """``--workers``: a number from 1 to 256, or ``auto`` (one per core, at most one per
    concurrent game); ValueError naming the flag."""
    count = default_workers(config) if text == "auto" else int(text) if text.isdigit() else 0
    if not 1 <= count <= 256:
        raise ValueError(f"--workers must be a number from 1 to 256 or auto, not {text!r}")
    return count


def _workers(
    args: argparse.Namespace, config: TournamentConfig, serve: bool, *, spectate: bool
) -> int:
    count = worker_count(getattr(args, "workers", "1"), config)
    if count > 1 and (serve or any(b.command is None for b in config.bots)):
        raise ValueError("--workers: remote bots connect to one referee; use --workers 1")
    if count > 1 and spectate:
        raise ValueError("--workers: the live page follows one referee's games; use --workers 1")
    return count


def _check_spectate(location: str | None, spectate: bool) -> None:
    if spectate and location is not None:
        raise ValueError("--spectate reads the SQLite store of the output directory; it takes"
                         " no --store URL")  # fmt: skip
