"""The versions' files in the results store: every tree's manifest (``snapshot_trees``) and
every file's contents once (``snapshot_blobs``, keyed by SHA-256), in the SQLite file or the
PostgreSQL database that holds the tournament's or ladder's results, so that every machine
playing from that store gets the same files. Content-addressed, so the rows are shared by every
ladder and tournament of a database and are never changed or deleted (docs/store.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from referee.tournament.snapshots.tree import Tree
from referee.tournament.store import SqliteStore, StoreError, is_url
from referee.tournament.store.sqlite import transaction

__all__ = ["SnapshotTables"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS snapshot_trees (digest TEXT PRIMARY KEY,
    manifest TEXT NOT NULL, entries INTEGER NOT NULL, bytes {big} NOT NULL,
    added_at {real} NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_blobs (digest TEXT PRIMARY KEY, size {big} NOT NULL,
    data {blob} NOT NULL)"""
_SQLITE = _SCHEMA.format(real="REAL", big="INTEGER", blob="BLOB")
_PG = _SCHEMA.format(real="double precision", big="bigint", blob="bytea")
_PG_LOCK = 0x736E6170  # advisory lock serialising the tables' creation
BATCH = 8 << 20
"""Bytes of file contents stored per transaction."""


class SnapshotTables:
    """One connection to a store's snapshot tables, for one piece of work (``with``)."""

    def __init__(self, location: str | Path) -> None:
        self.location = str(location)
        self._postgres = is_url(location)
        self._conn: Any = self._open_pg(str(location)) if self._postgres else self._open(location)

    def _open(self, location: str | Path) -> sqlite3.Connection:
        path = Path(location)
        SqliteStore.open(path).close()  # creates it, or checks that it is a store of ours
        try:
            conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            with transaction(conn, "BEGIN IMMEDIATE"):
                for statement in _SQLITE.split(";\n"):
                    conn.execute(statement)
        except sqlite3.Error as exc:
            raise StoreError(path, f"cannot open the versions' files: {exc}") from exc
        return conn

    def _open_pg(self, url: str) -> Any:
        import psycopg

        from referee.tournament.store.pg_open import redact

        self.location = redact(url)
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
                for statement in _PG.split(";\n"):
                    conn.execute(statement)
        except psycopg.Error as exc:
            raise StoreError(self.location, f"cannot open the versions' files: {exc}") from exc
        return conn

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> SnapshotTables:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self, what: str) -> Iterator[Any]:
        """A transaction; its statements take ``?`` placeholders. Errors: StoreError."""
        conn = self._conn
        if self._postgres:
            import psycopg

            try:
                with conn.transaction():
                    yield lambda sql, args=(): conn.execute(sql.replace("?", "%s"), tuple(args))
            except psycopg.Error as exc:
                raise StoreError(self.location, f"{what} failed: {exc}") from exc
            return
        try:
            with transaction(conn, "BEGIN IMMEDIATE"):
                yield lambda sql, args=(): conn.execute(sql, tuple(args))
        except sqlite3.Error as exc:
            raise StoreError(self.location, f"{what} failed: {exc}") from exc

    def put(self, tree: Tree, *, now: float) -> None:
        """Store the contents ``tree`` holds that are not stored yet, in transactions of at
        most :data:`BATCH` bytes (a running ladder's writes wait for one of them, not for a
        whole version), then its manifest: a tree is never stored before its files (contents
        left by an interrupted call are harmless, and used by the next)."""
        with self._tx("reading the stored files") as run:
            have = self._have(run, tree.blobs)
        batches: list[list[tuple[str, bytes]]] = [[]]
        size = 0
        for digest, data in tree.blobs.items():
            if digest not in have:
                if size + len(data) > BATCH and batches[-1]:
                    batches.append([])
                    size = 0
                batches[-1].append((digest, data))
                size += len(data)
        for batch in filter(None, batches):
            with self._tx("storing a version's files") as run:
                for digest, data in batch:
                    run("INSERT INTO snapshot_blobs (digest, size, data) VALUES (?, ?, ?)"
                        " ON CONFLICT (digest) DO NOTHING", (digest, len(data), data))  # fmt: skip
        with self._tx("storing a version's files") as run:
            run(
                "INSERT INTO snapshot_trees (digest, manifest, entries, bytes, added_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
                (tree.digest, tree.canonical().decode(), len(tree.entries), tree.size, now),
            )

    @staticmethod
    def _have(run: Any, digests: Iterable[str]) -> set[str]:
        wanted, found = list(digests), set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = run(f"SELECT digest FROM snapshot_blobs WHERE digest IN ({marks})", chunk)
            found |= {str(row[0]) for row in rows.fetchall()}
        return found

    def manifest(self, digest: str) -> str | None:
        """A stored tree's canonical JSON, or None."""
        with self._tx("reading a version's manifest") as run:
            row = run("SELECT manifest FROM snapshot_trees WHERE digest = ?", (digest,)).fetchone()
        return None if row is None else str(row[0])

    def blob(self, digest: str) -> bytes:
        """A file's contents; :class:`StoreError` if the store lacks them."""
        with self._tx("reading a version's file") as run:
            row = run("SELECT data FROM snapshot_blobs WHERE digest = ?", (digest,)).fetchone()
        if row is None:
            missing = f"the contents {digest[:16]} of a version's file are missing"
            raise StoreError(self.location, missing)
        return bytes(row[0])
