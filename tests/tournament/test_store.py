"""The tournament store: lifecycle, exactly-once recording, concurrency, crashes, bad files."""

from __future__ import annotations

import functools
import json
import os
import random
import signal
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from referee.tournament.store import SCHEMA_VERSION, Claim, GameSpec, SqliteStore, StoreError

CONFIG = {"seed": 7, "bots": ["alpha", "beta"], "games_per_pairing": 4}


def make_games(n: int) -> list[GameSpec]:
    """``n`` games of one pairing, in duplicate pairs with swapped seats."""
    return [
        GameSpec(
            game_id=i,
            pairing="alpha-vs-beta",
            seat0="alpha" if i % 2 == 0 else "beta",
            seat1="beta" if i % 2 == 0 else "alpha",
            deal_id=f"7/alpha-vs-beta/{i // 2}",
            pair_index=i // 2,
        )
        for i in range(n)
    ]


def new_store(path: Path, n: int) -> SqliteStore:
    """A store at ``path`` initialised with ``n`` games."""
    store = SqliteStore.open(path)
    assert store.init_tournament(config=CONFIG, config_hash="h1", games=make_games(n), now=0.0)
    return store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "tournament.sqlite"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteStore]:
    with new_store(db, 5) as opened:
        yield opened


def take(
    store: SqliteStore, owner: str = "host-a", *, now: float = 0.0, lease: float = 10.0
) -> Claim:
    claim = store.claim(owner=owner, lease_seconds=lease, now=now)
    assert claim is not None
    return claim


def record(store: SqliteStore, claim: Claim, *, now: float = 1.0, faults: int = 0) -> bool:
    """Record a result naming the game and lease, with ``faults`` fault rows."""
    return store.record(
        claim,
        result={"game_id": claim.game.game_id, "lease": claim.lease},
        faults=[
            {"seat": k % 2, "kind": "timeout", "detail": f"f{k}", "hand": k} for k in range(faults)
        ],
        timings={"wall_s": 1.5},
        now=now,
    )


# --- opening, initialising, resuming -------------------------------------------------------


def test_first_run_stores_config_and_pending_games(db: Path) -> None:
    with SqliteStore.open(db) as store:
        assert store.config() is None
        assert store.counts() == {"pending": 0, "claimed": 0, "done": 0}
        assert store.init_tournament(config=CONFIG, config_hash="h1", games=make_games(6), now=5.0)
        assert store.config() == (CONFIG, "h1")
        rows = store.games()
    assert [row.spec for row in rows] == make_games(6)
    assert {(row.status, row.attempts, row.result, row.recorded_at) for row in rows} == {
        ("pending", 0, None, None)
    }


def test_resume_with_same_hash_changes_nothing(db: Path) -> None:
    with new_store(db, 4) as store:
        record(store, take(store))
        take(store)
        before = store.games()
    with SqliteStore.open(db) as store:
        assert not store.init_tournament(
            config=CONFIG, config_hash="h1", games=make_games(4), now=99.0
        )
        assert store.games() == before
        assert store.counts() == {"pending": 2, "claimed": 1, "done": 1}


def test_another_config_hash_is_refused_and_nothing_changes(db: Path) -> None:
    with new_store(db, 3) as store:
        record(store, take(store))
        before = store.games()
    with SqliteStore.open(db) as store:
        with pytest.raises(StoreError) as caught:
            store.init_tournament(config={"other": 1}, config_hash="h2", games=make_games(9), now=1)
        assert store.games() == before
        assert store.config() == (CONFIG, "h1")
    error = caught.value
    assert error.path == db
    assert str(db) in str(error)
    assert "another tournament configuration (hash h1, now h2)" in str(error)
    assert "new output directory" in str(error)


def test_same_hash_with_another_schedule_is_refused(db: Path) -> None:
    new_store(db, 3).close()
    with SqliteStore.open(db) as store, pytest.raises(StoreError, match="different game schedule"):
        store.init_tournament(config=CONFIG, config_hash="h1", games=make_games(4), now=1.0)


