"""What every tournament store offers: the game lifecycle, its records, the runner registry.

:class:`Store` is the protocol the runner, the reports and the commands use; two classes
implement it: :class:`~referee.tournament.store.sqlite.SqliteStore` (one file, the default,
several processes of one machine) and :class:`~referee.tournament.store.postgres.PgStore` (a
PostgreSQL database shared by several machines). ``docs/store.md`` describes both.

A game goes through one lifecycle:

1. :meth:`Store.claim` takes the lowest game that is pending, or claimed under an expired lease,
   and hands out a fresh random lease token (the *fencing token*) with an expiry;
2. the caller plays the game, calling :meth:`Store.renew` while it runs;
3. :meth:`Store.record` stores the result, its faults, timings and files in ONE transaction,
   and only if the game is still claimed under that lease: a lost lease or a second call
   changes nothing, so a result is recorded exactly once.

Runners (referee processes) register with :meth:`Store.join` and keep a heartbeat; a second
independent ``tournament`` command is refused while another one is alive, and the claims of a
runner known to be dead are released at once instead of waiting for their leases to expire.
Times are injected (``now``, wall-clock seconds), never read by a store.
"""

from __future__ import annotations

import json
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

__all__ = [
    "STATUSES",
    "Claim",
    "GameRow",
    "GameSpec",
    "Runner",
    "Store",
    "StoreBase",
    "StoreBusy",
    "StoreError",
    "busy_reason",
    "check_added",
    "check_schedule",
    "check_times",
    "dumps",
    "fault_dict",
    "fault_rows",
    "other_config",
]

STATUSES = ("pending", "claimed", "done")
FAULT_COLUMNS = ("seat", "kind", "detail", "hand", "request_id")


class StoreError(Exception):
    """The store cannot be used: not a database, not ours, another tournament, I/O error."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        """The database file, or the server URL (without its password)."""
        self.reason = reason
        """What is wrong, in words."""

    def __str__(self) -> str:
        return f"tournament store {self.path}: {self.reason}"


class StoreBusy(StoreError):
    """Another live runner holds the tournament that this one wanted for itself alone."""


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
    fencing token that record/renew/release need, ``expires`` the time until which nobody else
    may take the game, ``attempt`` 1 for the first claim of the game, then 2, 3..."""

    game: GameSpec
    lease: str
    expires: float
    attempt: int


@dataclass(frozen=True, slots=True)
class GameRow:
    """A game as stored: ``status`` is ``pending``, ``claimed`` or ``done``; ``result``,
    ``recorded_at`` and ``timings`` are None until done (``timings`` may stay None);
    ``attempts`` counts the claims."""

    spec: GameSpec
    status: str
    result: dict[str, Any] | None
    attempts: int
    recorded_at: float | None
    timings: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Runner:
    """A registered referee process: ``role`` is ``tournament`` (the command that owns the run)
    or ``worker``; alive until ``expires`` unless it renews its heartbeat."""

    owner: str
    host: str
    pid: int
    role: str
    expires: float


def dumps(value: object) -> str:
    """Canonical JSON (sorted keys, no NaN)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def check_times(now: float, lease_seconds: float | None = None) -> None:
    """``ValueError`` unless ``now`` is finite and ``lease_seconds`` (if given) positive."""
    if not math.isfinite(now):
        raise ValueError(f"now must be a finite time, not {now!r}")
    if lease_seconds is not None and not (math.isfinite(lease_seconds) and lease_seconds > 0):
        raise ValueError(f"lease_seconds must be positive and finite, not {lease_seconds!r}")


def fault_rows(faults: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """``(seat, kind, detail, hand, request_id, extra_json)`` per fault; ``ValueError`` for a
    fault without a ``kind`` string. Keys other than the columns are kept in ``extra_json``."""
    rows: list[tuple[Any, ...]] = []
    for fault in faults:
        if not isinstance(fault.get("kind"), str):
            raise ValueError(f"a fault needs a 'kind' string: {fault!r}")
        extra = {k: v for k, v in fault.items() if k not in FAULT_COLUMNS}
        values = (fault.get(column) for column in FAULT_COLUMNS)
        rows.append((*values, dumps(extra) if extra else None))
    return rows


def fault_dict(row: Sequence[Any]) -> dict[str, Any]:
    """A stored fault row ``(game_id, seat, kind, detail, hand, request_id, extra)`` as a dict."""
    extra = row[6]
    if isinstance(extra, str):
        extra = json.loads(extra)
    names = ("game_id", *FAULT_COLUMNS)
    return (extra or {}) | dict(zip(names, row[:6], strict=True))


def check_schedule(games: Sequence[GameSpec]) -> list[tuple[Any, ...]]:
    """The rows of a schedule; ``ValueError`` unless the ids are exactly 0..N-1."""
    ids = sorted(game.game_id for game in games)
    if ids != list(range(len(games))):
        raise ValueError("game ids must be exactly 0..N-1, each once")
    return sorted((g.game_id, g.pairing, g.seat0, g.seat1, g.deal_id, g.pair_index) for g in games)


def check_added(games: Sequence[GameSpec], first: int) -> list[tuple[Any, ...]]:
    """The rows of games appended to a schedule whose next id is ``first``; ``ValueError``
    unless their ids are exactly ``first``, ``first + 1``..."""
    ids = sorted(game.game_id for game in games)
    if ids != list(range(first, first + len(games))):
        raise ValueError(f"added game ids must be {first}, {first + 1}..., not {ids}")
    return sorted((g.game_id, g.pairing, g.seat0, g.seat1, g.deal_id, g.pair_index) for g in games)


def busy_reason(others: Sequence[Runner]) -> str:
    """Why a second independent run of a tournament is refused."""
    who = ", ".join(f"{r.role} pid {r.pid} on {r.host}" for r in others)
    return (
        f"is being played by another referee ({who}); wait for it to end or stop it, or add"
        " worker processes to it with `gin-referee worker --store ...`"
    )


def other_config(found: str, wanted: str) -> str:
    """The reason a store refuses a configuration it was not created for."""
    return (
        f"was created for another tournament configuration (hash {found}, now {wanted}); use a"
        " new output directory, or the original configuration to resume"
    )


class _Closable(Protocol):
    def close(self) -> None: ...


class StoreBase(ABC):
    """What both stores share: closing, the context manager, the deal commitment in ``meta``.
    Subclasses set ``_conn`` and ``_lock`` and implement ``get_meta``/``set_meta``."""

    _conn: _Closable | None
    _lock: threading.Lock

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

    @abstractmethod
    def get_meta(self, key: str) -> str | None:
        """A stored text value, None if absent."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless one is stored; return the stored one."""

    def commit_deal(self, commitment: str) -> str:
        """Store the tournament's deal commitment unless one is stored; return the stored one
        (the caller compares: a resumed run must deal from the same key)."""
        return self.set_meta("deal_commitment", commitment)

    def deal_commitment(self) -> str | None:
        """The stored deal commitment (None before the first run dealt)."""
        return self.get_meta("deal_commitment")


