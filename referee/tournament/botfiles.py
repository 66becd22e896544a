"""Bots whose files are a directory: a ladder's entrants (``ladder add --bot-dir``) and a
tournament's ``[[bots]] dir``. The directory is snapshotted (:mod:`.snapshots`) when the
version is added or the tournament first runs; every game then runs the bot in the snapshot's
read-only copy, as its working directory, and records the snapshot's digest
(docs/ladder.md, "What a version is").

:func:`~referee.tournament.commandline.command_problem` says what is wrong with a command
line for such a bot (a file it names outside its directory, or missing from it);
:func:`snapshot_bots` gives a tournament's
bots their digests (stored in the store's metadata at the first run, read back after);
:func:`with_files` gives the entries of a game the directory each runs in on this machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from referee.net import private
from referee.net.keys import secret_dirs
from referee.tournament.config import BotEntry, TournamentConfig
from referee.tournament.snapshots import SnapshotError, SnapshotStore, Tree, scan
from referee.tournament.store import Store, StoreError

__all__ = [
    "BOT_SNAPSHOTS",
    "FilesUnavailable",
    "private_paths",
    "scan_bots",
    "snapshot_bots",
    "with_files",
]

LOGGER = logging.getLogger(__name__)
BOT_SNAPSHOTS = "bot_snapshots"
"""Store metadata key: ``{bot: digest}`` of a tournament's bots given as directories."""


class FilesUnavailable(SnapshotError):
    """A bot's files cannot be had on this machine (missing from the store, or its copy changed
    on disk): the machine's fault, not the bot's; ``player`` names it."""

    def __init__(self, player: str, problem: str) -> None:
        super().__init__(f"{player}'s files: {problem}")
        self.player = player


def private_paths(*extra: str | Path) -> list[str]:
    """What no bot's files may hold or lie in: every output directory of the referee's user
    (records, stores, deal keys), its key directories, and ``extra``."""
    return [*private.outputs(), *secret_dirs(), *(os.fspath(p) for p in extra)]


def scan_bots(config: TournamentConfig, out: Path) -> dict[str, Tree]:
    """The trees of the bots given as directories, read now (before anything is recorded;
    none may hold the tournament's output ``out``): :class:`SnapshotError` names what cannot
    be read or kept."""
    trees = {}
    refuse = private_paths(out)
    for bot in config.bots:
        if bot.dir is not None:
            try:
                trees[bot.name] = scan(bot.dir, refuse=refuse)
            except SnapshotError as err:
                raise SnapshotError(f"bot {bot.name!r}: {err}") from None
    return trees


def snapshot_bots(
    config: TournamentConfig, store: Store, files: SnapshotStore, trees: dict[str, Tree]
) -> dict[str, BotEntry]:
    """The bots given as directories, with their files' digests: ``trees`` (:func:`scan_bots`)
    stored at the tournament's first run, the stored ones after (a directory changed since is
    logged: the games play the files the tournament started with). A worker passes no trees."""
    named = {bot.name: bot for bot in config.bots if bot.dir is not None}
    if not named:
        return {}
    text = store.get_meta(BOT_SNAPSHOTS)
    if text is None and trees:
        digests = {name: files.put(tree).digest for name, tree in sorted(trees.items())}
        text = store.set_meta(BOT_SNAPSHOTS, json.dumps(digests, sort_keys=True))
    stored: dict[str, str] = json.loads(text or "{}")
    entries = {}
    for name, bot in named.items():
        if name not in stored:
            raise SnapshotError(f"bot {name!r}: its dir was not given when the tournament started"
                                " (its games play the command alone: remove `dir`)")  # fmt: skip
        if name in trees and trees[name].digest != stored[name]:
            LOGGER.warning(
                "bot %s: %s changed since the tournament started: its games play the files it"
                " started with (%s)", name, bot.dir, stored[name][:16],
            )  # fmt: skip
        entries[name] = replace(bot, files=stored[name])
    return entries


async def with_files(files: SnapshotStore | None, entries: Sequence[BotEntry]) -> list[BotEntry]:
    """``entries`` each with the directory it runs in on this machine (written from the store
    the first time, in a thread): :class:`FilesUnavailable` if a version's cannot be had."""
    ready = []
    for entry in entries:
        if entry.files is None:
            ready.append(entry)
            continue
        if files is None:
            raise FilesUnavailable(entry.name, "no store of versions' files here")
        try:
            path = files.ready(entry.files) or await asyncio.to_thread(files.files, entry.files)
        except (SnapshotError, StoreError, OSError) as err:  # OSError: a full disk...
            raise FilesUnavailable(entry.name, str(err)) from err
        ready.append(replace(entry, cwd=str(path)))
    return ready