def test_game_ids_must_be_0_to_n_minus_1(db: Path) -> None:
    games = make_games(3)
    with SqliteStore.open(db) as store, pytest.raises(ValueError, match=r"0\.\.N-1"):
        store.init_tournament(config=CONFIG, config_hash="h", games=games[1:], now=0.0)


def test_garbage_file_is_a_store_error_naming_the_path(db: Path) -> None:
    garbage = random.Random(1).randbytes(5000)
    db.write_bytes(garbage)
    with pytest.raises(StoreError) as caught:
        SqliteStore.open(db)
    assert caught.value.path == db
    assert str(db) in str(caught.value)
    assert "not a SQLite database" in str(caught.value)
    assert db.read_bytes() == garbage


def test_foreign_sqlite_file_is_refused_and_untouched(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.execute("INSERT INTO users VALUES ('ann')")
    conn.commit()
    conn.close()
    content = db.read_bytes()
    with pytest.raises(StoreError, match="not a gin-referee tournament store") as caught:
        SqliteStore.open(db)
    assert str(db) in str(caught.value)
    assert "users" in str(caught.value)
    assert db.read_bytes() == content


def test_foreign_file_with_our_table_names_is_refused(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE schema_version (version INTEGER)")
    conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a gin-referee tournament store"):
        SqliteStore.open(db)


def test_newer_schema_version_is_refused(db: Path) -> None:
    SqliteStore.open(db).close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=f"schema version \\[{SCHEMA_VERSION + 1}\\]"):
        SqliteStore.open(db)


def test_damaged_store_fails_its_integrity_check(db: Path) -> None:
    new_store(db, 2000).close()
    with db.open("r+b") as file:
        file.seek(4096 * 5)
        file.write(random.Random(2).randbytes(4096 * 3))
    with pytest.raises(StoreError, match=r"integrity check|not a SQLite database") as caught:
        SqliteStore.open(db)
    assert str(db) in str(caught.value)


def test_empty_file_becomes_a_store(db: Path) -> None:
    db.touch()
    with SqliteStore.open(db) as store:
        assert store.counts() == {"pending": 0, "claimed": 0, "done": 0}


def test_wal_mode_and_full_sync(store: SqliteStore, db: Path) -> None:
    other = sqlite3.connect(db)
    assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    other.close()
    assert store._conn is not None
    assert store._conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL


def test_close_is_idempotent_and_a_closed_store_raises(db: Path) -> None:
    store = new_store(db, 1)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.counts()


def test_recorded_rows_are_final_even_for_raw_sql(store: SqliteStore, db: Path) -> None:
    record(store, take(store), faults=1)
    conn = sqlite3.connect(db)
    for sql in (
        "UPDATE games SET status = 'pending'",
        "UPDATE games SET result_json = '{}'",
        "DELETE FROM games",
        "UPDATE faults SET kind = 'none'",
        "DELETE FROM faults",
        "UPDATE tournament SET config_hash = 'h2'",
        "DELETE FROM tournament",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="recorded data is final"):
            conn.execute(sql)
    conn.close()
    assert store.counts()["done"] == 1
    assert len(store.faults()) == 1


def test_claim_uses_the_open_games_index(store: SqliteStore) -> None:
    assert store._conn is not None
    for preferred in ("", " AND pairing = 'p'"):  # the preferred pairing's query too
        plan = store._conn.execute(
            "EXPLAIN QUERY PLAN SELECT game_id FROM games"
            " WHERE status <> 'done' AND (status = 'pending' OR lease_expires <= 0)"
            f"{preferred} ORDER BY game_id LIMIT 1"
        ).fetchall()
        assert "games_open" in str(plan)


# --- the lifecycle ---------------------------------------------------------------------------


def test_claims_go_in_game_order_and_count_attempts(store: SqliteStore) -> None:
    claims = [take(store, now=0.0, lease=10.0) for _ in range(5)]
    assert [c.game.game_id for c in claims] == [0, 1, 2, 3, 4]
    assert {c.attempt for c in claims} == {1}
    assert {c.expires for c in claims} == {10.0}
    assert len({c.lease for c in claims}) == 5
    assert store.claim(owner="host-a", lease_seconds=10.0, now=9.99) is None
    assert store.counts() == {"pending": 0, "claimed": 5, "done": 0}


def test_expired_lease_is_reclaimed_lowest_first(store: SqliteStore) -> None:
    first = take(store, now=0.0, lease=10.0)
    take(store, now=5.0, lease=10.0)  # game 1 expires at 15
    again = take(store, "host-b", now=10.0)  # game 0 expired exactly now
    assert again.game == first.game
    assert again.attempt == 2
    assert again.lease != first.lease
    assert take(store, now=10.0).game.game_id == 2  # game 1's lease still holds
    assert [row.attempts for row in store.games()] == [2, 1, 1, 0, 0]


def test_renew_extends_a_held_lease_only(store: SqliteStore) -> None:
    claim = take(store, now=0.0, lease=10.0)
    renewed = store.renew(claim, lease_seconds=10.0, now=8.0)
    assert renewed == Claim(claim.game, claim.lease, 18.0, 1)
    assert take(store, now=12.0).game.game_id == 1  # game 0 not reclaimable any more
    late = store.renew(renewed, lease_seconds=10.0, now=30.0)  # expired, nobody took it
    assert late is not None and late.expires == 40.0
    stolen = take(store, "host-b", now=40.0)
    assert stolen.game == claim.game
    assert store.renew(late, lease_seconds=10.0, now=41.0) is None
    assert store.renew(stolen, lease_seconds=10.0, now=41.0) is not None


def test_lost_lease_cannot_record_and_the_new_owner_wins(store: SqliteStore) -> None:
    lost = take(store, "host-a", now=0.0, lease=10.0)
    winner = take(store, "host-b", now=11.0)
    assert winner.game == lost.game
    assert not record(store, lost, faults=2)
    assert store.counts() == {"pending": 4, "claimed": 1, "done": 0}
    assert store.faults() == []
    assert record(store, winner, faults=1)
    assert not record(store, lost, faults=2)
    row = store.games()[0]
    assert row.status == "done"
    assert row.result == {"game_id": 0, "lease": winner.lease}
    assert row.attempts == 2
    assert [f["detail"] for f in store.faults()] == ["f0"]


def test_recording_twice_returns_false_and_keeps_the_first(store: SqliteStore) -> None:
    claim = take(store)
    assert record(store, claim, now=3.0, faults=2)
    assert not store.record(
        claim, result={"other": True}, faults=[{"kind": "x"}], timings=None, now=4
    )
    row = store.games()[0]
    assert (row.result, row.recorded_at, row.timings) == (
        {"game_id": 0, "lease": claim.lease},
        3.0,
        {"wall_s": 1.5},
    )
    assert len(store.faults()) == 2
    store.release(claim)  # a done game is never given back
    assert store.counts()["done"] == 1
    assert store.release_all() == 0


def test_a_late_record_is_accepted_while_nobody_reclaimed(store: SqliteStore) -> None:
    claim = take(store, now=0.0, lease=1.0)
    assert record(store, claim, now=500.0)
    assert store.claim(owner="host-b", lease_seconds=1.0, now=501.0) is not None
    assert store.games()[0].status == "done"


def test_faults_round_trip_with_their_game_and_extra_fields(store: SqliteStore) -> None:
    take(store)
    claim = take(store)
    fault = {"seat": 1, "kind": "illegal", "detail": "knock 9c", "game": 2, "hand": 3}
    fault |= {"request_id": 41}
    assert store.record(claim, result={}, faults=[fault], timings=None, now=1.0)
    assert store.faults() == [{**fault, "game_id": 1}]
    with pytest.raises(ValueError, match="kind"):
        store.record(take(store), result={}, faults=[{"seat": 0}], timings=None, now=1.0)


def test_release_gives_back_only_a_held_claim(store: SqliteStore) -> None:
    claim = take(store, now=0.0, lease=1.0)
    store.release(claim)
    again = take(store, "host-b", now=0.0)
    assert (again.game.game_id, again.attempt) == (0, 2)
    store.release(claim)  # stale: host-b holds it now
    assert store.games()[0].status == "claimed"
    assert not record(store, claim)
    assert record(store, again)


def test_release_all_by_owner_or_everyone(store: SqliteStore) -> None:
    a1, _, a2 = take(store, "host-a"), take(store, "host-b"), take(store, "host-a")
    record(store, a2)
    assert store.release_all(owner="host-a") == 1
    assert store.release_all(owner="nobody") == 0
    assert store.counts() == {"pending": 3, "claimed": 1, "done": 1}
    assert store.release_all() == 1
    assert store.counts() == {"pending": 4, "claimed": 0, "done": 1}
    assert take(store).game == a1.game


# --- concurrency: several connections on one file ---------------------------------------------


def drain(path: Path, owner: str) -> list[int]:
    """Claim and record until nothing is left; the game ids this connection recorded."""
    mine = []
    with SqliteStore.open(path, busy_timeout=60.0) as store:
        while (claim := store.claim(owner=owner, lease_seconds=600.0, now=0.0)) is not None:
            assert record(store, claim, faults=1)
            mine.append(claim.game.game_id)
    return mine


def check_all_done_once(
    path: Path, n: int, faults_per_game: int, *, reclaims: bool = False
) -> None:
    with SqliteStore.open(path) as store:
        rows = store.games()
        assert store.counts() == {"pending": 0, "claimed": 0, "done": n}
        if not reclaims:
            assert [row.attempts for row in rows] == [1] * n
        assert all(
            row.result is not None and row.result["game_id"] == i for i, row in enumerate(rows)
        )
        by_game = [f["game_id"] for f in store.faults()]
        assert sorted(by_game) == [i for i in range(n) for _ in range(faults_per_game)]


def test_threads_with_their_own_connections_claim_each_game_once(db: Path) -> None:
    n = 300
    new_store(db, n).close()
    results: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def worker(owner: str) -> None:
        try:
            results[owner] = drain(db, owner)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f"host-{k}",)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    claimed = [game for ids in results.values() for game in ids]
    assert sorted(claimed) == list(range(n))
    check_all_done_once(db, n, faults_per_game=1)


