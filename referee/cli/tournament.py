"""The ``tournament`` and ``serve`` commands, and the parsers of those, of ``results`` and of
``sprt`` (thin: parse, run, print; those two run in :mod:`referee.cli.results` and
:mod:`referee.cli.sprt`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.daemon import raise_fd_limit, run_stoppable
from referee.cli.keys import add_security_options, server_keys
from referee.cli.logs import add_log_options, configure_cli
from referee.cli.results import results_text
from referee.match import Observer
from referee.tournament.config import ConfigError, TournamentConfig, load_config
from referee.tournament.lease import LEASE_SECONDS
from referee.tournament.progress import Progress
from referee.tournament.runner import GameOutcome, TournamentRun, schedule
from referee.tournament.stats import (
    ELO_MODELS,
)
from referee.tournament.store import StoreError, open_store
from referee.tournament.worker import (
    BOT_FILES_KEY,
    bot_files,
    default_workers,
    start_workers,
    stop_workers,
)

if TYPE_CHECKING:
    from referee.live import Spectating

__all__ = [
    "add_commands",
    "failed_text",
    "positive_seconds",
    "run_with_signals",
    "run_tournament",
    "store_options",
]

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 2, 70, 130


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows each option's default, except required options and None defaults."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.required or action.default is None:
            return action.help
        return super()._get_help_string(action)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the tournament commands on the main parser."""
    t = sub.add_parser("tournament", help="run (or resume) a tournament from a TOML file")
    t.add_argument("config", type=Path)
    t.add_argument("--out", type=Path, default=None, help="output directory (store, records)")
    t.add_argument("--resume", action="store_true", help="(default) continue an interrupted run")
    t.add_argument("--bind", default="tcp://127.0.0.1:0", help="endpoint remote bots reach")
    add_security_options(t)
    add_log_options(t)
    _spectate_options(t)
    t.add_argument("--workers", default="1", metavar="N|auto",
                   help="referee processes on this machine (default 1; auto: one per core, at"
                   " most tournament.concurrency)")  # fmt: skip
    store_options(t)
    s = sub.add_parser(
        "sprt",
        help="play paired games until the SPRT decides",
        description="Is the candidate stronger than the baseline? Plays duplicate pairs of "
        "games between them until a sequential probability ratio test accepts H1 (the "
        "candidate is at least --elo1 stronger) or H0 (at most --elo0), or --max-games is "
        "reached; resumable (see docs/tournaments.md and docs/statistics.md).",
        formatter_class=_DefaultsShown,
    )
    s.add_argument("--candidate", required=True, help="command line of the new bot")
    s.add_argument("--baseline", required=True, help="command line of the old bot")
    s.add_argument("--elo0", type=float, default=0.0, help="H0: Elo difference at most this")
    s.add_argument("--elo1", type=float, default=20.0, help="H1: Elo difference at least this")
    s.add_argument("--elo-model", choices=ELO_MODELS, default="logistic",
                   help="units of --elo0/--elo1")  # fmt: skip
    s.add_argument("--alpha", type=float, default=0.05, help="false positive rate (accept H1 "
                   "when H0 holds)")  # fmt: skip
    s.add_argument("--beta", type=float, default=0.05, help="false negative rate (accept H0 "
                   "when H1 holds)")  # fmt: skip
    s.add_argument("--min-pairs", type=int, default=0,
                   help="duplicate pairs before the test may stop")  # fmt: skip
    s.add_argument("--max-games", type=int, default=2000, help="stop undecided after this many")
    s.add_argument("--concurrency", type=int, default=2, help="games played at once")
    s.add_argument("--rules", default="standard",
                   help="preset: standard, classic, oklahoma, straight")  # fmt: skip
    s.add_argument("--move-time", type=float, default=1.0, help="seconds per decision")
    s.add_argument("--bank", type=float, default=30.0, help="per-game time bank, seconds")
    s.add_argument(
        "--seed", type=int, default=None, help="public deal seed: deals NOT secret (testing only)"
    )
    s.add_argument("--out", type=Path, default=Path("runs/sprt"),
                   help="output directory (store, records); the same one resumes")  # fmt: skip
    add_log_options(s, level="warning")
    v = sub.add_parser("serve", help="daemon: run a tournament as registered remote bots connect")
    v.add_argument("config", type=Path)
    v.add_argument(
        "--bind",
        default="tcp://127.0.0.1:5555",
        help="endpoint remote bots reach (default tcp://127.0.0.1:5555; e.g. tcp://0.0.0.0:5555 "
        "to accept bots from other machines)",
    )
    add_security_options(v)
    v.add_argument("--out", type=Path, default=None)
    v.add_argument("--until-done", action="store_true", help="exit when every game is played")
    add_log_options(v)
    _spectate_options(v)
    r = sub.add_parser("results", help="standings of a tournament directory")
    r.add_argument("dir", type=Path, nargs="?", help="output directory (its deal.key reveals)")
    r.add_argument("--store", default=None, help="a postgresql:// URL instead of DIR's store")
    r.add_argument("--tournament", default=None, help="its name (if the database holds several)")
    r.add_argument("--format", choices=("table", "csv", "json"), default="table")
    r.add_argument("--prior-draws", type=float, default=0.0,
                   help="virtual draws per pairing in the ratings (default 0: none)")  # fmt: skip


