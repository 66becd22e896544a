"""Opening a PostgreSQL store's database: the connection, the tables on first use (under an
advisory lock, so that two referees starting at once create them once), the schema version,
and which tournament a command means when it names none (:class:`~.postgres.PgStore`)."""

from __future__ import annotations

import re
from typing import Any

import psycopg

from referee.tournament.store.base import StoreError
from referee.tournament.store.schemas import PG_SCHEMA as _SCHEMA

__all__ = ["PG_SCHEMA_VERSION", "connect", "create_or_check", "only_tournament", "redact"]

PG_SCHEMA_VERSION = 1
"""Version of the PostgreSQL table layout (table ``gin_schema``)."""

_LOCK_KEY = 0x67696E  # advisory lock serialising schema creation


def redact(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def connect(url: str, timeout: float) -> tuple[str, psycopg.Connection[Any]]:
    """The redacted location and an autocommit connection to ``url``; :class:`StoreError`
    saying why not."""
    location = redact(url)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=max(1, round(timeout)))
    except psycopg.Error as exc:
        raise StoreError(location, f"cannot connect: {exc}".strip()) from exc
    return location, conn


def create_or_check(location: str, conn: psycopg.Connection[Any]) -> None:
    """Create the tables if the database has none of ours; check their schema version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        found = conn.execute("SELECT to_regclass('gin_schema')").fetchone()
        if found is None or found[0] is None:
            taken = conn.execute(
                "SELECT to_regclass('games'), to_regclass('tournament')"
            ).fetchone()
            if taken is not None and any(taken):
                raise StoreError(
                    location, "holds tables named games/tournament of another application"
                )
            for statement in _SCHEMA.split(";\n"):
                conn.execute(statement.encode())
            conn.execute("INSERT INTO gin_schema VALUES (%s)", (PG_SCHEMA_VERSION,))
    versions = [row[0] for row in conn.execute("SELECT version FROM gin_schema")]
    if versions != [PG_SCHEMA_VERSION]:
        raise StoreError(
            location,
            f"has schema version {versions}, this gin-referee reads only {PG_SCHEMA_VERSION}",
        )


def only_tournament(location: str, conn: psycopg.Connection[Any]) -> str:
    """The name of the one unfinished tournament (else the only one) the database holds;
    :class:`StoreError` listing them if that is not one."""
    rows = conn.execute(
        "SELECT t.tournament, bool_or(g.status <> 'done') FROM tournament t"
        " JOIN games g USING (tournament) GROUP BY t.tournament ORDER BY t.tournament"
    ).fetchall()
    open_ones = [row[0] for row in rows if row[1]]
    if len(open_ones) == 1:
        return str(open_ones[0])
    if len(rows) == 1:
        return str(rows[0][0])
    names = ", ".join(row[0] for row in rows) or "none"
    raise StoreError(location, f"name the tournament (--tournament); it holds: {names}")