class Store(Protocol):
    """The results store of one tournament; every method is one short transaction.

    Thread-safe (calls are serialized), meant for the event loop's thread; never carried
    across ``fork()``. A context manager: closes on exit.
    """

    @property
    def location(self) -> str:
        """Where the store is: a file path or a URL without password (for messages)."""
        ...

    def close(self) -> None:
        """Close the connection (idempotent). Nothing is lost: every method has committed."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def init_tournament(
        self,
        *,
        config: dict[str, Any],
        config_hash: str,
        games: Sequence[GameSpec],
        now: float,
        growing: bool = False,
    ) -> bool:
        """Store the configuration and every game as pending; True on the first run. A later
        run with the same hash and games changes nothing (False); another hash raises. With
        ``growing`` (a ladder, whose games are added as it goes: :meth:`add_games`) a later run
        does not compare the games."""
        ...

    def add_games(self, games: Sequence[GameSpec]) -> None:
        """Append pending games whose ids continue the schedule (:meth:`next_game_id`, then
        consecutive); :class:`StoreError` (nothing added) if they do not."""
        ...

    def next_game_id(self) -> int:
        """The id the next added game takes: one more than the highest stored, 0 if none."""
        ...

    def config(self) -> tuple[dict[str, Any], str] | None:
        """The stored configuration and its hash, or None before :meth:`init_tournament`."""
        ...

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
        """Take the lowest open game (pending, or its lease expired: ``expires <= now``), one
        of pairing ``prefer`` first (with ``only``, none of another pairing), never one of the
        game ids in ``skip`` (games this run failed to play); a new lease until
        ``now + lease_seconds``. None if none."""
        ...

    def renew(self, claim: Claim, *, lease_seconds: float, now: float) -> Claim | None:
        """Extend the lease if still held (not re-claimed); None if lost."""
        ...

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
        """Record result, faults, timings (and ``files``, where the store keeps them) in one
        transaction if the game is still claimed under ``claim.lease``; else False."""
        ...

    def release(self, claim: Claim) -> None:
        """Give the game back (pending) if ``claim`` still holds it."""
        ...

    def release_all(self, *, owner: str | None = None) -> int:
        """Put the claimed games of ``owner`` (or of anyone) back to pending; the count."""
        ...

    def commit_deal(self, commitment: str) -> str:
        """Store the deal commitment unless one is stored; return the stored one."""
        ...

    def deal_commitment(self) -> str | None:
        """The stored deal commitment (None before the first run dealt)."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A stored text value (e.g. ``config_toml``), None if absent."""
        ...

    def set_meta(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless one is stored; return the stored one."""
        ...

    def join(
        self, runner: Runner, *, now: float, exclusive: bool, dead: Sequence[str] = ()
    ) -> list[Runner]:
        """Register ``runner`` (alive until ``runner.expires``) after forgetting the runners
        named in ``dead`` and those expired at ``now``, and releasing every claim whose owner is
        not a live runner. With ``exclusive``, raise :class:`StoreBusy` instead if another
        runner of role ``tournament`` is alive. Returns the other live runners."""
        ...

    def runners(self, *, now: float) -> list[Runner]:
        """The registered runners alive at ``now``."""
        ...

    def heartbeat(self, owner: str, *, expires: float) -> bool:
        """Keep ``owner`` alive until ``expires``; False if it was forgotten (declared dead)."""
        ...

    def leave(self, owner: str) -> None:
        """Unregister ``owner`` (graceful exit); its claims are left to :meth:`release`."""
        ...

    def counts(self) -> dict[str, int]:
        """Number of games by status (every status present, zeros included)."""
        ...

    def games(self) -> list[GameRow]:
        """Every game, by game_id."""
        ...

    def faults(self) -> list[dict[str, Any]]:
        """Every recorded fault as a dict with its ``game_id``, in insertion order."""
        ...

    def file(self, game_id: int, name: str) -> bytes | None:
        """A file recorded with a game's result (None if absent or not kept by this store)."""
        ...
