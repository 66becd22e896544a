"""The ladder's book, in the tournament store's SQLite file: its players (every version of
every entrant, with its lineage), the audit log of additions and retirements, and the rating
history. ``gin-referee ladder add|retire|list`` write and read it while ``ladder run`` plays.

An *entrant* is a competitor (a name); each version of it is a *player* of its own,
``NAME.vN``, rated from scratch. A version is either a local command (run in the sandbox; its
fingerprint is the SHA-256 of the command and of every file it names by path) or a remote bot
(a token to present, and, under CURVE, the public key it must connect with; its fingerprint
is the key's). Adding an entrant whose active version has the same kind and fingerprint
changes nothing; anything else makes a new version and ends the previous one (``superseded``).
Retiring ends the active version (``retired``). Ended players keep their ratings and history.

Rows are never deleted; the log says who was added, updated and retired, and when.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shlex
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from referee.tournament.store import SqliteStore, StoreError
from referee.tournament.store.sqlite import transaction

__all__ = [
    "LadderBook",
    "LadderError",
    "Player",
    "RatingRow",
    "fingerprint_command",
    "resolve_command",
]

_SCHEMA = """CREATE TABLE IF NOT EXISTS ladder_players (
    player TEXT PRIMARY KEY, entrant TEXT NOT NULL, version INTEGER NOT NULL CHECK (version > 0),
    kind TEXT NOT NULL CHECK (kind IN ('local', 'remote')), command TEXT, fingerprint TEXT NOT NULL,
    token TEXT UNIQUE, public_key TEXT, added_at REAL NOT NULL, ended_at REAL,
    ended TEXT CHECK (ended IN ('superseded', 'retired')), UNIQUE (entrant, version));
