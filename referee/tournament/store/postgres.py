"""The PostgreSQL tournament store: one database shared by the referee machines of a tournament.

Every table is keyed by the tournament's name, so one database holds many tournaments. The
lifecycle, the fencing and the runner registry are :mod:`.base`'s; claims take the lowest open
game with ``FOR UPDATE SKIP LOCKED`` (concurrent claimers never queue on one row and never get
the same game), and :meth:`PgStore.record` updates the row only under the claim's lease, at
``READ COMMITTED``: a concurrent re-claim makes the update re-check its ``WHERE`` against the
committed row and change nothing. A game's files (its record, its bots' stderr tails) are kept
compressed in the same transaction as its result, so every machine can read them.

Times are the callers' wall clocks (``now``), like SQLite's; exactly-once recording does not
depend on them (the lease token fences), only how soon an abandoned game is taken again does,
so :meth:`PgStore.clock_skew` lets a worker refuse to join with a clock far from the server's.
"""

from __future__ import annotations

import secrets
import threading
import zlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

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
from referee.tournament.store.pg_open import (
    PG_SCHEMA_VERSION,
    connect,
    create_or_check,
    only_tournament,
    redact,
)

__all__ = ["PG_SCHEMA_VERSION", "PgStore", "redact"]

_GAME_COLUMNS = "game_id, pairing, seat0, seat1, deal_id, pair_index"
_RELEASE = (
    "UPDATE games SET status = 'pending', owner = NULL, lease = NULL, lease_expires = NULL"
    " WHERE tournament = %s AND status = 'claimed'"
)
_RUNNER = "SELECT owner, host, pid, role, expires FROM runners"


def _spec(row: Sequence[Any]) -> GameSpec:
    return GameSpec(row[0], row[1], row[2], row[3], row[4], row[5])


