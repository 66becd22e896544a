"""The ``ladder`` commands: ``ladder run CONFIG [--workers N]`` plays until stopped; ``ladder
add``, ``retire``, ``list``, ``history``, ``deals`` and ``rounds`` change and read its book of
entrants, its pairs and its rounds in the store (while it runs or not); ``results --ladder``
prints the leaderboard (docs/ladder.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.cli.addresses import connect_to
from referee.cli.confinement import gate_config
from referee.cli.daemon import raise_fd_limit
from referee.cli.inputs import check_bind
from referee.cli.keys import remote_keys, server_keys
from referee.cli.ladder_rounds import rounds_report
from referee.cli.logs import configure_cli
from referee.cli.tournament import (
    failed_text,
    run_with_signals,
    serve_live,
    worker_count,
)
from referee.net.keys import encode_key
from referee.net.private import private_dir
from referee.net.process import BotCommand
from referee.tournament.botfiles import private_paths
from referee.tournament.commandline import command_problem
from referee.tournament.config import ConfigError
from referee.tournament.games import GameOutcome
from referee.tournament.ladder import (
    LadderBook,
    LadderConfig,
    LadderError,
    LadderRun,
    Pair,
    PairLedger,
    ladder_board,
    leaderboard_text,
    load_ladder,
)
from referee.tournament.snapshots import SnapshotError, SnapshotStore, Tree, TreeLimits, scan
from referee.tournament.store import StoreError, is_url, open_store
from referee.tournament.supervise import Supervisor
from referee.tournament.worker import start_workers

if TYPE_CHECKING:
    from referee.live.ladder import LadderSpectating

__all__ = ["run_ladder", "run_ladder_admin"]

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
STORE = "tournament.sqlite"


def _spectating(
    args: argparse.Namespace, location: str | Path, config: LadderConfig
) -> LadderSpectating | None:
    if args.spectate is None:
        return None
    from referee.live import LiveConfig, parse_address
    from referee.live.ladder import LadderSpectating

    host, port = parse_address(args.spectate)
    live = LiveConfig(delay=args.spectate_delay, max_spectators=args.spectate_max)
    return LadderSpectating(host, port, live, lambda: ladder_board(location, config),
                            lag=args.spectate_lag)  # fmt: skip


def _pair_line(run: LadderRun, pair: Pair) -> str:
    a, b = pair.players
    got = [run.skills.get(p) for p in (a, b)]
    shown = ", ".join(
        f"{p} mu {s.mu:.2f} sigma {s.sigma:.2f}" for p, s in zip((a, b), got, strict=True) if s
    )
    if pair.outcome != "rated":
        return f"pair {pair.deal_id}: {a} vs {b}, {len(pair.results)} game(s); {pair.outcome}"
    return f"pair {pair.deal_id}: {a} vs {b}, {len(pair.results)} game(s); {shown}"


async def run_ladder(args: argparse.Namespace) -> int:
    """``gin-referee ladder run CONFIG``: play until SIGINT/SIGTERM (then exit 0)."""
    try:
        config = load_ladder(args.config)
    except ConfigError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    # (the placeholders carry the [ladder] table's sandbox: every entrant's)
    if (refused := gate_config(config.play, args.require_sandbox)) is not None:
        return refused
    out = args.out or config.out or Path("runs") / config.name
    location: str | Path = out / STORE if args.store is None else args.store
    try:
        if args.store is not None and not is_url(args.store):
            raise ValueError(f"--store must be a postgresql:// URL, not {args.store!r}")
        workers = worker_count(args.workers, config.play)
        check_bind(args.bind)
        configure_cli(args, out, what="--out" if args.out else f"{args.config}: out")
        spectating = _spectating(args, location, config)
        curve = server_keys(args, remote=True)
    except (ValueError, OSError) as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    raise_fd_limit()
    key = "no CURVE (--insecure)" if curve is None else f"referee key {curve.public_z85}"

    each = -(-config.play.concurrency // max(1, workers - 1))  # games at once per worker
    pool = Supervisor(
        workers - 1,
        lambda: start_workers(1, store=str(location), out=out, concurrency=each,
                              lease=args.lease, require_sandbox=args.require_sandbox)[0],
    )  # fmt: skip

    def ready(endpoint: str) -> None:
        where = connect_to(endpoint)
        print(f"ladder {config.name}: serving on {where}; {key}", file=sys.stderr, flush=True)
        if workers > 1:  # the ladder is in the store, and this process its runner: they join
            pool.start()

    async with contextlib.AsyncExitStack() as stack:
        if not await serve_live(stack, spectating, args.spectate):
            return EXIT_USAGE
        live = spectating

        def on_pair(pair: Pair) -> None:
            print(_pair_line(run, pair), flush=True)
            if live is not None:
                live.on_pair(pair)

        def on_game(outcome: GameOutcome) -> None:
            if live is not None:
                live.on_game(outcome)

        try:
            run = LadderRun(
                config, out, stop=asyncio.Event(), bind=args.bind, curve=curve, on_ready=ready,
                on_pair=on_pair, on_game=on_game,
                on_scheduled=None if live is None else live.on_scheduled,
                observe=None if live is None else live.observe,
                config_text=args.config.read_text(encoding="utf-8"), store=args.store,
                lease=args.lease,
            )  # fmt: skip
            try:
                await run_with_signals(run, run.stop)
            finally:
                await pool.stop()
            print(leaderboard_text(ladder_board(location, config)))
        except (StoreError, ValueError) as err:
            print(f"gin-referee: {err}", file=sys.stderr)
            return EXIT_USAGE
    if run.failed:
        print(failed_text(run.failed), file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK


def _entrant_tree(args: argparse.Namespace) -> Tree | None:
    """A local entrant's files, read now (its directory, or none), with its command checked
    against them: before the store exists, so that a refusal records nothing."""
    if args.command_line is None:
        if args.bot_dir is not None:
            raise LadderError("--bot-dir is a local entrant's: give its --command (run in it)")
        return None
    BotCommand.parse(args.command_line)  # ValueError names what is wrong
    problem = command_problem(args.command_line, args.bot_dir)
    if problem is not None:
        hint = "" if args.bot_dir is not None else ": a local entrant's files are --bot-dir DIR"
        raise LadderError(f"--command: {problem}{hint}")
    if args.bot_dir is None:
        return Tree(())  # a program of the host's: it runs in an empty directory
    limits = TreeLimits()
    limits = TreeLimits(max_bytes=args.max_size or limits.max_bytes,
                        max_entries=args.max_files or limits.max_entries)  # fmt: skip
    try:
        return scan(args.bot_dir, limits, refuse=private_paths(*([args.dir] if args.dir else [])))
    except SnapshotError as err:
        raise LadderError(f"--bot-dir: {err}") from None


def _add(
    args: argparse.Namespace, book: LadderBook, location: str | Path, tree: Tree | None
) -> dict[str, Any]:
    if tree is not None:
        root = None if args.dir is None else args.dir / "entrants"
        snapshot = SnapshotStore(location, root).put(tree)
        player, new = book.add(args.name, now=time.time(), command=args.command_line,
                               files=snapshot.digest)  # fmt: skip
    else:
        key = None
        if args.public_key is not None:
            key = encode_key(remote_keys([f"{args.name}={args.public_key}"])[args.name])
        player, new = book.add(args.name, now=time.time(), public_key=key, token=args.token)
    shown = {**player.lineage(), "new": new}
    if player.kind == "remote":
        shown["token"] = player.token  # the organiser hands it to the entrant, with the key
        shown["public_key"] = player.public_key
    return shown


def _size(tree: Tree) -> str:
    files = sum(e.kind == "file" for e in tree.entries)
    return f"{files} file{'s' * (files != 1)}, {tree.size} bytes"


def _history(book: LadderBook, player: str) -> tuple[list[dict[str, Any]], str]:
    """A player's rating after each of its pairs, as data and as text."""
    if player not in {p.player for p in book.players()}:
        raise LadderError(f"no player {player!r} (a version: NAME.vN; see `ladder list`)")
    rows = [{"pair": r.deal_id, "opponent": r.opponent, "score": r.score, "mu": round(r.mu, 4),
             "sigma": round(r.sigma, 4), "at": r.at} for r in book.history(player)]  # fmt: skip
    lines = [f"{r['pair']:<16} {r['opponent']:<24} {r['score']:>5.2f} {r['mu']:>8.2f}"
             f" {r['sigma']:>6.2f}" for r in rows]  # fmt: skip
    return rows, "\n".join(lines) or f"{player} has no rated pair yet"


