"""What a tournament's output directory holds, read for the report.

``tournament.sqlite`` (games, results, faults: :mod:`referee.tournament.store`), the standings
computed from it (:func:`referee.tournament.report.compute_standings`), each game's record under
``games/`` and each bot process's stderr under ``stderr/`` (see docs/tournaments.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.tournament.dealkey import LADDER_META
from referee.tournament.report import Standings, compute_standings
from referee.tournament.store import GameRow, SqliteStore, StoreError

__all__ = ["RunData", "RunError", "load_run", "stderr_tail"]

STORE_NAME = "tournament.sqlite"
_STDERR = re.compile(r"^g(\d+)-a(\d+)\.(.+)\.stderr$")
_RECORD = re.compile(r"^g(\d+)-a(\d+)\.jsonl(?:\.gz)?$")
TAIL_BYTES = 2000


class RunError(Exception):
    """A directory that is not a readable tournament run; names the path and the problem."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, reason)
        self.path, self.reason = path, reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(slots=True)
class RunData:
    """One run directory's games, faults and standings."""

    directory: Path
    config: dict[str, Any]
    rows: list[GameRow]
    faults: list[dict[str, Any]]
    standings: Standings
    records: dict[int, Path] = field(default_factory=dict)
    """The match record of each game (the last attempt's), by game id."""
    stderr: dict[str, list[tuple[int, int, Path]]] = field(default_factory=dict)
    """Each bot's stderr files as ``(game id, attempt, path)``, in game order."""

    def bot_of(self, game_id: int, seat: int | None) -> str | None:
        """The bot that sat in ``seat`` of game ``game_id``."""
        if seat not in (0, 1) or not 0 <= game_id < len(self.rows):
            return None
        spec = self.rows[game_id].spec
        return spec.seat0 if seat == 0 else spec.seat1

    def stderr_file(self, bot: str, game_id: int) -> Path | None:
        """The stderr of ``bot``'s process that played game ``game_id``: the file named for that
        game, else (a process kept between games) the latest one started before it."""
        best = None
        for game, _attempt, path in self.stderr.get(bot, []):
            if game <= game_id:
                best = path
        return best


def _index(directory: Path, pattern: re.Pattern[str]) -> list[tuple[re.Match[str], Path]]:
    if not directory.is_dir():
        return []
    found = [(m, p) for p in directory.iterdir() if (m := pattern.match(p.name))]
    return sorted(found, key=lambda item: (int(item[0][1]), int(item[0][2])))


def load_run(directory: Path) -> RunData:
    """Read a run directory; :class:`RunError` if it has no store or the store is unusable."""
    path = directory / STORE_NAME
    if not directory.is_dir():
        raise RunError(directory, "no such directory")
    if not path.is_file():
        raise RunError(path, "no tournament store here (is this a tournament's output directory?)")
    try:
        store = SqliteStore.open(path)
    except StoreError as err:
        raise RunError(path, err.reason) from err
    try:
        stored = store.config()
        rows = store.games()
        faults = store.faults()
        ladder = store.get_meta(LADDER_META) is not None
    except StoreError as err:
        raise RunError(path, err.reason) from err
    finally:
        store.close()
    if stored is None:
        raise RunError(path, "the store holds no tournament yet")
    sealed = _open_pairs_games(path) if ladder else set()
    rows = [_unplayed(row) if row.spec.game_id in sealed else row for row in rows]
    faults = [f for f in faults if f.get("game_id") not in sealed]
    data = RunData(directory, stored[0], rows, faults, compute_standings(rows))
    for match, record in _index(directory / "games", _RECORD):
        data.records[int(match[1])] = record  # sorted: the last attempt wins
    for row in rows:
        named = (row.result or {}).get("record")
        if isinstance(named, str) and (directory / "games" / Path(named).name).is_file():
            data.records[row.spec.game_id] = directory / "games" / Path(named).name
    for game_id in sealed:
        data.records.pop(game_id, None)
    for match, err_path in _index(directory / "stderr", _STDERR):
        if int(match[1]) not in sealed:
            data.stderr.setdefault(match[3], []).append((int(match[1]), int(match[2]), err_path))
    return data


def _open_pairs_games(path: Path) -> set[int]:
    """The games of a ladder's open pairs: their twin game, still to be played or being
    played, deals the same cards, so neither their records nor their results are shown."""
    from referee.tournament.ladder import LadderBook, PairLedger

    with LadderBook.open(path) as book:
        return {game for pair in PairLedger(book).rows(open_only=True) for game in pair.games}


def _unplayed(row: GameRow) -> GameRow:
    """``row`` as the report shows a sealed game: not played yet."""
    return GameRow(row.spec, "pending", None, row.attempts, None)


def stderr_tail(path: Path, size: int = TAIL_BYTES) -> str:
    """The last ``size`` bytes of a stderr file as text (from a line start when possible)."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            length = f.tell()
            f.seek(max(0, length - size))
            data = f.read()
    except OSError as err:
        return f"(cannot read {path.name}: {err.strerror})"
    if length > size and b"\n" in data:
        data = data.split(b"\n", 1)[1]
    return data.decode("utf-8", errors="replace").rstrip()