CREATE TABLE IF NOT EXISTS ladder_log (seq INTEGER PRIMARY KEY, at REAL NOT NULL,
    action TEXT NOT NULL, entrant TEXT NOT NULL, player TEXT, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ladder_current (player TEXT PRIMARY KEY REFERENCES ladder_players,
    mu REAL NOT NULL, sigma REAL NOT NULL, pairs INTEGER NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS ladder_ratings (seq INTEGER PRIMARY KEY, deal_id TEXT NOT NULL,
    player TEXT NOT NULL REFERENCES ladder_players, opponent TEXT NOT NULL,
    score REAL NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL, at REAL NOT NULL,
    UNIQUE (deal_id, player))"""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,47}")
_PLAYER_COLUMNS = ("player, entrant, version, kind, command, fingerprint, token, public_key,"
                   " added_at, ended_at, ended")  # fmt: skip


class LadderError(ValueError):
    """A request the book refuses (an unknown entrant, a bad name...); the message says why."""


@dataclass(frozen=True, slots=True)
class Player:
    """One version of an entrant, as stored."""

    player: str
    entrant: str
    version: int
    kind: str
    command: str | None
    fingerprint: str
    token: str | None
    public_key: str | None
    """Z85 public key of a remote version (None: none given, for an ``--insecure`` ladder)."""
    added_at: float
    ended_at: float | None
    ended: str | None
    """None while active, else ``superseded`` or ``retired``."""

    @property
    def active(self) -> bool:
        """Whether the matchmaker may choose it."""
        return self.ended is None

    @property
    def status(self) -> str:
        """``active``, ``superseded`` or ``retired``."""
        return self.ended or "active"

    def lineage(self) -> dict[str, object]:
        """What may be published about it: no token, no command line (paths are private)."""
        return {"player": self.player, "entrant": self.entrant, "version": self.version,
                "kind": self.kind, "fingerprint": self.fingerprint[:16],
                "added_at": self.added_at, "ended_at": self.ended_at,
                "status": self.status}  # fmt: skip


@dataclass(frozen=True, slots=True)
class RatingRow:
    """A player's rating after one pair."""

    deal_id: str
    player: str
    opponent: str
    score: float
    mu: float
    sigma: float
    at: float


def resolve_command(command: str, cwd: Path) -> str:
    """``command`` with each word that names an existing file by a relative path (a word
    with a ``/``) made absolute against ``cwd``: the ladder runs it from any directory."""
    words = shlex.split(command)
    for i, word in enumerate(words):
        if "/" in word and not word.startswith("/") and (cwd / word).is_file():
            words[i] = str((cwd / word).resolve())
    return shlex.join(words)


def fingerprint_command(command: str, cwd: Path) -> str:
    """SHA-256 of ``command`` and of each file it names by a path (a word with a ``/``,
    relative to ``cwd``): a changed program is a new version."""
    digest = hashlib.sha256(command.encode())
    for word in shlex.split(command):
        path = cwd / word
        if "/" in word and path.is_file():
            digest.update(b"\0" + word.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def check_entrant(name: str) -> str:
    """``name`` if it is a valid entrant name, else :class:`LadderError`."""
    if not _NAME.fullmatch(name):
        raise LadderError(
            f"entrant name {name!r}: 1-48 letters, digits, '-' or '_', starting with a letter"
            " or digit (the version is added as .vN)"
        )
    return name


class LadderBook:
    """The ladder tables of one SQLite store (a connection of its own). Use :meth:`open`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path) -> LadderBook:
        """Open the book of the store at ``path`` (creating the store and the tables if new);
        :class:`StoreError` if the file is not a usable store."""
        SqliteStore.open(path).close()  # creates it, or checks it is a store of ours
        try:
            conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";\n"):
                conn.execute(statement)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(path, f"cannot open the ladder's tables: {exc}") from exc
        return cls(path, conn)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

    def __enter__(self) -> LadderBook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self, what: str, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(self.path, f"{what}: the ladder book is closed")
            try:
                with transaction(conn, "BEGIN IMMEDIATE" if write else "BEGIN"):
                    yield conn
            except sqlite3.Error as exc:
                raise StoreError(self.path, f"{what} failed: {exc}") from exc

    # ----------------------------------------------------------------- entrants

    def add(
        self,
        entrant: str,
        *,
        now: float,
        command: str | None = None,
        fingerprint: str | None = None,
        public_key: str | None = None,
        token: str | None = None,
    ) -> tuple[Player, bool]:
        """Add an entrant, or a new version of it: a local ``command`` (with its
        ``fingerprint``), or a remote bot (``public_key`` and/or ``token``, drawn if None).
        Returns the active version and whether it is new (False: the same version is active)."""
        check_entrant(entrant)
        if (command is None) == (public_key is None and token is None):
            raise LadderError("an entrant is a local command or a remote bot (key/token)")
        kind = "local" if command is not None else "remote"
        if kind == "local":
            if not fingerprint:
                raise LadderError("a local entrant needs its command's fingerprint")
            print_ = fingerprint
        else:
            if token is not None and (len(token) < 8 or not token.isprintable()):
                raise LadderError("a remote entrant's token: 8 or more printable characters")
            token = token or secrets.token_urlsafe(18)
            basis = public_key if public_key is not None else token
            print_ = hashlib.sha256(basis.encode()).hexdigest()
        with self._tx("add") as conn:
            rows = conn.execute(
                f"SELECT {_PLAYER_COLUMNS} FROM ladder_players WHERE entrant = ?"
                " ORDER BY version DESC LIMIT 1",
                (entrant,),
            ).fetchall()
            last = Player(*rows[0]) if rows else None
            if last is not None and last.active and last.kind == kind:
                same_key = public_key is not None and public_key == last.public_key
                keyless = public_key is None and last.public_key is None and token == last.token
                remote_same = same_key or keyless
                if last.fingerprint == print_ if kind == "local" else remote_same:
                    return last, False
            if (
                token is not None
                and conn.execute(
                    "SELECT 1 FROM ladder_players WHERE token = ?", (token,)
                ).fetchone()
            ):
                raise LadderError("that token is taken: give another, or none to draw one")
            version = 1 if last is None else last.version + 1
            player = Player(f"{entrant}.v{version}", entrant, version, kind, command, print_,
                            token, public_key, now, None, None)  # fmt: skip
            if last is not None and last.active:
                conn.execute(
                    "UPDATE ladder_players SET ended = 'superseded', ended_at = ? WHERE player = ?",
                    (now, last.player),
                )
            conn.execute(
                f"INSERT INTO ladder_players ({_PLAYER_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (player.player, entrant, version, kind, command, print_, token, public_key,
                 now, None, None),
            )  # fmt: skip
            detail = f"{kind} {print_[:16]}" + (
                "" if last is None else f" (after {last.player}, {last.status})"
            )
            self._log(conn, now, "add", entrant, player.player, detail)
        return player, True

    def retire(self, entrant: str, *, now: float) -> Player:
        """End the entrant's active version (``retired``); :class:`LadderError` if none."""
        check_entrant(entrant)
        with self._tx("retire") as conn:
            row = conn.execute(
                f"SELECT {_PLAYER_COLUMNS} FROM ladder_players WHERE entrant = ? AND ended IS NULL",
                (entrant,),
            ).fetchone()
            if row is None:
                known = conn.execute("SELECT 1 FROM ladder_players WHERE entrant = ?", (entrant,))
                why = "is already retired" if known.fetchone() else "is not on the ladder"
                raise LadderError(f"entrant {entrant!r} {why}")
            conn.execute(
                "UPDATE ladder_players SET ended = 'retired', ended_at = ? WHERE player = ?",
                (now, row[0]),
            )
            self._log(conn, now, "retire", entrant, row[0], "retired")
            return replace(Player(*row), ended_at=now, ended="retired")

    @staticmethod
    def _log(conn: sqlite3.Connection, now: float, action: str, entrant: str,
             player: str | None, detail: str) -> None:  # fmt: skip
        conn.execute(
            "INSERT INTO ladder_log (at, action, entrant, player, detail) VALUES (?,?,?,?,?)",
            (now, action, entrant, player, detail),
        )

    def revision(self) -> int:
        """A number that changes whenever an entrant is added, updated or retired."""
        with self._tx("revision", write=False) as conn:
            row = conn.execute("SELECT coalesce(max(seq), 0) FROM ladder_log").fetchone()
        return int(row[0])

    def players(self) -> list[Player]:
        """Every player (every version of every entrant), in the order they were added."""
        with self._tx("players", write=False) as conn:
            rows = conn.execute(
                f"SELECT {_PLAYER_COLUMNS} FROM ladder_players ORDER BY added_at, player"
            ).fetchall()
        return [Player(*row) for row in rows]

    def log(self) -> list[tuple[float, str, str, str | None, str]]:
        """The audit log: (time, action, entrant, player, detail), oldest first."""
        with self._tx("log", write=False) as conn:
            rows = conn.execute(
                "SELECT at, action, entrant, player, detail FROM ladder_log ORDER BY seq"
            ).fetchall()
        return [(row[0], row[1], row[2], row[3], row[4]) for row in rows]

    # ----------------------------------------------------------------- ratings

    def record_pair(self, rows: Sequence[RatingRow]) -> bool:
        """Store the ratings after one pair (a row per player) and make them current, in one
        transaction; False, changing nothing, if that pair was rated already."""
        with self._tx("record_pair") as conn:
            deals = {row.deal_id for row in rows}
            for deal in deals:
                if conn.execute(
                    "SELECT 1 FROM ladder_ratings WHERE deal_id = ?", (deal,)
                ).fetchone():
                    return False
            for row in rows:
                conn.execute(
                    "INSERT INTO ladder_ratings (deal_id, player, opponent, score, mu,"
                    " sigma, at) VALUES (?,?,?,?,?,?,?)",
                    (row.deal_id, row.player, row.opponent, row.score, row.mu, row.sigma,
                     row.at),
                )  # fmt: skip
                conn.execute(
                    "INSERT INTO ladder_current (player, mu, sigma, pairs, updated_at)"
                    " VALUES (?, ?, ?, 1, ?) ON CONFLICT (player) DO UPDATE SET"
                    " mu = excluded.mu, sigma = excluded.sigma, pairs = pairs + 1,"
                    " updated_at = excluded.updated_at",
                    (row.player, row.mu, row.sigma, row.at),
                )
        return True

    def current(self) -> dict[str, tuple[float, float, int]]:
        """Every rated player's ``(mu, sigma, pairs)``."""
        with self._tx("current", write=False) as conn:
            rows = conn.execute("SELECT player, mu, sigma, pairs FROM ladder_current").fetchall()
        return {row[0]: (float(row[1]), float(row[2]), int(row[3])) for row in rows}

    def last_played(self) -> dict[str, float]:
        """When each rated player's last pair was rated."""
        with self._tx("last_played", write=False) as conn:
            rows = conn.execute("SELECT player, updated_at FROM ladder_current").fetchall()
        return {str(row[0]): float(row[1]) for row in rows}

    def rated_deals(self) -> set[str]:
        """The deals (pairs) whose ratings are stored."""
        with self._tx("rated_deals", write=False) as conn:
            rows = conn.execute("SELECT DISTINCT deal_id FROM ladder_ratings").fetchall()
        return {str(row[0]) for row in rows}

    def history(self, player: str | None = None) -> list[RatingRow]:
        """The rating history (of one player, or of all), oldest first."""
        where, args = ("WHERE player = ?", (player,)) if player is not None else ("", ())
        with self._tx("history", write=False) as conn:
            rows = conn.execute(
                "SELECT deal_id, player, opponent, score, mu, sigma, at FROM ladder_ratings "
                + where
                + " ORDER BY seq",
                args,
            ).fetchall()
        return [RatingRow(*row) for row in rows]