def _deals(book: LadderBook) -> tuple[list[dict[str, Any]], str]:
    """Every pair's deal commitment, and its deal key once it is closed, as data and text."""
    rows = [row.public() for row in PairLedger(book).rows()]
    lines = [f"{r['pair']:<16} {r['status']:<8} {' vs '.join(r['players'])}: commitment"
             f" {r['deal_commitment']}" + (f", key {r['deal_key']}" if r["deal_key"] else "")
             for r in rows]  # fmt: skip
    return rows, "\n".join(lines) or "no pairs yet"


def _check_ladder(location: str | Path, name: str) -> None:
    """StoreError if the store at ``location`` holds a tournament, not a ladder."""
    if isinstance(location, Path) and not location.exists():
        return
    store = open_store(location, tournament=name or None)
    try:
        if store.config() is not None and store.get_meta("ladder") is None:
            raise StoreError(store.location, "holds a tournament, not a ladder")
    finally:
        store.close()


def _where(args: argparse.Namespace) -> tuple[str | Path, str]:
    """The store the admin commands use, and the ladder's name in it (``""`` for a file)."""
    if args.store is None:
        if args.dir is None:
            raise LadderError("give the ladder's directory, or --store URL --ladder NAME")
        if args.ladder is not None:
            raise LadderError("--ladder names a ladder in a --store database, not in DIR")
        return args.dir / STORE, ""
    if not is_url(args.store):
        raise LadderError(f"--store must be a postgresql:// URL, not {args.store!r}")
    if args.dir is not None or not args.ladder:
        raise LadderError("--store URL takes --ladder NAME (the ladder's name), and no DIR")
    return args.store, args.ladder