class PgStore(StoreBase):
    """One tournament in a PostgreSQL database. Use :meth:`open`. Thread-safe (a lock)."""

    def __init__(self, location: str, conn: psycopg.Connection[Any], tournament: str) -> None:
        self._location = location
        self._conn: psycopg.Connection[Any] | None = conn
        self._lock = threading.Lock()
        self.tournament = tournament
        """The tournament's name (its key in every table)."""

    @classmethod
    def open(cls, url: str, *, tournament: str | None = None, timeout: float = 10.0) -> PgStore:
        """Connect, create the tables on first use, check the schema version. Without
        ``tournament``, the database must hold exactly one unfinished tournament."""
        location, conn = connect(url, timeout)
        try:
            create_or_check(location, conn)
            name = tournament if tournament is not None else only_tournament(location, conn)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(location, f"cannot be opened: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return cls(location, conn, name)

    @property
    def location(self) -> str:
        """The server URL without its password, and the tournament (``URL#name``)."""
        return f"{self._location}#{self.tournament}"

    @contextmanager
    def _tx(self, what: str) -> Iterator[psycopg.Connection[Any]]:
        """One transaction; psycopg errors become StoreError (rolled back)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(self.location, f"{what}: the store is closed")
            try:
                with conn.transaction():
                    yield conn
            except psycopg.Error as exc:
                raise StoreError(self.location, f"{what} failed: {exc}") from exc

    def clock_skew(self, now: float) -> float:
        """The server's clock minus ``now`` (seconds)."""
        with self._tx("clock_skew") as conn:
            row = conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()
        assert row is not None
        return float(row[0]) - now

    def init_tournament(
        self,
        *,
        config: dict[str, Any],
        config_hash: str,
        games: Sequence[GameSpec],
        now: float,
        growing: bool = False,
    ) -> bool:
        """Store the configuration and every game as pending; True on the first run (a later
        run compares the games, unless ``growing``)."""
        check_times(now)
        rows = check_schedule(games)
        t = self.tournament
        with self._tx("init_tournament") as conn:
            inserted = conn.execute(
                "INSERT INTO tournament VALUES (%s, %s, %s, %s) ON CONFLICT (tournament)"
                " DO NOTHING RETURNING tournament",
                (t, Jsonb(config, dumps=dumps), config_hash, now),
            ).fetchone()
            if inserted is not None:
                with conn.cursor() as cursor:
                    cursor.executemany(
                        f"INSERT INTO games (tournament, {_GAME_COLUMNS})"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        [(t, *row) for row in rows],
                    )
                return True
            found = conn.execute(
                "SELECT config_hash FROM tournament WHERE tournament = %s", (t,)
            ).fetchone()
            assert found is not None
            if found[0] != config_hash:
                raise StoreError(self.location, other_config(found[0], config_hash))
            if growing:
                return False
            stored = conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE tournament = %s ORDER BY game_id", (t,)
            ).fetchall()
            if [tuple(row) for row in stored] != rows:
                raise StoreError(
                    self.location, "has the same configuration hash but a different game schedule"
                )
            return False

    def add_games(self, games: Sequence[GameSpec]) -> None:
        """Append pending games whose ids continue the schedule; StoreError if they do not
        (the tournament's row is locked meanwhile: two appenders take turns)."""
        t = self.tournament
        with self._tx("add_games") as conn:
            conn.execute("SELECT 1 FROM tournament WHERE tournament = %s FOR UPDATE", (t,))
            first = conn.execute(
                "SELECT coalesce(max(game_id) + 1, 0) FROM games WHERE tournament = %s", (t,)
            ).fetchone()
            try:
                rows = check_added(games, int(first[0] if first else 0))
            except ValueError as err:
                raise StoreError(self.location, str(err)) from None
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO games (tournament, {_GAME_COLUMNS})"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [(t, *row) for row in rows],
                )

    def next_game_id(self) -> int:
        """One more than the highest game id stored, 0 if none."""
        with self._tx("next_game_id") as conn:
            row = conn.execute(
                "SELECT coalesce(max(game_id) + 1, 0) FROM games WHERE tournament = %s",
                (self.tournament,),
            ).fetchone()
        return int(row[0]) if row else 0

    def config(self) -> tuple[dict[str, Any], str] | None:
        """The stored configuration and its hash, or None before :meth:`init_tournament`."""
        with self._tx("config") as conn:
            row = conn.execute(
                "SELECT config, config_hash FROM tournament WHERE tournament = %s",
                (self.tournament,),
            ).fetchone()
        return None if row is None else (dict(row[0]), str(row[1]))

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
        """Take the lowest open game (one of pairing ``prefer`` first, with ``only`` no other
        pairing's, none of ``skip``),
        skipping rows another transaction holds; a new lease until ``now + lease_seconds``."""
        check_times(now, lease_seconds)
        lease, expires = secrets.token_hex(16), now + lease_seconds
        t = self.tournament
        skipped = "".join(f" AND game_id <> {int(g)}" for g in sorted(skip))
        pick = (
            "SELECT game_id FROM games WHERE tournament = %s AND status <> 'done'"
            " AND (status = 'pending' OR lease_expires <= %s)" + skipped + "{}"
            " ORDER BY game_id LIMIT 1 FOR UPDATE SKIP LOCKED"
        )
        update = (  # MATERIALIZED: the pick runs once (inlined, it may run per joined row)
            "WITH next AS MATERIALIZED ({}) UPDATE games AS g SET status = 'claimed',"
            " owner = %s, lease = %s, lease_expires = %s, attempts = g.attempts + 1 FROM next"
            " WHERE g.tournament = %s AND g.game_id = next.game_id"
            " RETURNING g.game_id, g.pairing, g.seat0, g.seat1, g.deal_id, g.pair_index,"
            " g.attempts"
        )
        with self._tx("claim") as conn:
            row = None
            if prefer is not None:
                sql = update.format(pick.format(" AND pairing = %s"))
                row = conn.execute(sql, (t, now, prefer, owner, lease, expires, t)).fetchone()
            if row is None and not only:
                sql = update.format(pick.format(""))
                row = conn.execute(sql, (t, now, owner, lease, expires, t)).fetchone()
        if row is None:
            return None
        return Claim(game=_spec(row), lease=lease, expires=expires, attempt=int(row[6]))

    def renew(self, claim: Claim, *, lease_seconds: float, now: float) -> Claim | None:
        """Extend the lease if still held; None if lost."""
        check_times(now, lease_seconds)
        expires = now + lease_seconds
        with self._tx("renew") as conn:
            cursor = conn.execute(
                "UPDATE games SET lease_expires = %s WHERE tournament = %s AND game_id = %s"
                " AND status = 'claimed' AND lease = %s",
                (expires, self.tournament, claim.game.game_id, claim.lease),
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
        """Record result, faults, timings and ``files`` (zlib-compressed) in one transaction
        if the game is still claimed under ``claim.lease``; else False, nothing changed."""
        check_times(now)
        t, g = self.tournament, claim.game.game_id
        rows = [(t, g, *row) for row in fault_rows(faults)]
        stored = [(t, g, name, zlib.compress(data, 6)) for name, data in (files or {}).items()]
        timings_value = None if timings is None else Jsonb(timings, dumps=dumps)
        with self._tx("record") as conn:
            cursor = conn.execute(
                "UPDATE games SET status = 'done', result = %s, timings = %s, recorded_at = %s"
                " WHERE tournament = %s AND game_id = %s AND status = 'claimed' AND lease = %s",
                (Jsonb(result, dumps=dumps), timings_value, now, t, g, claim.lease),
            )
            if cursor.rowcount != 1:
                return False
            with conn.cursor() as many:
                many.executemany(
                    "INSERT INTO faults (tournament, game_id, seat, kind, detail, hand,"
                    " request_id, extra) VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb)",
                    rows,
                )
                many.executemany("INSERT INTO files VALUES (%s, %s, %s, %s)", stored)
            return True

    def release(self, claim: Claim) -> None:
        """Give the game back (pending) if ``claim`` still holds it."""
        with self._tx("release") as conn:
            conn.execute(
                _RELEASE + " AND game_id = %s AND lease = %s",
                (self.tournament, claim.game.game_id, claim.lease),
            )

    def release_all(self, *, owner: str | None = None) -> int:
        """Put the claimed games of ``owner`` (or of anyone) back to pending; the count."""
        with self._tx("release_all") as conn:
            if owner is None:
                cursor = conn.execute(_RELEASE, (self.tournament,))
            else:
                cursor = conn.execute(_RELEASE + " AND owner = %s", (self.tournament, owner))
            return cursor.rowcount

    def set_meta(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless one is stored; return the stored one."""
        with self._tx("set_meta") as conn:
            conn.execute(
                "INSERT INTO meta VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (self.tournament, key, value),
            )
            row = conn.execute(
                "SELECT value FROM meta WHERE tournament = %s AND key = %s", (self.tournament, key)
            ).fetchone()
        assert row is not None
        return str(row[0])

    def get_meta(self, key: str) -> str | None:
        """A stored text value, None if absent."""
        with self._tx("get_meta") as conn:
            row = conn.execute(
                "SELECT value FROM meta WHERE tournament = %s AND key = %s", (self.tournament, key)
            ).fetchone()
        return None if row is None else str(row[0])

    def join(
        self, runner: Runner, *, now: float, exclusive: bool, dead: Sequence[str] = ()
    ) -> list[Runner]:
        """Register ``runner``; forget the ``dead`` and release their claims; with
        ``exclusive``, :class:`StoreBusy` if another runner is alive. The others alive."""
        check_times(now)
        t = self.tournament
        with self._tx("join") as conn:
            conn.execute("LOCK TABLE runners IN SHARE ROW EXCLUSIVE MODE")  # joins one by one
            conn.execute("DELETE FROM runners WHERE tournament = %s AND expires <= %s", (t, now))
            for owner in dead:
                conn.execute("DELETE FROM runners WHERE tournament = %s AND owner = %s", (t, owner))
            conn.execute(  # claims of no live runner: their runner is dead
                _RELEASE + " AND owner <> %s AND owner NOT IN"
                " (SELECT owner FROM runners WHERE tournament = %s)",
                (t, runner.owner, t),
            )
            rows = conn.execute(
                _RUNNER + " WHERE tournament = %s AND owner <> %s ORDER BY owner",
                (t, runner.owner),
            ).fetchall()
            others = [Runner(*row) for row in rows]
            rivals = [other for other in others if other.role == "tournament"]
            if exclusive and rivals:
                raise StoreBusy(self.location, busy_reason(rivals))
            conn.execute(
                "INSERT INTO runners VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tournament,"
                " owner) DO UPDATE SET expires = excluded.expires",
                (t, runner.owner, runner.host, runner.pid, runner.role, runner.expires),
            )
        return others

    def runners(self, *, now: float) -> list[Runner]:
        """The registered runners alive at ``now``."""
        with self._tx("runners") as conn:
            rows = conn.execute(
                _RUNNER + " WHERE tournament = %s AND expires > %s ORDER BY owner",
                (self.tournament, now),
            ).fetchall()
        return [Runner(*row) for row in rows]

    def heartbeat(self, owner: str, *, expires: float) -> bool:
        """Keep ``owner`` alive until ``expires``; False if it was forgotten."""
        check_times(expires)
        with self._tx("heartbeat") as conn:
            cursor = conn.execute(
                "UPDATE runners SET expires = %s WHERE tournament = %s AND owner = %s",
                (expires, self.tournament, owner),
            )
            return cursor.rowcount == 1

    def leave(self, owner: str) -> None:
        """Unregister ``owner``."""
        with self._tx("leave") as conn:
            conn.execute(
                "DELETE FROM runners WHERE tournament = %s AND owner = %s",
                (self.tournament, owner),
            )

    def counts(self) -> dict[str, int]:
        """Number of games by status."""
        with self._tx("counts") as conn:
            found = dict(
                conn.execute(
                    "SELECT status, count(*) FROM games WHERE tournament = %s GROUP BY status",
                    (self.tournament,),
                ).fetchall()
            )
        return {status: int(found.get(status, 0)) for status in STATUSES}

    def games(self) -> list[GameRow]:
        """Every game, by game_id."""
        with self._tx("games") as conn:
            rows = conn.execute(
                f"SELECT {_GAME_COLUMNS}, status, result, attempts, recorded_at, timings"
                " FROM games WHERE tournament = %s ORDER BY game_id",
                (self.tournament,),
            ).fetchall()
        return [GameRow(_spec(row), row[6], row[7], row[8], row[9], row[10]) for row in rows]

    def faults(self) -> list[dict[str, Any]]:
        """Every recorded fault as a dict with its ``game_id``, in insertion order."""
        with self._tx("faults") as conn:
            rows = conn.execute(
                "SELECT game_id, seat, kind, detail, hand, request_id, extra FROM faults"
                " WHERE tournament = %s ORDER BY id",
                (self.tournament,),
            ).fetchall()
        return [fault_dict(row) for row in rows]

    def file(self, game_id: int, name: str) -> bytes | None:
        """A file recorded with a game (decompressed), None if absent."""
        with self._tx("file") as conn:
            row = conn.execute(
                "SELECT data FROM files WHERE tournament = %s AND game_id = %s AND name = %s",
                (self.tournament, game_id, name),
            ).fetchone()
        return None if row is None else zlib.decompress(row[0])
