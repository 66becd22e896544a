"""The ``worker`` and ``fetch`` commands: more referee processes on a tournament's (or a
ladder's) shared store, and a game's files out of a PostgreSQL store (thin: parse, run,
print)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.cli.confinement import gate_config
from referee.cli.tournament import run_with_signals
from referee.match.record_gzip import record_stem
from referee.net.keys import KeyPair
from referee.tournament.ladder import (
    LADDER_KEY,
    LadderConfig,
    LadderWorker,
    ladder_worker_config,
    with_concurrency,
)
from referee.tournament.runner import TournamentRun
from referee.tournament.snapshots import SnapshotError
from referee.tournament.store import StoreError, is_url, open_store
from referee.tournament.worker import STORE_ENV, WorkerError, check_joinable, worker_config

__all__ = ["run_fetch", "run_worker"]

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 2, 70, 130


async def _watch_parent(parent: int, stop: asyncio.Event) -> None:
    """Stop when the process that started this worker is gone (it was killed)."""
    try:
        fd = os.pidfd_open(parent)
    except ProcessLookupError:
        stop.set()
        return
    gone = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, gone.set)  # a pidfd is readable once its process has exited
    try:
        if os.getppid() == parent:
            await gone.wait()
        stop.set()
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def run_worker(args: argparse.Namespace) -> int:
    """``gin-referee worker --store URL``: play games of a running tournament until none is
    left; the configuration comes from the store, the bots from this machine."""
    if not args.store:
        print(f"gin-referee: worker: give --store URL (or set {STORE_ENV})", file=sys.stderr)
        return EXIT_USAGE
    if args.concurrency is not None and not 1 <= args.concurrency <= 256:
        print("gin-referee: --concurrency must be between 1 and 256", file=sys.stderr)
        return EXIT_USAGE
    ladder: LadderConfig | None = None
    try:
        with open_store(args.store, tournament=args.tournament) as store:
            if store.get_meta(LADDER_KEY) is not None:
                ladder, text = ladder_worker_config(store, args.store)
                config = ladder.play
            else:
                config, text = worker_config(store)
            location = store.location
            out = args.out or (
                Path(args.store).parent if not is_url(args.store) else Path("runs") / config.name
            )
            check_joinable(store, out, config.seed)
    except (StoreError, WorkerError) as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.concurrency is not None:
        config = replace(config, concurrency=args.concurrency)
    if (refused := gate_config(config, args.require_sandbox)) is not None:
        return refused
    stop = asyncio.Event()
    common: dict[str, Any] = {"stop": stop, "store": args.store, "lease": args.lease,
                              "config_text": text, "curve": KeyPair.generate()}  # fmt: skip
    # (the key pair: local bots on TCP, local_transport = "tcp", get keys)
    run = (
        TournamentRun(config, out, worker=True, **common)
        if ladder is None
        else LadderWorker(with_concurrency(ladder, args.concurrency), out, **common)
    )
    watcher = None
    if args.parent is not None:
        watcher = asyncio.ensure_future(_watch_parent(args.parent, stop))
    try:
        interrupted = await run_with_signals(run, stop)
    except (StoreError, SnapshotError) as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if watcher is not None:
            watcher.cancel()
    print(f"worker {run.owner}: stopped ({location})", file=sys.stderr)
    if run.failed:  # referee bugs: those games stay unplayed (another runner may try them)
        for game, error in sorted(run.failed.items()):
            print(f"gin-referee: game {game + 1} (g{game:06d}) not played (referee error): {error}",
                  file=sys.stderr)  # fmt: skip
        return EXIT_INTERNAL
    if ladder is not None:  # a ladder never ends: being stopped is how its worker ends
        return EXIT_OK
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def run_fetch(args: argparse.Namespace) -> int:
    """``gin-referee fetch --store URL --out DIR``: every recorded game's record (``games/``)
    and its bots' stderr tails (``stderr/``), named as a local run names them."""
    if not is_url(args.store):
        print(f"gin-referee: --store must be a postgresql:// URL, not {args.store!r}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    try:
        with open_store(args.store, tournament=args.tournament) as store:
            written = 0
            for row in store.games():
                if row.status != "done" or row.result is None:
                    continue
                record = row.result.get("record")
                stem = record_stem(Path(str(record)).name) if record else f"g{row.spec.game_id:06d}"
                for seat in sorted({row.spec.seat0, row.spec.seat1}):
                    data = store.file(row.spec.game_id, f"stderr.{seat}")
                    if data is not None:
                        _write(args.out / "stderr" / f"{stem}.{seat}.stderr", data)
                data = store.file(row.spec.game_id, "record")
                if data is not None:
                    _write(args.out / "games" / f"{stem}.jsonl", data)
                    written += 1
    except StoreError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:  # --out not writable, a disk full: named, and what is written stays
        print(f"gin-referee: fetch: cannot write into {args.out}: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{written} record(s) written to {args.out / 'games'}")
    return EXIT_OK


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