def fork(child: Callable[[], object]) -> int:
    """Run ``child`` in a forked process that leaves by ``os._exit`` (status 0 if it returned)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            child()
            code = 0
        finally:
            os._exit(code)
    return pid


def exit_status(pid: int) -> int:
    """Wait for ``pid``; its exit code, or minus the signal that killed it."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_processes_claim_each_game_once(db: Path) -> None:
    n = 200
    new_store(db, n).close()  # no connection may be open across fork

    def child(k: int) -> None:
        ids = drain(db, f"process-{k}")
        db.with_suffix(f".{k}").write_text(json.dumps(ids))

    pids = [fork(functools.partial(child, k)) for k in range(3)]
    assert [exit_status(pid) for pid in pids] == [0, 0, 0]
    claimed = [i for k in range(3) for i in json.loads(db.with_suffix(f".{k}").read_text())]
    assert sorted(claimed) == list(range(n))
    check_all_done_once(db, n, faults_per_game=1)


# --- crashes: kill -9 at any moment -----------------------------------------------------------


def test_kill_in_the_middle_of_record_leaves_the_game_claimed(db: Path) -> None:
    new_store(db, 6).close()

    def child() -> None:
        store = SqliteStore.open(db)
        for _ in range(3):
            record(store, take(store), faults=2)
        doomed = take(store)
        take(store)  # another claim in flight
        assert store._conn is not None

        def die_on_fault_insert(sql: str) -> None:
            if sql.startswith("INSERT INTO faults"):  # after the UPDATE, before COMMIT
                os.kill(os.getpid(), signal.SIGKILL)

        store._conn.set_trace_callback(die_on_fault_insert)
        record(store, doomed, faults=2)

    assert exit_status(fork(child)) == -signal.SIGKILL
    with SqliteStore.open(db) as store:
        assert store.counts() == {"pending": 1, "claimed": 2, "done": 3}
        assert [row.status for row in store.games()][:5] == ["done"] * 3 + ["claimed"] * 2
        assert sorted(f["game_id"] for f in store.faults()) == [0, 0, 1, 1, 2, 2]
        assert store.release_all() == 2
        while (claim := store.claim(owner="resumed", lease_seconds=5.0, now=0.0)) is not None:
            assert record(store, claim, faults=2)
        assert [row.attempts for row in store.games()] == [1, 1, 1, 2, 2, 1]
    check_all_done_once(db, 6, faults_per_game=2, reclaims=True)