def run_ladder_admin(args: argparse.Namespace) -> int:
    """``gin-referee ladder add|retire|list|history|deals|rounds DIR ...`` (or ``--store URL
    --ladder NAME``)."""
    tree: Tree | None = None
    try:
        location, name = _where(args)
        if isinstance(location, Path) and args.action != "add" and not location.exists():
            raise LadderError(f"{location}: no ladder store here")
        if args.action == "add":
            if args.command_line is None and not args.remote:
                raise LadderError("give --command CMD (a local entrant) or --remote")
            if args.command_line is not None and args.remote:
                raise LadderError("--command and --remote: an entrant is one or the other")
            tree = _entrant_tree(args)
            if args.dir is not None:
                private_dir(args.dir)
        _check_ladder(location, name)
        replayed = True
        with LadderBook.open(location, ladder=name) as book:
            if args.action == "add":
                data: Any = _add(args, book, location, tree)
                files = "" if tree is None else f", files {data['files'][:16]}: {_size(tree)}"
                text = (f"{'added' if data['new'] else 'unchanged:'} {data['player']} "
                        f"({data['kind']}, fingerprint {data['fingerprint']}{files})")  # fmt: skip
                if data.get("token"):
                    text += f"\ntoken: {data['token']}"
            elif args.action == "retire":
                data = book.retire(args.name, now=time.time()).lineage()
                text = f"retired {data['player']}"
            elif args.action == "history":
                data, text = _history(book, args.player)
            elif args.action == "deals":
                data, text = _deals(book)
            elif args.action == "rounds":
                data, text, replayed = rounds_report(book, location, name, args.dir)
            else:
                data = {"players": [p.lineage() for p in book.players()],
                        "log": [dict(zip(("at", "action", "entrant", "player", "detail"), row,
                                         strict=True)) for row in book.log()]}  # fmt: skip
                text = (
                    "\n".join(
                        f"{p['player']:<24} {p['kind']:<6} {p['status']:<10} {p['fingerprint']}"
                        f" {(p['files'] or '-')[:16]}"
                        for p in data["players"]
                    )
                    or "no entrants yet"
                )
    except (LadderError, ValueError, OSError, StoreError) as err:
        print(f"gin-referee: ladder {args.action}: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(data, indent=2) if args.json else text)
    return EXIT_OK if replayed else EXIT_MISMATCH
