"""A tournament's schedule of games, and the stored form of a finished game's result.

Duplicate deals: games ``2p`` and ``2p+1`` of a pairing share a ``deal_id``, so they see the
same deck orders, with the seats swapped. Not when a remote bot plays them: a remote bot may
remember the first game's cards, so it would know its opponent's whole hand in the second
(docs/statistics.md, "Remote bots and duplicate deals"). Such a pair's ``deal_id`` ends in
:data:`SEPARATE`, and each of its games deals from a label of its own (:func:`deck_label`).

A finished game's record is compressed before its result is stored
(:func:`compress_record_of`), so the result names the file that stays.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.match import MatchResult
from referee.match.record_gzip import compress_record
from referee.tournament.config import TournamentConfig
from referee.tournament.store import Claim, GameSpec

__all__ = ["SEPARATE", "STDERR_TAIL", "GameOutcome", "compress_record_of", "deck_label",
           "game_files", "result_dict", "schedule"]  # fmt: skip

LOGGER = logging.getLogger(__name__)
STDERR_TAIL = 65536
"""Bytes of a bot's stderr (its end) kept with the game in a PostgreSQL store."""


SEPARATE = "/separate"
"""The end of the deal id of a pair whose two games deal different cards."""


def deck_label(spec: GameSpec) -> str:
    """The deal id a game's decks derive from: its pair's (a duplicate pair's two games deal
    the same cards), or, for a pair dealt :data:`SEPARATE`, its own (``.../separate/g12``)."""
    return f"{spec.deal_id}/g{spec.game_id}" if spec.deal_id.endswith(SEPARATE) else spec.deal_id


def schedule(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, interleaving pairings so early standings are fair."""
    games: list[GameSpec] = []
    pairings = config.pairings()
    remote = {b.name for b in config.bots if b.command is None}
    for k in range(config.games_per_pairing):
        for first, second in pairings:
            pairing = f"{first}-vs-{second}"
            swap = k % 2 == 1
            seat0, seat1 = (second, first) if swap else (first, second)
            if config.duplicate:
                pair_index: int | None = k // 2
                deal_id = f"{pairing}/pair{k // 2}"
                if {first, second} & remote:  # a remote bot would remember the first deal
                    deal_id += SEPARATE
            else:
                pair_index = None
                deal_id = f"{pairing}/game{k}"
            games.append(GameSpec(len(games), pairing, seat0, seat1, deal_id, pair_index))
    return games


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """A finished game as reported to progress displays."""

    spec: GameSpec
    """The game."""
    result: dict[str, Any]
    """What was stored."""


def result_dict(spec: GameSpec, result: MatchResult) -> dict[str, Any]:
    """The stored form of a game's result."""
    names = (spec.seat0, spec.seat1)
    winner = None if result.winner is None else names[result.winner]
    return {
        "seats": list(names),
        "winner": winner,
        "reason": result.reason,
        "totals": [s.points for s in result.seats],
        "hands_won": [s.hands_won for s in result.seats],
        "decisions": [s.decisions for s in result.seats],
        "time_used": [round(s.time_used, 4) for s in result.seats],
        "faults": [f.to_dict() for s in result.seats for f in s.faults],
        "record": result.record_path,
        "sandbox": result.sandbox,
    }


def compress_record_of(result: MatchResult) -> MatchResult:
    """``result`` naming its record compressed (:func:`compress_record`); unchanged, with a
    warning, if it could not be (the plain record stays: nothing recorded is lost).

    It runs on the loop, between the game's end and the storing of its result, with no await
    in between: a shutdown that cancels the tournament's tasks cannot come between a finished
    game and its result (in a worker thread it could, and the finished game was played again
    on resume). It takes 0.3-1.5 ms of the loop, about the store's own commit; the clocks
    do not charge the loop's time to the bots."""
    if result.record_path is None:
        return result
    try:
        path = compress_record(Path(result.record_path))
    except OSError as err:
        LOGGER.warning("record %s left uncompressed: %s", result.record_path, err)
        return result
    return replace(result, record_path=str(path))


def game_files(out: Path, claim: Claim) -> dict[str, bytes]:
    """A played game's plain record and its bots' stderr tails (from ``out``), for a store
    shared between machines."""
    match_id = f"g{claim.game.game_id:06d}-a{claim.attempt}"
    files: dict[str, bytes] = {}
    with contextlib.suppress(OSError):
        files["record"] = (out / "games" / f"{match_id}.jsonl").read_bytes()
    for name in {claim.game.seat0, claim.game.seat1}:
        with (
            contextlib.suppress(OSError),
            open(out / "stderr" / f"{match_id}.{name}.stderr", "rb") as err,
        ):
            err.seek(max(0, err.seek(0, 2) - STDERR_TAIL))
            files[f"stderr.{name}"] = err.read()
    return files