def test_kill_at_random_moments_never_loses_or_duplicates(db: Path) -> None:
    n = 3000
    new_store(db, n).close()
    rng = random.Random(3)
    for round_no in range(6):
        pid = fork(functools.partial(drain, db, f"run-{round_no}"))
        time.sleep(rng.uniform(0.005, 0.15))
        os.kill(pid, signal.SIGKILL)
        assert exit_status(pid) in (0, -signal.SIGKILL)
        with SqliteStore.open(db) as store:
            counts = store.counts()
            assert sum(counts.values()) == n
            assert counts["claimed"] <= 1  # the one game in flight, if any
            done = [row for row in store.games() if row.status == "done"]
            assert all(row.result is not None for row in done)
            assert sorted(f["game_id"] for f in store.faults()) == sorted(
                r.spec.game_id for r in done
            )
            assert store.release_all() == counts["claimed"]
    drain(db, "final")
    check_all_done_once(db, n, faults_per_game=1, reclaims=True)


def test_dropping_the_object_without_close_keeps_what_was_committed(db: Path) -> None:
    store = new_store(db, 4)
    record(store, take(store))
    take(store)
    del store  # no close(): the connection is just abandoned
    with SqliteStore.open(db) as reopened:
        assert reopened.counts() == {"pending": 2, "claimed": 1, "done": 1}


