"""Tournament stores: the :class:`Store` protocol (:mod:`.base`), SQLite (:mod:`.sqlite`, the
default: one file) and PostgreSQL (:mod:`.postgres`: one database for several machines).

:func:`open_store` opens either from a location: a ``postgresql://`` URL or a file path.
"""

from __future__ import annotations

from pathlib import Path

from referee.tournament.store.base import (
    Claim,
    GameRow,
    GameSpec,
    Runner,
    Store,
    StoreBusy,
    StoreError,
)
from referee.tournament.store.sqlite import SCHEMA_VERSION, SqliteStore

__all__ = [
    "SCHEMA_VERSION",
    "Claim",
    "GameRow",
    "GameSpec",
    "Runner",
    "SqliteStore",
    "Store",
    "StoreBusy",
    "StoreError",
    "is_url",
    "open_store",
]


def is_url(location: str | Path) -> bool:
    """True for a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path, *, tournament: str | None = None) -> Store:
    """Open the store at ``location``: a PostgreSQL URL (``tournament`` names the tournament
    in that database) or a SQLite file path."""
    if is_url(location):
        from referee.tournament.store.postgres import PgStore  # psycopg only when used

        return PgStore.open(str(location), tournament=tournament)
    return SqliteStore.open(Path(location))
