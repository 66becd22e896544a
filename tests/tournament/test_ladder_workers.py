"""A ladder with workers, end to end: ``ladder run --workers 3`` (two ``gin-referee worker``
processes beside the ladder's) with real sample bots, on SQLite and on a real PostgreSQL; a
worker killed with SIGKILL mid-game: its lease expires, the game is played again once (same
deal), recorded once, its pair rated once. Every closed pair's deal key is published and
proves its records through ``replay --deal-key``; no open pair's key is ever shown."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import sqlite3
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.common import free_port
from referee.cli import main
from referee.tournament.ladder import LadderBook, PairLedger
from referee.tournament.store import GameRow, Runner, open_store
from tests.e2e.daemon import wait_for
from tests.pgserver import pg_server, why_unavailable
from tests.tournament.test_ladder_e2e import local, processes_mentioning, setup, start, stop

pytestmark = pytest.mark.timeout(300)
WHY = why_unavailable()
LEASE = "4"


@contextlib.contextmanager
def a_store(kind: str, out: Path) -> Iterator[str]:
    """The ladder's store: its directory's SQLite file, or a fresh PostgreSQL database."""
    if kind == "sqlite":
        yield str(out / "tournament.sqlite")
        return
    if WHY is not None:
        pytest.skip(f"NO POSTGRESQL: {WHY} (.ci/run installs it)")
    with pg_server("fsync=off") as server:
        yield server.database()


def games(location: str) -> list[GameRow]:
    with open_store(location, tournament="e2e") as store:
        return store.games()


def runners(location: str) -> list[Runner]:
    with open_store(location, tournament="e2e") as store:
        return store.runners(now=time.time())


def claimed_by(location: str) -> dict[int, str]:
    """The games claimed now, and their claimers (the ``owner`` column the API keeps)."""
    sql = "SELECT game_id, owner FROM games WHERE status = 'claimed'"
    if location.startswith("postgresql://"):
        with psycopg.connect(location) as conn:
            rows = conn.execute(sql + " AND tournament = 'e2e'").fetchall()
    else:
        with contextlib.closing(sqlite3.connect(location)) as conn:
            rows = conn.execute(sql).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def book(location: str) -> LadderBook:
    return LadderBook.open(location if location.startswith("postgresql://") else Path(location),
                           ladder="e2e")  # fmt: skip


def admin(location: str, out: Path) -> list[str]:
    return ["--store", location, "--ladder", "e2e"] if "://" in location else [str(out)]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_worker_killed_mid_game_loses_nothing_and_plays_nothing_twice(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config, out, entry = setup(tmp_path, concurrency=2, startup=60.0)
    with a_store(kind, out) as location:
        where = admin(location, out)
        assert main(["ladder", "add", *where, "mine", *local(entry.parent)]) == 0
        assert main(["ladder", "add", *where, "rand", *local(tmp_path / "rand")]) == 0
        extra = ["--store", location] if kind == "postgresql" else []
        spectate = f"127.0.0.1:{free_port()}"
        spec = ["--spectate", spectate] if kind == "sqlite" else []
        ladder, _ = start(config, out, "--insecure", "--workers", "3", "--lease", LEASE, *extra,
                          *spec)  # fmt: skip
        try:
            ours = ladder.pid
            wait_for("two workers", lambda: sum(r.role == "worker" for r in runners(location)) == 2)
            workers = {r.owner: r.pid for r in runners(location) if r.role == "worker"}

            def a_worker_mid_game() -> bool:
                return any(o in workers for o in claimed_by(location).values())

            wait_for("a worker's game in play", a_worker_mid_game, within=120)
            game, owner = next((g, o) for g, o in claimed_by(location).items() if o in workers)
            os.kill(workers[owner], signal.SIGKILL)  # its game is neither recorded nor given back
            killed = next(r.spec for r in games(location) if r.spec.game_id == game)

            def replayed() -> bool:
                return any(r.spec.game_id == game and r.status == "done" for r in games(location))

            wait_for("the killed game played again", replayed, within=120)
            # (at once: the worker started in its place finds the dead one's pid gone on this
            # host and releases its claim, docs/ladder.md; a machine lost waits for the lease)
            with book(location) as lad:
                wait_for("its pair rated", lambda: killed.deal_id in lad.rated_deals(), within=120)
            if spec:
                with urllib.request.urlopen(f"http://{spectate}/leaderboard.json", timeout=10) as r:
                    published = r.read().decode()
        finally:
            printed, _ = stop(ladder)
        assert ladder.pid == ours and "pair ladder/" in printed
        rows = {r.spec.game_id: r for r in games(location)}
        assert rows[game].attempts == 2  # claimed twice, recorded once
        assert all(r.status in ("done", "pending") for r in rows.values())
        done = [r for r in rows.values() if r.status == "done"]
        assert all(r.result is not None and r.result["reason"] != "no_start" for r in done)
        with book(location) as lad:
            deals = [r.deal_id for r in lad.history()]
            pairs = PairLedger(lad).rows()
        assert deals.count(killed.deal_id) == 2  # rated once (a row per player)
        assert all(deals.count(d) == 2 for d in deals)
        # the attempt killed wrote a plain record; the one that counts is another file
        record = Path(str(rows[game].result["record"]))  # type: ignore[index]
        assert record.name.startswith(f"g{game:06d}-a2")
        by_workers = {r.spec.game_id for r in done} - {game}
        assert by_workers  # (the workers and the ladder played them: the store says which)
        check_deals(tmp_path, out, location, pairs, rows, capsys)
        if spec:
            assert_sealed(published, out, [p for p in pairs if p.closed is None])
    assert not processes_mentioning(str(tmp_path))


def check_deals(
    tmp_path: Path,
    out: Path,
    location: str,
    pairs: list[Any],
    rows: dict[int, GameRow],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every rated pair's key is published and re-derives its records' decks through ``replay
    --deal-key``; an open pair's key is nowhere (``ladder deals``, ``results --ladder``)."""
    capsys.readouterr()
    assert main(["ladder", "deals", *admin(location, out), "--json"]) == 0
    listed = {p["pair"]: p for p in json.loads(capsys.readouterr().out)}
    assert {p.deal_id for p in pairs} == set(listed)
    rated = [p for p in pairs if p.closed == "rated"]
    assert rated
    master = bytes.fromhex(json.loads((out / "deal.key").read_text())["deal_key"])
    for pair in pairs:
        derived = hmac.digest(master, b"gin-referee ladder pair v1\0" + pair.deal_id.encode(),
                              "sha256").hex()  # fmt: skip
        commitment = hashlib.sha256(b"gin-referee deal commitment v1\0" + bytes.fromhex(derived))
        assert listed[pair.deal_id]["deal_commitment"] == commitment.hexdigest()
        if pair.closed is None:
            assert listed[pair.deal_id]["deal_key"] is None
        else:
            assert listed[pair.deal_id]["deal_key"] == derived
    for pair in rated[:2]:
        for game_id in pair.games:
            result = rows[game_id].result
            assert result is not None
            record = out / "games" / Path(str(result["record"])).name
            if not record.exists():  # a PostgreSQL store keeps the records
                assert main(["fetch", "--store", location, "--tournament", "e2e",
                             "--out", str(tmp_path / "fetched")]) == 0  # fmt: skip
                record = tmp_path / "fetched" / "games" / f"{record.name.split('.')[0]}.jsonl"
            key = listed[pair.deal_id]["deal_key"]
            assert main(["replay", str(record), "--quiet", "--deal-key", key]) == 0
            other = next(p for p in rated if p.deal_id != pair.deal_id) if len(rated) > 1 else None
            if other is not None:  # another pair's key does not prove this pair's decks
                assert main(["replay", str(record), "--quiet", "--deal-key",
                             listed[other.deal_id]["deal_key"]]) == 1  # fmt: skip
    capsys.readouterr()
    results = ["results", "--ladder", "--format", "json"]
    results += ["--store", location, "--tournament", "e2e"] if "://" in location else [str(out)]
    assert main(results) == 0
    assert_sealed(capsys.readouterr().out, out, [p for p in pairs if p.closed is None])


def assert_sealed(shown: str, out: Path, open_pairs: list[Any]) -> None:
    """No key of an open pair, and not the ladder's own key, is in ``shown``."""
    master = bytes.fromhex(json.loads((out / "deal.key").read_text())["deal_key"])
    assert master.hex() not in shown
    for pair in open_pairs:
        key = hmac.digest(master, b"gin-referee ladder pair v1\0" + pair.deal_id.encode(),
                          "sha256")  # fmt: skip
        assert key.hex() not in shown