def _spectate_options(parser: argparse.ArgumentParser) -> None:
    """The live spectator page's options (docs/viewer.md)."""
    g = parser.add_argument_group("live spectator page")
    g.add_argument(
        "--spectate",
        metavar="HOST:PORT",
        default=None,
        help="serve the live page on this address (PORT alone: 127.0.0.1); off by default",
    )
    g.add_argument(
        "--spectate-delay",
        metavar="SECONDS",
        type=float,
        default=10.0,
        help="seconds after a hand ends before its cards are shown (default 10)",
    )
    g.add_argument("--spectate-max", metavar="N", type=int, default=64,
                   help="most spectators at once (default 64)")  # fmt: skip


def _spectating(args: argparse.Namespace, out: Path, config: TournamentConfig) -> Spectating | None:
    """The live page the arguments ask for (None without ``--spectate``); ValueError names a
    bad option."""
    if getattr(args, "spectate", None) is None:
        return None
    from referee.live import LiveConfig, Spectating, parse_address  # aiohttp: only when asked

    host, port = parse_address(args.spectate)
    live = LiveConfig(delay=args.spectate_delay, max_spectators=args.spectate_max)
    return Spectating(host, port, live, out / "tournament.sqlite", schedule(config))


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0 (``--lease``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def store_options(parser: argparse.ArgumentParser) -> None:
    """``--store`` and ``--lease``."""
    parser.add_argument(
        "--store",
        default=None,
        help="postgresql:// URL of the store (default OUT/tournament.sqlite)",
    )
    parser.add_argument(
        "--lease",
        type=positive_seconds,
        default=LEASE_SECONDS,
        help=f"seconds a claim lives unrenewed (default {LEASE_SECONDS:g})",
    )


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
        configure_cli(args, out)
    except (ValueError, OSError) as err:  # a bad log option, an --out that cannot be made
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    raise_fd_limit()
    try:
        spectating = _spectating(args, out, config)
    except ValueError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    async with contextlib.AsyncExitStack() as stack:
        if spectating is not None:
            try:
                await stack.enter_async_context(spectating)
            except OSError as err:
                print(f"gin-referee: cannot serve the live page on {args.spectate}: {err}",
                      file=sys.stderr)  # fmt: skip
                return EXIT_USAGE
            print(f"spectators: {spectating.url}", file=sys.stderr, flush=True)
        return await _play_tournament(args, config, out, spectating, serve=serve)


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
    children: list[subprocess.Popen[bytes]] = []
    lease = getattr(args, "lease", LEASE_SECONDS)
    each = -(-config.concurrency // workers)  # games at once per process

    def ready(endpoint: str) -> None:
        if serve or remotes:
            names = ", ".join(remotes) or "none"
            print(f"serving on {endpoint}; remote bots: {names}; {key}", file=sys.stderr,
                  flush=True)  # fmt: skip
        if workers > 1:
            where = str(location or out / "tournament.sqlite")
            children.extend(start_workers(workers - 1, store=where, out=out, concurrency=each,
                                          lease=lease))  # fmt: skip

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
    except StoreError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        progress.close()
        await _reap(children)
    print(results_text(out, "table", location=location, name=config.name))
    if run.failed:
        print(failed_text(run.failed), file=sys.stderr)
        return EXIT_INTERNAL
    if interrupted and _done_count(out, location, config.name) < progress.total:
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def failed_text(failed: dict[int, str]) -> str:
    """What a run says about the games a referee bug ended (they stay unplayed)."""
    lines = [f"gin-referee: {len(failed)} game(s) not played because of a referee error:"]
    lines += [f"  game {game}: {error}" for game, error in sorted(failed.items())]
    lines.append("run the same command again to retry them")
    return "\n".join(lines)


def _workers(
    args: argparse.Namespace, config: TournamentConfig, serve: bool, *, spectate: bool
) -> int:
    text = getattr(args, "workers", "1")
    count = default_workers(config) if text == "auto" else int(text) if text.isdigit() else 0
    if not 1 <= count <= 256:
        raise ValueError(f"--workers must be a number from 1 to 256 or auto, not {text!r}")
    if count > 1 and (serve or any(b.command is None for b in config.bots)):
        raise ValueError("--workers: remote bots connect to one referee; use --workers 1")
    if count > 1 and spectate:
        raise ValueError("--workers: the live page follows one referee's games; use --workers 1")
    return count


def _check_spectate(location: str | None, spectate: bool) -> None:
    if spectate and location is not None:
        raise ValueError("--spectate reads the SQLite store of the output directory; it takes"
                         " no --store URL")  # fmt: skip


REAP_WITHIN = 10.0
"""Seconds a worker process gets to exit after SIGTERM (it aborts its games at once and
exits within ~6 s) before it is killed."""


async def _reap(children: list[subprocess.Popen[bytes]]) -> None:
    """Stop the worker processes and wait for them (killed after ``REAP_WITHIN``)."""
    stop_workers(children)
    for child in children:
        try:
            await asyncio.to_thread(child.wait, REAP_WITHIN)
        except subprocess.TimeoutExpired:
            child.kill()
            await asyncio.to_thread(child.wait)
