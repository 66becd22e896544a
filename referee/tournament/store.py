"""The tournament results store: every scheduled game and its result, in one SQLite file.

A game goes through one lifecycle, shaped for a future server database shared by several
referee hosts (see ``docs/store.md`` for the PostgreSQL mapping of every method):

1. :meth:`Store.claim` takes the lowest game that is pending, or claimed under an expired lease,
   and hands out a fresh random lease token with an expiry;
2. the caller plays the game, calling :meth:`Store.renew` if it runs long;
3. :meth:`Store.record` stores the result, its faults and timings in ONE transaction, and only
   if the game is still claimed under that lease; a lost lease or a second call changes nothing.

Durability: WAL journal with ``synchronous=FULL``: a commit returns only after the WAL is
fsynced, so a recorded result survives ``kill -9`` *and* power loss. Each method is one short
``BEGIN IMMEDIATE`` transaction, so several connections (processes) serialize on SQLite's write
lock and can never claim the same game. Recorded games are final: triggers reject any update or
delete of a done game and any delete of a fault. Times are injected (``now``), never read here.
"""

from __future__ import annotations

import json
import math
import secrets
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

__all__ = ["SCHEMA_VERSION", "Claim", "GameRow", "GameSpec", "Store", "StoreError"]

SCHEMA_VERSION = 2
"""Version of the table layout written by this module (table ``schema_version``)."""

_APPLICATION = "gin-referee tournament store"
_STATUSES = ("pending", "claimed", "done")
_FAULT_COLUMNS = ("seat", "kind", "detail", "hand", "request_id")
_GAME_COLUMNS = "game_id, pairing, seat0, seat1, deal_id, pair_index"

_FINAL = "BEGIN SELECT RAISE(ABORT, 'recorded data is final'); END;"
_SCHEMA = f"""CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tournament (id INTEGER PRIMARY KEY CHECK (id = 1), config_json TEXT NOT NULL,
    config_hash TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE games (
    game_id INTEGER PRIMARY KEY CHECK (game_id >= 0), pairing TEXT NOT NULL,
    seat0 TEXT NOT NULL, seat1 TEXT NOT NULL, deal_id TEXT NOT NULL, pair_index INTEGER,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'done')),
    owner TEXT, lease TEXT, lease_expires REAL, attempts INTEGER NOT NULL DEFAULT 0,
    result_json TEXT, timings_json TEXT, recorded_at REAL,
    CHECK (status <> 'claimed' OR (lease IS NOT NULL AND lease_expires IS NOT NULL)),
    CHECK ((status = 'done') = (result_json IS NOT NULL AND recorded_at IS NOT NULL)));
CREATE INDEX games_status ON games (status);
CREATE INDEX games_open ON games (game_id) WHERE status <> 'done';
CREATE TABLE faults (id INTEGER PRIMARY KEY, game_id INTEGER NOT NULL REFERENCES games (game_id),
    seat INTEGER, kind TEXT NOT NULL, detail TEXT, hand INTEGER, request_id INTEGER,
    extra_json TEXT);
CREATE INDEX faults_game ON faults (game_id);
CREATE TRIGGER games_done_final BEFORE UPDATE ON games WHEN OLD.status = 'done' {_FINAL}
CREATE TRIGGER games_kept BEFORE DELETE ON games {_FINAL}
CREATE TRIGGER faults_final BEFORE UPDATE ON faults {_FINAL}
CREATE TRIGGER faults_kept BEFORE DELETE ON faults {_FINAL}
CREATE TRIGGER tournament_final BEFORE UPDATE ON tournament {_FINAL}
CREATE TRIGGER tournament_kept BEFORE DELETE ON tournament {_FINAL}
INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION});
INSERT INTO meta (key, value) VALUES ('application', '{_APPLICATION}')"""


class StoreError(Exception):
    """The store file cannot be used: not a database, not ours, another tournament, I/O error."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        """The database file."""
        self.reason = reason
        """What is wrong, in words."""

    def __str__(self) -> str:
        return f"tournament store {self.path}: {self.reason}"


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One scheduled game, fixed when the tournament is initialised."""

    game_id: int
    """0..N-1, stable for the tournament; also the claim order."""
    pairing: str
    """Stable name of the unordered pairing, e.g. ``alpha-vs-beta``."""
    seat0: str
    """Bot in seat 0."""
    seat1: str
    """Bot in seat 1."""
    deal_id: str
    """What the deck orders derive from along with the tournament's deal key, e.g.
    ``alpha-vs-beta/pair3`` (shared by the two games of a duplicate pair)."""
    pair_index: int | None
    """Duplicate pair number within the pairing, None when unpaired."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A game taken to be played, valid while nobody else re-claims it: ``lease`` is the random
    token that record/renew/release need, ``expires`` the time (injected clock) until which
    nobody else may take the game, ``attempt`` 1 for the first claim of the game, then 2, 3..."""

    game: GameSpec
    lease: str
    expires: float
    attempt: int


