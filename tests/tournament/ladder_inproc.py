"""A real ladder run inside the test's own event loop (its bots are real sandboxed processes):
entrants added as ``ladder add --bot-dir`` adds them, the run stopped once enough pairs are
rated. Faster than a ``ladder run`` process, whose start costs a second of imports."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from referee.net.private import private_dir
from referee.tournament.ladder import LadderBook, LadderRun, Pair, parse_ladder
from referee.tournament.snapshots import SnapshotStore, Tree
from tests.e2e.helpers import PY

FAST_LADDER: dict[str, dict[str, object]] = {
    "ladder": {"name": "lad", "concurrency": 2, "poll": 0.1, "max_hands_per_game": 1,
               "duplicate": False},
    "time": {"move": 1.0, "bank": 2.0, "startup": 15.0, "heartbeat": 0.5},
}  # fmt: skip
"""One game a pair, one hand a game, margins a loaded machine does not eat."""


def add_entrant(
    location: str | Path, out: Path | None, name: str, command: str, bot_dir: Path | None,
    ladder: str = "",
) -> str:  # fmt: skip
    """Add a version as ``ladder add`` does (its files snapshotted); its player name."""
    if out is not None:
        private_dir(out)
    store = SnapshotStore(location, None if out is None else out / "entrants")
    snapshot = store.add(bot_dir) if bot_dir is not None else store.put(Tree(()))
    with LadderBook.open(location, ladder=ladder) as book:
        player, _ = book.add(name, now=time.time(), command=command, files=snapshot.digest)
    return player.player


def python_bot(directory: Path, source: str) -> Path:
    """A directory holding ``bot.py`` (run as ``PY bot.py``)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "bot.py").write_text(source)
    return directory


async def run_ladder(
    out: Path,
    pairs: int,
    *,
    store: str | None = None,
    within: float = 60.0,
    on_scheduled: Callable[[Pair], None] | None = None,
    failed: dict[int, str] | None = None,
    **settings: object,
) -> list[Pair]:
    """Run a ladder in ``out`` (on ``store``, a PostgreSQL URL, if given) until ``pairs`` pairs
    are rated (at most ``within`` seconds); the pairs rated. The games it failed go to
    ``failed`` (none allowed without it)."""
    table = {**FAST_LADDER["ladder"], **settings}
    config = parse_ladder({**FAST_LADDER, "ladder": table})
    rated: list[Pair] = []
    done = asyncio.Event()
    stop = asyncio.Event()

    def on_pair(pair: Pair) -> None:
        rated.append(pair)
        if len(rated) >= pairs:
            done.set()
            stop.set()  # now: no slot starts another pair

    run = LadderRun(config, out, stop=stop, bind="tcp://127.0.0.1:0", on_pair=on_pair,
                    on_scheduled=on_scheduled, store=store, lease=30.0)  # fmt: skip
    task = asyncio.ensure_future(run.run())
    try:
        waiter = asyncio.ensure_future(done.wait())
        await asyncio.wait({task, waiter}, timeout=within, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if task.done():
            task.result()  # the run ended by itself: its error
        assert done.is_set(), f"{len(rated)} of {pairs} pairs rated in {within} s"
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
    if failed is None:
        assert not run.failed, run.failed
    else:
        failed.update(run.failed)
    return rated


__all__ = ["FAST_LADDER", "PY", "add_entrant", "python_bot", "run_ladder"]