# --- a model-based check of the whole lifecycle ---------------------------------------------

N_MODEL = 4


@dataclass
class ModelGame:
    status: str = "pending"
    lease: str | None = None
    expires: float = 0.0
    attempts: int = 0
    result_lease: str | None = None


class StoreMachine(RuleBasedStateMachine):
    """Random interleavings of claim/renew/record/release/time against a plain model."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.store = new_store(Path(self.tmp.name) / "t.sqlite", N_MODEL)
        self.model = [ModelGame() for _ in range(N_MODEL)]
        self.claims: list[Claim] = []
        self.now = 0.0

    def held(self, claim: Claim) -> bool:
        game = self.model[claim.game.game_id]
        return game.status == "claimed" and game.lease == claim.lease

    @rule(dt=st.sampled_from([0.0, 0.5, 1.0, 2.5]))
    def tick(self, dt: float) -> None:
        self.now += dt

    @rule(owner=st.sampled_from(["a", "b"]), lease=st.sampled_from([1.0, 2.0]))
    def claim(self, owner: str, lease: float) -> None:
        free = [
            i
            for i, g in enumerate(self.model)
            if g.status == "pending" or (g.status == "claimed" and g.expires <= self.now)
        ]
        got = self.store.claim(owner=owner, lease_seconds=lease, now=self.now)
        if not free:
            assert got is None
            return
        assert got is not None and got.game.game_id == free[0]
        game = self.model[free[0]]
        game.status, game.lease, game.expires = "claimed", got.lease, self.now + lease
        game.attempts += 1
        assert got.attempt == game.attempts
        self.claims.append(got)

    @precondition(lambda self: self.claims)
    @rule(data=st.data())
    def record(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        expected = self.held(claim)
        assert record(self.store, claim, now=self.now, faults=1) == expected
        if expected:
            game = self.model[claim.game.game_id]
            game.status, game.result_lease = "done", claim.lease

    @precondition(lambda self: self.claims)
    @rule(data=st.data(), lease=st.sampled_from([1.0, 3.0]))
    def renew(self, data: st.DataObject, lease: float) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        expected = self.held(claim)
        renewed = self.store.renew(claim, lease_seconds=lease, now=self.now)
        assert (renewed is not None) == expected
        if renewed is not None:
            self.model[claim.game.game_id].expires = renewed.expires
            self.claims.append(renewed)

    @precondition(lambda self: self.claims)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        if self.held(claim):
            self.model[claim.game.game_id].status = "pending"
        self.store.release(claim)

    @rule()
    def release_all(self) -> None:
        claimed = [g for g in self.model if g.status == "claimed"]
        for game in claimed:
            game.status = "pending"
        assert self.store.release_all() == len(claimed)

    @invariant()
    def store_agrees_with_model(self) -> None:
        rows = self.store.games()
        assert [r.status for r in rows] == [g.status for g in self.model]
        assert [r.attempts for r in rows] == [g.attempts for g in self.model]
        for row, game in zip(rows, self.model, strict=True):
            expected = (
                None
                if game.result_lease is None
                else {"game_id": row.spec.game_id, "lease": game.result_lease}
            )
            assert row.result == expected
        done = sum(g.status == "done" for g in self.model)
        assert len(self.store.faults()) == done
        assert sum(self.store.counts().values()) == N_MODEL

    def teardown(self) -> None:
        self.store.close()
        self.tmp.cleanup()


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)


def test_a_claim_prefers_the_given_pairing_then_game_order(tmp_path: Path) -> None:
    games = [
        GameSpec(i, pairing, "a", "b", f"k{i}", None)
        for i, pairing in enumerate(["p1", "p2", "p1", "p2", "p3"])
    ]
    store = SqliteStore.open(tmp_path / "s.sqlite")
    try:
        assert store.init_tournament(config=CONFIG, config_hash="h", games=games, now=0.0)

        def claim(prefer: str | None) -> int:
            got = store.claim(owner="w", lease_seconds=10.0, now=0.0, prefer=prefer)
            assert got is not None
            return got.game.game_id

        assert [claim("p2"), claim("p2"), claim("p2"), claim(None), claim("p9")] == [1, 3, 0, 2, 4]
    finally:
        store.close()


def test_a_growing_schedule_appends_games_and_claims_one_pairing_only(db: Path) -> None:
    """A ladder's store: games are added as pairs are chosen, a resumed run does not compare
    the schedule, ids must continue it, and ``only`` never hands out another pairing's game."""
    with SqliteStore.open(db) as store:
        assert store.init_tournament(config=CONFIG, config_hash="h1", games=[], now=0.0,
                                     growing=True)  # fmt: skip
        assert store.next_game_id() == 0
        store.add_games(make_games(2))
        other = [GameSpec(2, "x-vs-y", "x", "y", "x-vs-y/pair2", 2),
                 GameSpec(3, "x-vs-y", "y", "x", "x-vs-y/pair2", 2)]  # fmt: skip
        store.add_games(other)
        assert store.next_game_id() == 4
        with pytest.raises(StoreError, match="added game ids must be 4"):
            store.add_games(make_games(2))
        assert store.counts()["pending"] == 4
        assert not store.init_tournament(config=CONFIG, config_hash="h1", games=[], now=1.0,
                                         growing=True)  # fmt: skip
        got = store.claim(owner="o", lease_seconds=5.0, now=0.0, prefer="x-vs-y", only=True)
        assert got is not None and got.game.game_id == 2
        assert (
            store.claim(owner="o", lease_seconds=5.0, now=0.0, prefer="nobody", only=True) is None
        )
        fallback = store.claim(owner="o", lease_seconds=5.0, now=0.0, prefer="nobody")
        assert fallback is not None and fallback.game.game_id == 0