@dataclass(frozen=True, slots=True)
class GameRow:
    """A game as stored: ``status`` is ``pending``, ``claimed`` or ``done``; ``result``,
    ``recorded_at`` (injected clock) and ``timings`` are None until done (``timings`` may stay
    None); ``attempts`` counts the claims."""

    spec: GameSpec
    status: str
    result: dict[str, Any] | None
    attempts: int
    recorded_at: float | None
    timings: dict[str, Any] | None = None


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _check_times(now: float, lease_seconds: float | None = None) -> None:
    if not math.isfinite(now):
        raise ValueError(f"now must be a finite time, not {now!r}")
    if lease_seconds is not None and not (math.isfinite(lease_seconds) and lease_seconds > 0):
        raise ValueError(f"lease_seconds must be positive and finite, not {lease_seconds!r}")


@contextmanager
def _transaction(conn: sqlite3.Connection, begin: str) -> Iterator[sqlite3.Connection]:
    """BEGIN, then COMMIT if the body returns, ROLLBACK if it raises."""
    conn.execute(begin)
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _spec(row: Sequence[Any]) -> GameSpec:
    return GameSpec(row[0], row[1], row[2], row[3], row[4], row[5])


class Store:
    """The results store of one tournament (one SQLite file). Use :meth:`open`.

    Thread-safe (calls are serialized by a lock), but meant for one thread: each call is one
    short transaction. Several ``Store`` objects (processes) may share the file.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, *, busy_timeout: float = 5.0) -> Store:
        """Open (creating if new or empty) the store at ``path``; check it is ours; WAL mode.

        ``busy_timeout`` bounds the wait for another connection's write lock. A file that is not
        SQLite, another application's database, a newer schema or a failed integrity check raise
        :class:`StoreError`; a file that is not ours is never written to.
        """
        try:
            conn = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(path, f"cannot open: {exc}") from exc
        try:
            cls._create_or_check(path, conn)
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(path, f"cannot use WAL journal mode (got {mode!r})")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            conn.close()
            corrupt = type(exc) is sqlite3.DatabaseError  # not Operational: locked, I/O...
            what = "is not a SQLite database, or is corrupt" if corrupt else "cannot be opened"
            raise StoreError(path, f"{what}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    @staticmethod
    def _create_or_check(path: Path, conn: sqlite3.Connection) -> None:
        tables_sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
        tables = {row[0] for row in conn.execute(tables_sql)}
        if not tables:
            with _transaction(conn, "BEGIN IMMEDIATE"):
                if not conn.execute(tables_sql).fetchall():  # nobody created it meanwhile
                    for statement in _SCHEMA.split(";\n"):
                        conn.execute(statement)
                tables = {row[0] for row in conn.execute(tables_sql)}
        if not {"schema_version", "meta"} <= tables:
            names = ", ".join(sorted(tables))
            raise StoreError(
                path, f"is not a gin-referee tournament store (a SQLite database with: {names})"
            )
        app = conn.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        if app is None or app[0] != _APPLICATION:
            raise StoreError(path, f"is not a gin-referee tournament store (application {app})")
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_version")]
        if versions != [SCHEMA_VERSION]:
            raise StoreError(
                path,
                f"has schema version {versions}, this gin-referee reads only {SCHEMA_VERSION}",
            )
        missing = {"tournament", "games", "faults"} - tables
        if missing:
            raise StoreError(path, f"is damaged: missing tables {', '.join(sorted(missing))}")
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise StoreError(path, f"failed its integrity check: {'; '.join(problems)}")

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    def close(self) -> None:
        """Close the connection (idempotent). Nothing is lost: every method has committed."""
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def _tx(self, what: str, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction (``BEGIN IMMEDIATE`` when writing); sqlite errors become StoreError."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(self._path, f"{what}: the store is closed")
            try:
                with _transaction(conn, "BEGIN IMMEDIATE" if write else "BEGIN"):
                    yield conn
            except sqlite3.Error as exc:
                raise StoreError(self._path, f"{what} failed: {exc}") from exc

    def init_tournament(
        self, *, config: dict[str, Any], config_hash: str, games: Sequence[GameSpec], now: float
    ) -> bool:
        """Store the configuration and every game as pending; True on the first run.

        A later run with the same ``config_hash`` (and the same games) changes nothing and
        returns False (resume). Another hash raises :class:`StoreError`.
        """
        _check_times(now)
        ids = sorted(game.game_id for game in games)
        if ids != list(range(len(games))):
            raise ValueError("game ids must be exactly 0..N-1, each once")
        config_json = _dumps(config)
        rows = [(g.game_id, g.pairing, g.seat0, g.seat1, g.deal_id, g.pair_index) for g in games]
        with self._tx("init_tournament") as conn:
            found = conn.execute("SELECT config_hash FROM tournament WHERE id = 1").fetchone()
            if found is None:
                conn.execute(
                    "INSERT INTO tournament (id, config_json, config_hash, created_at)"
                    " VALUES (1, ?, ?, ?)",
                    (config_json, config_hash, now),
                )
                conn.executemany(f"INSERT INTO games ({_GAME_COLUMNS}) VALUES (?,?,?,?,?,?)", rows)
                return True
            if found[0] != config_hash:
                raise StoreError(
                    self._path,
                    f"was created for another tournament configuration (hash {found[0]}, now "
                    f"{config_hash}); use a new output directory, or the original configuration"
                    " to resume",
                )
            stored = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games ORDER BY game_id")
            if stored.fetchall() != sorted(rows):
                raise StoreError(
                    self._path, "has the same configuration hash but a different game schedule"
                )
            return False

    def config(self) -> tuple[dict[str, Any], str] | None:
        """The stored configuration and its hash, or None before :meth:`init_tournament`."""
        with self._tx("config", write=False) as conn:
            row = conn.execute("SELECT config_json, config_hash FROM tournament").fetchone()
        return None if row is None else (json.loads(row[0]), row[1])

    def claim(
        self,
        *,
        owner: str,
        lease_seconds: float,
        now: float,
        prefer: str | None = None,
        skip: Collection[int] = (),
    ) -> Claim | None:
        """Take the lowest game that is pending or whose lease expired (``expires <= now``),
        one of pairing ``prefer`` first if there is one (the worker's bots are still running),
        never one of the game ids in ``skip`` (games this run failed to play).

        Gives it a new random lease until ``now + lease_seconds`` and counts the attempt.
        None when nothing is claimable (all done, or claimed under live leases).
        """
        _check_times(now, lease_seconds)
        lease, expires = secrets.token_hex(16), now + lease_seconds
        claimable = (
            f"SELECT {_GAME_COLUMNS}, attempts FROM games"
            " WHERE status <> 'done' AND (status = 'pending' OR lease_expires <= ?)"
        )
        if skip:
            claimable += f" AND game_id NOT IN ({', '.join(str(int(g)) for g in skip)})"
        with self._tx("claim") as conn:
            row = None
            if prefer is not None:  # open games in game order: found within ~#pairings rows
                row = conn.execute(
                    claimable + " AND pairing = ? ORDER BY game_id LIMIT 1", (now, prefer)
                ).fetchone()
            if row is None:
                row = conn.execute(claimable + " ORDER BY game_id LIMIT 1", (now,)).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE games SET status = 'claimed', owner = ?, lease = ?, lease_expires = ?,"
                " attempts = attempts + 1 WHERE game_id = ?",
                (owner, lease, expires, row[0]),
            )
        return Claim(game=_spec(row), lease=lease, expires=expires, attempt=row[6] + 1)

    def renew(self, claim: Claim, *, lease_seconds: float, now: float) -> Claim | None:
        """Extend the lease to ``now + lease_seconds`` if still held (even if past its expiry
        but not re-claimed); None if lost."""
        _check_times(now, lease_seconds)
        expires = now + lease_seconds
        with self._tx("renew") as conn:
            cursor = conn.execute(
                "UPDATE games SET lease_expires = ?"
                " WHERE game_id = ? AND status = 'claimed' AND lease = ?",
                (expires, claim.game.game_id, claim.lease),
            )
            held = cursor.rowcount == 1
        return Claim(claim.game, claim.lease, expires, claim.attempt) if held else None

    def record(
        self,
        claim: Claim,
        *,
        result: dict[str, Any],
        faults: Sequence[dict[str, Any]],
        timings: dict[str, Any] | None,
        now: float,
    ) -> bool:
        """Record the result, faults and timings in one transaction if the lease still holds.

        The game must still be claimed under ``claim.lease``; an expired lease nobody re-claimed
        is accepted. Returns False, changing nothing, if the lease was lost or the game is done:
        a result is never recorded twice.
        """
        _check_times(now)
        result_json = _dumps(result)
        timings_json = None if timings is None else _dumps(timings)
        fault_rows: list[tuple[object, ...]] = []
        for fault in faults:
            if not isinstance(fault.get("kind"), str):
                raise ValueError(f"a fault needs a 'kind' string: {fault!r}")
            extra = {k: v for k, v in fault.items() if k not in _FAULT_COLUMNS}
            values = (fault.get(column) for column in _FAULT_COLUMNS)
            fault_rows.append((claim.game.game_id, *values, _dumps(extra) if extra else None))
        with self._tx("record") as conn:
            cursor = conn.execute(
                "UPDATE games SET status = 'done', result_json = ?, timings_json = ?,"
                " recorded_at = ? WHERE game_id = ? AND status = 'claimed' AND lease = ?",
                (result_json, timings_json, now, claim.game.game_id, claim.lease),
            )
            if cursor.rowcount != 1:
                return False
            conn.executemany(
                "INSERT INTO faults (game_id, seat, kind, detail, hand, request_id, extra_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                fault_rows,
            )
            return True

    def release(self, claim: Claim) -> None:
        """Give the game back (pending) if ``claim`` still holds it, e.g. on shutdown."""
        with self._tx("release") as conn:
            conn.execute(
                "UPDATE games SET status = 'pending', owner = NULL, lease = NULL,"
                " lease_expires = NULL WHERE game_id = ? AND status = 'claimed' AND lease = ?",
                (claim.game.game_id, claim.lease),
            )

    def release_all(self, *, owner: str | None = None) -> int:
        """Put every claimed game (of ``owner``, or of anyone) back to pending; the count.

        For resuming on a single host, where no claim can still be alive.
        """
        where = "status = 'claimed'" + ("" if owner is None else " AND owner = ?")
        with self._tx("release_all") as conn:
            cursor = conn.execute(
                "UPDATE games SET status = 'pending', owner = NULL, lease = NULL,"
                f" lease_expires = NULL WHERE {where}",
                () if owner is None else (owner,),
            )
            return cursor.rowcount

    def commit_deal(self, commitment: str) -> str:
        """Store the tournament's deal commitment unless one is stored; return the stored one
        (the caller compares: a resumed run must deal from the same key)."""
        with self._tx("commit_deal") as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('deal_commitment', ?)",
                (commitment,),
            )
            row = conn.execute("SELECT value FROM meta WHERE key = 'deal_commitment'").fetchone()
        return str(row[0])

    def deal_commitment(self) -> str | None:
        """The stored deal commitment (None before the first run dealt)."""
        with self._tx("deal_commitment", write=False) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'deal_commitment'").fetchone()
        return None if row is None else str(row[0])

    def counts(self) -> dict[str, int]:
        """Number of games by status (every status present, zeros included)."""
        with self._tx("counts", write=False) as conn:
            found = dict(conn.execute("SELECT status, count(*) FROM games GROUP BY status"))
        return {status: int(found.get(status, 0)) for status in _STATUSES}

    def games(self) -> list[GameRow]:
        """Every game, by game_id."""
        with self._tx("games", write=False) as conn:
            rows = conn.execute(
                f"SELECT {_GAME_COLUMNS}, status, result_json, attempts, recorded_at,"
                " timings_json FROM games ORDER BY game_id"
            ).fetchall()
        return [
            GameRow(_spec(row), row[6], _loads(row[7]), row[8], row[9], _loads(row[10]))
            for row in rows
        ]

    def faults(self) -> list[dict[str, Any]]:
        """Every recorded fault as a dict with its ``game_id``, in insertion order."""
        with self._tx("faults", write=False) as conn:
            rows = conn.execute(
                "SELECT game_id, seat, kind, detail, hand, request_id, extra_json"
                " FROM faults ORDER BY id"
            ).fetchall()
        names = ("game_id", *_FAULT_COLUMNS)
        return [(_loads(row[6]) or {}) | dict(zip(names, row[:6], strict=True)) for row in rows]
