"""The ladder's book, in the tournament store (:mod:`.tables`): its players (every version of
every entrant, with its lineage), the audit log of additions and retirements, and the rating
history. ``gin-referee ladder add|retire|list`` write and read it while ``ladder run`` plays.

An *entrant* is a competitor (a name); each version of it is a *player* of its own,
``NAME.vN``, rated from scratch. A version is either a local command run in its files'
snapshot (:mod:`referee.tournament.snapshots`; its fingerprint is the SHA-256 of the command
and of the snapshot's digest; a version added before snapshots: of the command and of every
file it names by path) or a remote bot (a token to present, and, under CURVE, the public key
it must connect with; its fingerprint is the key's). Adding an entrant whose active version
has the same kind and fingerprint changes nothing; anything else makes a new version and ends
the previous one (``superseded``).
Retiring ends the active version (``retired``). Ended players keep their ratings and history.

Rows are never deleted; the log says who was added, updated and retired, and when.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from referee.tournament.ladder.tables import Execute, Tables
from referee.tournament.store import StoreError, is_url

__all__ = [
    "LadderBook",
    "LadderError",
    "Player",
    "RatingRow",
    "fingerprint_command",
    "fingerprint_version",
]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,47}")
_PLAYER_COLUMNS = ("player, entrant, version, kind, command, fingerprint, token, public_key,"
                   " added_at, ended_at, ended, files")  # fmt: skip


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
    files: str | None = None
    """A local version's files: its snapshot's digest (None: a version added before
    snapshots, which runs its command as it was added, or a remote one)."""

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
                "kind": self.kind, "fingerprint": self.fingerprint[:16], "files": self.files,
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


def fingerprint_command(command: str, cwd: Path) -> str:
    """SHA-256 of ``command`` and of each file it names by a path (a word with a ``/``,
    relative to ``cwd``): a changed program is a new version."""
    digest = hashlib.sha256(command.encode())
    for word in shlex.split(command):
        path = cwd / word
        if "/" in word and path.is_file():
            digest.update(b"\0" + word.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def fingerprint_version(command: str, files: str) -> str:
    """A local version's fingerprint: SHA-256 of its command and of its files' digest."""
    return hashlib.sha256(f"gin-referee version v1\0{command}\0{files}".encode()).hexdigest()


def check_entrant(name: str) -> str:
    """``name`` if it is a valid entrant name, else :class:`LadderError`."""
    if not _NAME.fullmatch(name):
        raise LadderError(
            f"entrant name {name!r}: 1-48 letters, digits, '-' or '_', starting with a letter"
            " or digit (the version is added as .vN)"
        )
    return name


class LadderBook:
    """The ladder tables of one store (a connection of its own): a SQLite file's one ladder,
    or the ladder ``ladder`` of a PostgreSQL database. Use :meth:`open`."""

    def __init__(self, tables: Tables, ladder: str = "") -> None:
        self.tables = tables
        self.ladder = ladder
        """The ladder's name in a PostgreSQL database (``""`` in a SQLite file)."""

    @classmethod
    def open(cls, location: str | Path, *, ladder: str = "") -> LadderBook:
        """Open the book of the store at ``location`` (a SQLite file, created with its tables
        if new, or a PostgreSQL URL with the ladder's name); :class:`StoreError` if the store
        is not usable."""
        if is_url(location) and not ladder:
            raise StoreError(str(location), "a ladder in a PostgreSQL store needs its name")
        return cls(Tables.open(location), "" if not is_url(location) else ladder)

    @property
    def location(self) -> str:
        """Where the store is (a URL without its password)."""
        return self.tables.location

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.tables.close()

    def __enter__(self) -> LadderBook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        files: str | None = None,
    ) -> tuple[Player, bool]:
        """Add an entrant, or a new version of it: a local ``command`` (with its
        ``fingerprint`` and its ``files``' digest, :func:`fingerprint_version`), or a remote bot
        (``public_key`` and/or ``token``, drawn if None). Returns the active version and
        whether it is new (False: the same version is active)."""
        check_entrant(entrant)
        if (command is None) == (public_key is None and token is None):
            raise LadderError("an entrant is a local command or a remote bot (key/token)")
        kind = "local" if command is not None else "remote"
        if kind == "local":
            if files is not None and command is not None:
                fingerprint = fingerprint or fingerprint_version(command, files)
            if not fingerprint:
                raise LadderError("a local entrant needs its command's fingerprint")
            print_ = fingerprint
        else:
            if files is not None:
                raise LadderError("a remote entrant's files are its own: it has none here")
            if token is not None and (len(token) < 8 or not token.isprintable()):
                raise LadderError("a remote entrant's token: 8 or more printable characters")
            token = token or secrets.token_urlsafe(18)
            basis = public_key if public_key is not None else token
            print_ = hashlib.sha256(basis.encode()).hexdigest()
        lad = self.ladder
        with self.tables.tx("add") as run:
            last = self._latest(run, entrant)
            if last is not None and last.active and last.kind == kind:
                same_key = public_key is not None and public_key == last.public_key
                keyless = public_key is None and last.public_key is None and token == last.token
                remote_same = same_key or keyless
                if last.fingerprint == print_ if kind == "local" else remote_same:
                    return last, False
            taken = "SELECT 1 FROM ladder_players WHERE token = ?"
            if token is not None and run(taken, (token,)).fetchone():
                raise LadderError("that token is taken: give another, or none to draw one")
            version = 1 if last is None else last.version + 1
            player = Player(f"{entrant}.v{version}", entrant, version, kind, command, print_,
                            token, public_key, now, None, None, files)  # fmt: skip
            if last is not None and last.active:
                run(
                    "UPDATE ladder_players SET ended = 'superseded', ended_at = ?"
                    " WHERE ladder = ? AND player = ?",
                    (now, lad, last.player),
                )
            run(
                f"INSERT INTO ladder_players (ladder, {_PLAYER_COLUMNS})"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (lad, player.player, entrant, version, kind, command, print_, token, public_key,
                 now, None, None, files),
            )  # fmt: skip
            shown = "" if files is None else f", files {files[:16]}"
            detail = f"{kind} {print_[:16]}{shown}" + (
                "" if last is None else f" (after {last.player}, {last.status})"
            )
            self.log_entry(run, now, "add", entrant, player.player, detail)
        return player, True

    def retire(self, entrant: str, *, now: float) -> Player:
        """End the entrant's active version (``retired``); :class:`LadderError` if none."""
        check_entrant(entrant)
        lad = self.ladder
        with self.tables.tx("retire") as run:
            active = self._latest(run, entrant, active=True)
            if active is None:
                known = self._latest(run, entrant) is not None
                why = "is already retired" if known else "is not on the ladder"
                raise LadderError(f"entrant {entrant!r} {why}")
            run(
                "UPDATE ladder_players SET ended = 'retired', ended_at = ?"
                " WHERE ladder = ? AND player = ?",
                (now, lad, active.player),
            )
            self.log_entry(run, now, "retire", entrant, active.player, "retired")
            return replace(active, ended_at=now, ended="retired")

    def _latest(self, run: Execute, entrant: str, *, active: bool = False) -> Player | None:
        """The entrant's latest version (its active one, with ``active``), or None."""
        only = " AND ended IS NULL" if active else ""
        row = run(
            f"SELECT {_PLAYER_COLUMNS} FROM ladder_players WHERE ladder = ? AND entrant = ?"
            f"{only} ORDER BY version DESC LIMIT 1",
            (self.ladder, entrant),
        ).fetchone()
        return None if row is None else Player(*row)

    def log_entry(self, run: Execute, now: float, action: str, entrant: str, player: str | None,
                  detail: str) -> None:  # fmt: skip
        """Append an entry to the audit log, in the transaction ``run``."""
        run(
            "INSERT INTO ladder_log (ladder, at, action, entrant, player, detail)"
            " VALUES (?,?,?,?,?,?)",
            (self.ladder, now, action, entrant, player, detail),
        )

    def revision(self) -> int:
        """A number that changes whenever an entrant is added, updated or retired."""
        with self.tables.tx("revision", write=False) as run:
            row = run(
                "SELECT coalesce(max(seq), 0) FROM ladder_log WHERE ladder = ?", (self.ladder,)
            ).fetchone()
        return int(row[0])

    def players(self) -> list[Player]:
        """Every player (every version of every entrant), in the order they were added."""
        with self.tables.tx("players", write=False) as run:
            rows = run(
                f"SELECT {_PLAYER_COLUMNS} FROM ladder_players WHERE ladder = ?"
                " ORDER BY added_at, player",
                (self.ladder,),
            ).fetchall()
        return [Player(*row) for row in rows]

    def log(self) -> list[tuple[float, str, str, str | None, str]]:
        """The audit log: (time, action, entrant, player, detail), oldest first."""
        with self.tables.tx("log", write=False) as run:
            rows = run(
                "SELECT at, action, entrant, player, detail FROM ladder_log WHERE ladder = ?"
                " ORDER BY seq",
                (self.ladder,),
            ).fetchall()
        return [(row[0], row[1], row[2], row[3], row[4]) for row in rows]

    # ----------------------------------------------------------------- ratings

    def record_pair(self, rows: Sequence[RatingRow], *, deal_key: str | None = None) -> bool:
        """Store the ratings after one pair (a row per player) and make them current, and close
        the pair (``ladder_pairs``, with its ``deal_key`` revealed), in one transaction; False,
        changing nothing, if that pair was rated already."""
        lad = self.ladder
        with self.tables.tx("record_pair") as run:
            for deal in {row.deal_id for row in rows}:
                rated = "SELECT 1 FROM ladder_ratings WHERE ladder = ? AND deal_id = ?"
                if run(rated, (lad, deal)).fetchone():
                    return False
            for row in rows:
                run(
                    "INSERT INTO ladder_ratings (ladder, deal_id, player, opponent, score, mu,"
                    " sigma, at) VALUES (?,?,?,?,?,?,?,?)",
                    (lad, row.deal_id, row.player, row.opponent, row.score, row.mu, row.sigma,
                     row.at),
                )  # fmt: skip
                run(
                    "INSERT INTO ladder_current (ladder, player, mu, sigma, pairs, updated_at)"
                    " VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (ladder, player) DO UPDATE SET"
                    " mu = excluded.mu, sigma = excluded.sigma,"
                    " pairs = ladder_current.pairs + 1, updated_at = excluded.updated_at",
                    (lad, row.player, row.mu, row.sigma, row.at),
                )
            run(
                "UPDATE ladder_pairs SET closed = 'rated', closed_at = ?, deal_key = ?"
                " WHERE ladder = ? AND deal_id = ? AND closed IS NULL",
                (rows[0].at, deal_key, lad, rows[0].deal_id),
            )
        return True

    def current(self) -> dict[str, tuple[float, float, int]]:
        """Every rated player's ``(mu, sigma, pairs)``."""
        with self.tables.tx("current", write=False) as run:
            rows = run(
                "SELECT player, mu, sigma, pairs FROM ladder_current WHERE ladder = ?",
                (self.ladder,),
            ).fetchall()
        return {row[0]: (float(row[1]), float(row[2]), int(row[3])) for row in rows}

    def last_played(self) -> dict[str, float]:
        """When each rated player's last pair was rated."""
        with self.tables.tx("last_played", write=False) as run:
            rows = run(
                "SELECT player, updated_at FROM ladder_current WHERE ladder = ?", (self.ladder,)
            ).fetchall()
        return {str(row[0]): float(row[1]) for row in rows}

    def rated_deals(self) -> set[str]:
        """The deals (pairs) whose ratings are stored."""
        with self.tables.tx("rated_deals", write=False) as run:
            rows = run(
                "SELECT DISTINCT deal_id FROM ladder_ratings WHERE ladder = ?", (self.ladder,)
            ).fetchall()
        return {str(row[0]) for row in rows}

    def history(self, player: str | None = None) -> list[RatingRow]:
        """The rating history (of one player, or of all), oldest first."""
        where, args = ("AND player = ?", (self.ladder, player)) if player else ("", (self.ladder,))
        with self.tables.tx("history", write=False) as run:
            rows = run(
                "SELECT deal_id, player, opponent, score, mu, sigma, at FROM ladder_ratings"
                f" WHERE ladder = ? {where} ORDER BY seq",
                args,
            ).fetchall()
        return [RatingRow(*row) for row in rows]
