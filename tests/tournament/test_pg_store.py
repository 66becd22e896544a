"""The PostgreSQL store against a real server the tests start (tests/pgserver.py): the store
contract, concurrent claims with SKIP LOCKED, and four referee processes, one SIGKILLed
mid-game and one SIGSTOPped past its lease, recording exactly the games one process records."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.store import Claim, GameSpec, Runner, StoreBusy, StoreError, open_store
from referee.tournament.store.postgres import PgStore
from tests.e2e.helpers import GREEDY, RANDOM
from tests.pgserver import PgServer, pg_server, why_unavailable
from tests.tournament.test_tournament_e2e import game_results, write_config

WHY = why_unavailable()
pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(WHY is not None, reason=f"NO POSTGRESQL: {WHY} (.ci/run installs it)"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[PgServer]:
    with pg_server("fsync=off", "max_connections=50") as running:
        yield running


def _games(n: int) -> list[GameSpec]:
    return [GameSpec(i, "a-vs-b", "a", "b", f"a-vs-b/pair{i // 2}", i // 2) for i in range(n)]


@pytest.fixture
def store(server: PgServer) -> Iterator[PgStore]:
    opened = open_store(server.database(), tournament="t")
    assert isinstance(opened, PgStore)
    assert opened.init_tournament(config={"x": 1}, config_hash="h", games=_games(6), now=0.0)
    with opened:
        yield opened


def _take(store: PgStore, owner: str, now: float = 0.0) -> Claim:
    claim = store.claim(owner=owner, lease_seconds=10.0, now=now)
    assert claim is not None
    return claim


def test_lifecycle_fencing_and_finality(store: PgStore) -> None:
    first = _take(store, "a")
    assert first.game.game_id == 0 and first.attempt == 1
    assert _take(store, "b").game.game_id == 1
    stolen = _take(store, "c", now=10.0)  # game 0's lease expired at 10
    assert stolen.game.game_id == 0 and stolen.attempt == 2
    assert store.renew(first, lease_seconds=5.0, now=11.0) is None
    faults = [{"kind": "timeout", "seat": 1, "game": 1}]
    ok = store.record(stolen, result={"w": "a"}, faults=faults, timings={"t": 1.0}, now=12.0,
                      files={"record": b"line\n" * 1000})  # fmt: skip
    assert ok
    assert not store.record(first, result={"w": "b"}, faults=[], timings=None, now=13.0)
    assert not store.record(stolen, result={"w": "b"}, faults=[], timings=None, now=13.0)
    assert store.file(0, "record") == b"line\n" * 1000 and store.file(0, "x") is None
    assert store.faults() == [{"game_id": 0, "seat": 1, "kind": "timeout", "detail": None,
                               "hand": None, "request_id": None, "game": 1}]  # fmt: skip
    row = store.games()[0]
    assert (row.status, row.result, row.attempts, row.timings) == ("done", {"w": "a"}, 2,
                                                                    {"t": 1.0})  # fmt: skip
    assert store.counts() == {"pending": 4, "claimed": 1, "done": 1}
    with pytest.raises(StoreError, match="recorded data is final"), store._tx("raw") as conn:
        conn.execute("UPDATE games SET result = '{}' WHERE tournament = 't' AND game_id = 0")
    assert (
        store.init_tournament(config={"x": 1}, config_hash="h", games=_games(6), now=1.0) is False
    )
    with pytest.raises(StoreError, match="another tournament configuration"):
        store.init_tournament(config={"x": 2}, config_hash="h2", games=_games(6), now=1.0)


def test_runner_registry_refuses_a_second_tournament(store: PgStore) -> None:
    store.join(Runner("one", "m1", 1, "tournament", 100.0), now=0.0, exclusive=True)
    orphan = _take(store, "ghost")  # a claim of no live runner
    store.join(Runner("w", "m2", 2, "worker", 100.0), now=1.0, exclusive=False)
    assert store.counts()["claimed"] == 0  # released when the worker joined
    store.release(orphan)  # a no-op now
    assert store.counts()["pending"] == 6
    with pytest.raises(StoreBusy, match="tournament pid 1 on m1"):
        store.join(Runner("two", "m3", 3, "tournament", 100.0), now=2.0, exclusive=True)
    assert store.heartbeat("one", expires=200.0) and not store.heartbeat("nobody", expires=1.0)
    assert [r.owner for r in store.join(Runner("two", "m3", 3, "tournament", 300.0), now=250.0,
                                        exclusive=True)] == []  # fmt: skip


def test_concurrent_claimers_never_share_a_game(server: PgServer) -> None:
    url = server.database()
    with open_store(url, tournament="c") as setup:
        setup.init_tournament(config={}, config_hash="h", games=_games(200), now=0.0)
    taken: list[list[int]] = []
    errors: list[BaseException] = []

    def claimer(k: int) -> None:
        mine: list[int] = []
        try:
            with open_store(url, tournament="c") as store:
                while (claim := store.claim(owner=f"o{k}", lease_seconds=60, now=1.0)) is not None:
                    mine.append(claim.game.game_id)
                    assert store.record(claim, result={}, faults=[], timings=None, now=2.0)
        except BaseException as exc:
            errors.append(exc)
        taken.append(mine)

    threads = [threading.Thread(target=claimer, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    every = sorted(g for mine in taken for g in mine)
    assert every == list(range(200))
    assert sum(1 for mine in taken if mine) >= 2  # they did claim concurrently


def test_bad_urls_and_databases_say_what_is_wrong(server: PgServer) -> None:
    with pytest.raises(StoreError, match=r"cannot connect"):
        open_store(f"postgresql://postgres:secret@127.0.0.1:{server.port}/no_such_db")
    with pytest.raises(StoreError) as info:
        open_store(f"postgresql://postgres:secret@127.0.0.1:{server.port}/no_such_db")
    assert "secret" not in str(info.value)
    url = server.database()
    with open_store(url, tournament="a") as one:
        one.init_tournament(config={}, config_hash="h", games=_games(2), now=0.0)
    with open_store(url, tournament="b") as two:
        two.init_tournament(config={}, config_hash="h", games=_games(2), now=0.0)
    with pytest.raises(StoreError, match=r"name the tournament .* it holds: a, b"):
        open_store(url)


def _owners(url: str) -> dict[int, str]:
    """pid -> owner of the live runners."""
    with open_store(url, tournament="t") as store:
        return {r.pid: r.owner for r in store.runners(now=time.time())}


def _claimed_by(url: str, owner: str) -> bool:
    with open_store(url, tournament="t") as store:
        assert isinstance(store, PgStore)
        with store._tx("test") as conn:
            row = conn.execute(
                "SELECT count(*) FROM games WHERE status = 'claimed' AND owner = %s", (owner,)
            ).fetchone()
    return row is not None and bool(row[0])


def _wait(predicate: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # other processes' state in a database: nothing to await


def test_four_workers_one_killed_one_stopped_record_what_one_process_records(
    server: PgServer, tmp_path: Path
) -> None:
    bots = [("greedy", GREEDY), ("random", RANDOM)]
    config = write_config(tmp_path / "t.toml", bots, games=16, concurrency=1, startup=60.0)
    assert main(["tournament", str(config), "--out", str(tmp_path / "one")]) == 0
    expected = game_results(tmp_path / "one")
    url = server.database()
    lease = "3"
    base = [sys.executable, "-m", "referee"]
    leader = subprocess.Popen([*base, "tournament", str(config), "--out", str(tmp_path / "t0"),
                               "--store", url, "--lease", lease],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    procs = [leader]
    try:
        _wait(lambda: len(_owners(url)) == 1, "the tournament to start")
        for k in (1, 2, 3):
            procs.append(subprocess.Popen([*base, "worker", "--store", url, "--out",
                                           str(tmp_path / f"t{k}"), "--lease", lease],
                                          stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))  # fmt: skip
        _wait(lambda: len(_owners(url)) == 4, "four runners")
        owners = _owners(url)
        killed, stopped = procs[1], procs[2]
        _wait(lambda: _claimed_by(url, owners[killed.pid]), "the first victim to play")
        killed.send_signal(signal.SIGKILL)
        _wait(lambda: _claimed_by(url, owners[stopped.pid]), "the second victim to play")
        stopped.send_signal(signal.SIGSTOP)
        paused_at = time.monotonic()
        _wait(lambda: not _claimed_by(url, owners[stopped.pid]), "its game to be taken over")
        assert time.monotonic() - paused_at >= 2.0  # not before its lease ran out
        stopped.send_signal(signal.SIGCONT)
        for proc in procs:
            assert proc.wait(timeout=150) in (0, -signal.SIGKILL)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait()
    with open_store(url, tournament="t") as store:
        rows = store.games()
        faults = store.faults()
    got = {r.spec.game_id: ("done", r.result["winner"], tuple(r.result["totals"]))
           for r in rows if r.result is not None}  # fmt: skip
    assert got == expected, [r.result for r in rows if r.result and r.result["winner"] is None]
    assert max(r.attempts for r in rows) >= 2  # the victims' games were played again
    assert len(faults) == sum(len(r.result["faults"]) for r in rows if r.result is not None)
    fetched = tmp_path / "fetched"
    assert main(["fetch", "--store", url, "--out", str(fetched)]) == 0
    records = sorted(fetched.glob("games/*.jsonl"))
    assert len(records) == 16  # the plain record, named as a local run names it
    assert all(re.fullmatch(r"g\d{6}-a\d+\.jsonl", path.name) for path in records)
    stderr_names = [path.name for path in fetched.glob("stderr/*")]
    assert stderr_names and all(re.fullmatch(r"g\d{6}-a\d+\.\w+\.stderr", n) for n in stderr_names)
    assert main(["replay", str(records[0]), "--quiet"]) == 0
    assert main(["results", "--store", url, "--format", "json"]) == 0
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert main(["fetch", "--store", url, "--out", str(blocked / "out")]) == 2  # named, no trace


def test_a_growing_schedule_appends_games(server: PgServer) -> None:
    """A ladder's games are added as it goes; a claim with ``only`` stays in its pairing."""
    with open_store(server.database(), tournament="ladder") as store:
        assert store.init_tournament(config={"x": 1}, config_hash="h", games=[], now=0.0,
                                     growing=True)  # fmt: skip
        assert store.next_game_id() == 0
        store.add_games(_games(2))
        store.add_games([GameSpec(2, "c-vs-d", "c", "d", "c-vs-d/pair2", 2)])
        with pytest.raises(StoreError, match="added game ids must be 3"):
            store.add_games(_games(1))
        assert store.next_game_id() == 3
        assert not store.init_tournament(config={"x": 1}, config_hash="h", games=[], now=1.0,
                                         growing=True)  # fmt: skip
        got = store.claim(owner="o", lease_seconds=5.0, now=0.0, prefer="c-vs-d", only=True)
        assert got is not None and got.game.game_id == 2
        assert (
            store.claim(owner="o", lease_seconds=5.0, now=0.0, prefer="c-vs-d", only=True) is None
        )
