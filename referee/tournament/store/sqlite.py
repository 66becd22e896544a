"""The SQLite tournament store: one file on a local disk, shared by the processes of one machine.

Durability: WAL journal with ``synchronous=FULL``: a commit returns only after the WAL is
fsynced, so a recorded result survives ``kill -9`` *and* power loss. Each method is one short
``BEGIN IMMEDIATE`` transaction, so several connections (processes) serialize on SQLite's write
lock and can never claim the same game. Recorded games are final: triggers reject any update or
delete of a done game and any delete of a fault. The lifecycle is :mod:`.base`'s.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from referee.tournament.store.base import (
    STATUSES,
    Claim,
    GameRow,
    GameSpec,
    Runner,
    StoreBase,
    StoreBusy,
    StoreError,
    busy_reason,
    check_added,
    check_schedule,
    check_times,
    dumps,
    fault_dict,
    fault_rows,
    other_config,
)
from referee.tournament.store.schemas import APPLICATION, SQLITE_VERSION
from referee.tournament.store.schemas import SQLITE_RUNNERS as _RUNNERS
from referee.tournament.store.schemas import SQLITE_SCHEMA as _SCHEMA

__all__ = ["SCHEMA_VERSION", "SqliteStore", "transaction"]

SCHEMA_VERSION = SQLITE_VERSION
"""Version of the table layout written by this module (table ``schema_version``)."""

_APPLICATION = APPLICATION
_GAME_COLUMNS = "game_id, pairing, seat0, seat1, deal_id, pair_index"

_RELEASE = (
    "UPDATE games SET status = 'pending', owner = NULL, lease = NULL, lease_expires = NULL"
    " WHERE status = 'claimed'"
)


@contextmanager
def transaction(conn: sqlite3.Connection, begin: str) -> Iterator[sqlite3.Connection]:
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


class SqliteStore(StoreBase):
    """The results store of one tournament (one SQLite file). Use :meth:`open`.

    Thread-safe (calls are serialized by a lock), but meant for one thread: each call is one
    short transaction. Several ``SqliteStore`` objects (processes) may share the file.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, *, busy_timeout: float = 5.0) -> SqliteStore:
        """Open (creating if new or empty) the store at ``path``; check it is ours; WAL mode.

        ``busy_timeout`` bounds the wait for another connection's write lock. A file that is not
        SQLite, another application's database, a newer schema or a failed integrity check raise
        :class:`StoreError`; a file that is not ours is never written to.
        """
        try:  # made 0600 whatever the umask: SQLite gives its journal the file's mode
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        except FileExistsError:
            pass
        except OSError as exc:
            raise StoreError(path, f"cannot open: {exc.strerror}") from exc
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
            with transaction(conn, "BEGIN IMMEDIATE"):
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
        if "runners" not in tables:  # added without a version change: stores of 2 lack it
            conn.execute(_RUNNERS)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def location(self) -> str:
        """The database file, as text."""
        return str(self._path)

    @contextmanager
    def _tx(self, what: str, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction (``BEGIN IMMEDIATE`` when writing); sqlite errors become StoreError."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(self._path, f"{what}: the store is closed")
            try:
                with transaction(conn, "BEGIN IMMEDIATE" if write else "BEGIN"):
                    yield conn
            except sqlite3.Error as exc:
                raise StoreError(self._path, f"{what} failed: {exc}") from exc

    def init_tournament(
        self,
        *,
        config: dict[str, Any],
        config_hash: str,
        games: Sequence[GameSpec],
        now: float,
        growing: bool = False,
    ) -> bool:
        """Store the configuration and every game as pending; True on the first run.

        A later run with the same ``config_hash`` (and the same games, unless ``growing``)
        changes nothing and returns False (resume). Another hash raises :class:`StoreError`.
        """
        check_times(now)
        rows = check_schedule(games)
        config_json = dumps(config)
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
                raise StoreError(self._path, other_config(found[0], config_hash))
            if growing:
                return False
            stored = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games ORDER BY game_id")
            if stored.fetchall() != rows:
                raise StoreError(
                    self._path, "has the same configuration hash but a different game schedule"
                )
            return False

    def add_games(self, games: Sequence[GameSpec]) -> None:
        """Append pending games whose ids continue the schedule; StoreError if they do not."""
        with self._tx("add_games") as conn:
            first = conn.execute("SELECT coalesce(max(game_id) + 1, 0) FROM games").fetchone()[0]
            try:
                rows = check_added(games, int(first))
            except ValueError as err:
                raise StoreError(self._path, str(err)) from None
            conn.executemany(f"INSERT INTO games ({_GAME_COLUMNS}) VALUES (?,?,?,?,?,?)", rows)

    def next_game_id(self) -> int:
        """One more than the highest game id stored, 0 if none."""
        with self._tx("next_game_id", write=False) as conn:
            row = conn.execute("SELECT coalesce(max(game_id) + 1, 0) FROM games").fetchone()
        return int(row[0])

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
        only: bool = False,
    ) -> Claim | None:
        """Take the lowest game that is pending or whose lease expired (``expires <= now``),
        one of pairing ``prefer`` first if there is one (the worker's bots are still running;
        with ``only``, none of another pairing), never one of the game ids in ``skip`` (games
        this run failed to play).

        Gives it a new random lease until ``now + lease_seconds`` and counts the attempt.
        None when nothing is claimable (all done, or claimed under live leases).
        """
        check_times(now, lease_seconds)
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
            if row is None and not only:
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
        check_times(now, lease_seconds)
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
        files: Mapping[str, bytes] | None = None,
    ) -> bool:
        """Record the result, faults and timings in one transaction if the lease still holds.

        The game must still be claimed under ``claim.lease``; an expired lease nobody re-claimed
        is accepted. Returns False, changing nothing, if the lease was lost or the game is done:
        a result is never recorded twice. ``files`` are not kept: a SQLite store's records and
        stderr files are in its output directory already.
        """
        check_times(now)
        result_json = dumps(result)
        timings_json = None if timings is None else dumps(timings)
        rows = [(claim.game.game_id, *row) for row in fault_rows(faults)]
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
                rows,
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
        where = "" if owner is None else " AND owner = ?"
        with self._tx("release_all") as conn:
            cursor = conn.execute(_RELEASE + where, () if owner is None else (owner,))
            return cursor.rowcount

    def set_meta(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless one is stored; return the stored one."""
        with self._tx("set_meta") as conn:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0])

    def get_meta(self, key: str) -> str | None:
        """A stored text value, None if absent."""
        with self._tx("get_meta", write=False) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def join(
        self, runner: Runner, *, now: float, exclusive: bool, dead: Sequence[str] = ()
    ) -> list[Runner]:
        """Register ``runner``; forget the ``dead`` ones and release their claims; with
        ``exclusive``, :class:`StoreBusy` if another runner is alive. The others alive."""
        check_times(now)
        with self._tx("join") as conn:
            conn.execute("DELETE FROM runners WHERE expires <= ?", (now,))
            for owner in dead:
                conn.execute("DELETE FROM runners WHERE owner = ?", (owner,))
            conn.execute(  # claims of no live runner: their runner is dead
                _RELEASE + " AND owner NOT IN (SELECT owner FROM runners) AND owner <> ?",
                (runner.owner,),
            )
            others = [
                Runner(*row)
                for row in conn.execute(
                    "SELECT owner, host, pid, role, expires FROM runners"
                    " WHERE owner <> ? ORDER BY owner",
                    (runner.owner,),
                )
            ]
            rivals = [other for other in others if other.role == "tournament"]
            if exclusive and rivals:
                raise StoreBusy(self._path, busy_reason(rivals))
            conn.execute(
                "INSERT OR REPLACE INTO runners (owner, host, pid, role, expires)"
                " VALUES (?, ?, ?, ?, ?)",
                (runner.owner, runner.host, runner.pid, runner.role, runner.expires),
            )
        return others

    def runners(self, *, now: float) -> list[Runner]:
        """The registered runners alive at ``now``."""
        with self._tx("runners", write=False) as conn:
            rows = conn.execute(
                "SELECT owner, host, pid, role, expires FROM runners WHERE expires > ?"
                " ORDER BY owner",
                (now,),
            ).fetchall()
        return [Runner(*row) for row in rows]

    def heartbeat(self, owner: str, *, expires: float) -> bool:
        """Keep ``owner`` alive until ``expires``; False if it was forgotten."""
        check_times(expires)
        with self._tx("heartbeat") as conn:
            cursor = conn.execute(
                "UPDATE runners SET expires = ? WHERE owner = ?", (expires, owner)
            )
            return cursor.rowcount == 1

    def leave(self, owner: str) -> None:
        """Unregister ``owner``."""
        with self._tx("leave") as conn:
            conn.execute("DELETE FROM runners WHERE owner = ?", (owner,))

    def file(self, game_id: int, name: str) -> bytes | None:
        """Always None: a SQLite store's files are in its output directory."""
        return None

    def counts(self) -> dict[str, int]:
        """Number of games by status (every status present, zeros included)."""
        with self._tx("counts", write=False) as conn:
            found = dict(conn.execute("SELECT status, count(*) FROM games GROUP BY status"))
        return {status: int(found.get(status, 0)) for status in STATUSES}

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
        return [fault_dict(row) for row in rows]
