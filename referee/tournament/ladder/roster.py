"""How a ladder's players are run: the :class:`~referee.tournament.config.BotEntry` of each
version (a local command in the ladder's sandbox, run in its files' snapshot, or a remote bot's
token and key), and the check that a local player added before snapshots is still the program
it was added as, on this machine."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from referee.net.keys import KeyFileError, decode_key
from referee.tournament.config import BotEntry
from referee.tournament.ladder.book import Player, fingerprint_command

__all__ = ["entry_of", "same_program"]

LOGGER = logging.getLogger(__name__)


def entry_of(player: Player, local: BotEntry, *, curve: bool) -> BotEntry | None:
    """How ``player`` is run: ``local`` (the ladder's sandbox and limits) with its command, or
    a remote bot's token and public key; None (logged) if it cannot be played (an unusable
    key; no key under CURVE)."""
    if player.kind == "local":  # run in its files' snapshot (referee.tournament.botfiles)
        return replace(local, name=player.player, command=player.command, files=player.files)
    key: bytes | None = None
    if player.public_key is not None:
        try:
            key = decode_key(player.public_key, "")
        except KeyFileError as err:
            LOGGER.warning("%s not played: its public key is unusable (%s)", player.player, err)
            return None
    if key is None and curve:
        if player.active:
            LOGGER.warning("%s not played: a remote entrant needs a public key under CURVE",
                           player.player)  # fmt: skip
        return None
    return BotEntry(player.player, None, player.token, public_key=key)


def same_program(player: Player, cwd: Path | None = None) -> bool:
    """Whether a local player's command and files are, on this machine, the ones it was added
    with (its fingerprint); True for a remote player, and for a local one whose files are a
    snapshot (read-only, checked against its digest where it is played)."""
    if player.command is None or player.files is not None:
        return True
    return fingerprint_command(player.command, cwd or Path.cwd()) == player.fingerprint
