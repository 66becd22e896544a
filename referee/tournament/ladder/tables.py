"""The ladder book's tables, in the tournament store's database: SQLite (the output
directory's file, one ladder) or PostgreSQL (one database, ladders told apart by name, as its
tournaments are), and one connection to either that runs a transaction at a time.

The book's SQL is written once, with ``?`` placeholders (turned into ``%s`` for psycopg);
every row carries its ladder's name (``""`` in a SQLite file, which holds one ladder).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from referee.tournament.store import SqliteStore, StoreError, is_url
from referee.tournament.store.sqlite import transaction

__all__ = ["Execute", "Tables"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS ladder_players (ladder TEXT NOT NULL,
    player TEXT NOT NULL, entrant TEXT NOT NULL, version INTEGER NOT NULL CHECK (version > 0),
    kind TEXT NOT NULL CHECK (kind IN ('local', 'remote')), command TEXT, fingerprint TEXT NOT NULL,
    token TEXT UNIQUE, public_key TEXT, added_at {real} NOT NULL, ended_at {real},
    ended TEXT CHECK (ended IN ('superseded', 'retired')), files TEXT,
    PRIMARY KEY (ladder, player), UNIQUE (ladder, entrant, version));
CREATE TABLE IF NOT EXISTS ladder_log (seq {serial}, ladder TEXT NOT NULL, at {real} NOT NULL,
    action TEXT NOT NULL, entrant TEXT NOT NULL, player TEXT, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ladder_current (ladder TEXT NOT NULL, player TEXT NOT NULL,
    mu {real} NOT NULL, sigma {real} NOT NULL, pairs INTEGER NOT NULL,
    updated_at {real} NOT NULL, PRIMARY KEY (ladder, player));
CREATE TABLE IF NOT EXISTS ladder_ratings (seq {serial}, ladder TEXT NOT NULL,
    deal_id TEXT NOT NULL, player TEXT NOT NULL, opponent TEXT NOT NULL, score {real} NOT NULL,
    mu {real} NOT NULL, sigma {real} NOT NULL, at {real} NOT NULL,
    UNIQUE (ladder, deal_id, player));
CREATE TABLE IF NOT EXISTS ladder_pairs (ladder TEXT NOT NULL, deal_id TEXT NOT NULL,
    player_a TEXT NOT NULL, player_b TEXT NOT NULL, games TEXT NOT NULL,
    local INTEGER NOT NULL, commitment TEXT NOT NULL, scheduled_at {real} NOT NULL,
    closed TEXT CHECK (closed IN ('rated', 'voided', 'unrated')), closed_at {real},
    deal_key TEXT, PRIMARY KEY (ladder, deal_id));
CREATE TABLE IF NOT EXISTS ladder_rounds (ladder TEXT NOT NULL, round INTEGER NOT NULL,
    drawn_at {real} NOT NULL, seed TEXT NOT NULL, candidates TEXT NOT NULL, bye TEXT,
    PRIMARY KEY (ladder, round));
CREATE TABLE IF NOT EXISTS ladder_draws (ladder TEXT NOT NULL, round INTEGER NOT NULL,
    idx INTEGER NOT NULL, player_a TEXT NOT NULL, player_b TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('waiting', 'started', 'voided')), deal_id TEXT,
    detail TEXT, PRIMARY KEY (ladder, round, idx))"""
SQLITE_SCHEMA = _SCHEMA.format(real="REAL", serial="INTEGER PRIMARY KEY")
_FILES_COLUMN = "ALTER TABLE ladder_players ADD COLUMN {maybe}files TEXT"
"""The digest of a local version's files (its snapshot), added to books made before it."""
PG_SCHEMA = _SCHEMA.format(real="double precision", serial="bigserial PRIMARY KEY")
_PG_LOCK = 0x6C6164  # advisory lock serialising the tables' creation

Execute = Callable[[str, Sequence[Any]], Any]
"""Runs one statement (``?`` placeholders) in the transaction; returns its cursor."""


class Tables:
    """One connection to the ladder tables of a store. Use :meth:`open`."""

    def __init__(self, location: str, conn: Any, postgres: bool) -> None:
        self.location = location
        self._conn: Any = conn
        self._postgres = postgres
        self._lock = threading.Lock()

    @classmethod
    def open(cls, location: str | Path) -> Tables:
        """Connect (creating the store, and the tables, if new); :class:`StoreError` if the
        store cannot be used."""
        if is_url(location):
            return cls._open_pg(str(location))
        path = Path(location)
        SqliteStore.open(path).close()  # creates it, or checks it is a store of ours
        try:
            conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=FULL")
            with transaction(conn, "BEGIN IMMEDIATE"):
                for statement in SQLITE_SCHEMA.split(";\n"):
                    conn.execute(statement)
                columns = {row[1] for row in conn.execute("PRAGMA table_info(ladder_players)")}
                if "files" not in columns:
                    conn.execute(_FILES_COLUMN.format(maybe=""))
        except sqlite3.Error as exc:
            raise StoreError(path, f"cannot open the ladder's tables: {exc}") from exc
        return cls(str(path), conn, postgres=False)

    @classmethod
    def _open_pg(cls, url: str) -> Tables:
        import psycopg

        from referee.tournament.store.postgres import redact

        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
                for statement in PG_SCHEMA.split(";\n"):
                    conn.execute(statement)
                has = conn.execute(
                    "SELECT 1 FROM information_schema.columns WHERE table_schema ="
                    " current_schema() AND table_name = 'ladder_players' AND column_name = 'files'"
                ).fetchone()
                if has is None:
                    conn.execute(_FILES_COLUMN.format(maybe="IF NOT EXISTS "))
        except psycopg.Error as exc:
            raise StoreError(redact(url), f"cannot open the ladder's tables: {exc}") from exc
        return cls(redact(url), conn, postgres=True)

    @property
    def postgres(self) -> bool:
        """Whether the store is a PostgreSQL database (else a SQLite file)."""
        return self._postgres

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

    @contextmanager
    def tx(self, what: str, *, write: bool = True) -> Iterator[Execute]:
        """One transaction; database errors become :class:`StoreError`."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(self.location, f"{what}: the ladder book is closed")
            if self._postgres:
                import psycopg

                def pg(sql: str, params: Sequence[Any] = ()) -> Any:
                    return conn.execute(sql.replace("?", "%s"), tuple(params))

                try:
                    with conn.transaction():
                        yield pg
                except psycopg.Error as exc:
                    raise StoreError(self.location, f"{what} failed: {exc}") from exc
                return

            def lite(sql: str, params: Sequence[Any] = ()) -> Any:
                return conn.execute(sql, tuple(params))

            try:
                with transaction(conn, "BEGIN IMMEDIATE" if write else "BEGIN"):
                    yield lite
            except sqlite3.Error as exc:
                raise StoreError(self.location, f"{what} failed: {exc}") from exc
