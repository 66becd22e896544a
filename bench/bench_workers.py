"""Tournaments on several referee processes: games/s by number of workers and store, store
transactions per game, and the claims/s one PostgreSQL server sustains with many light clients.

Run: ``python -m bench.bench_workers [--rounds 3] [--games 40] [--clients 4,16,64]``.

1. **games/s** and **CPU ms per game** (every referee process and bot, from
   ``RUSAGE_CHILDREN``; on a busy shared machine the CPU cost is the steadier figure): a
   two-bot tournament of ``--games`` games of ``bench.instant_bot`` (answers at once: the
   referee and process start-up are all the cost), ``concurrency = 4``, played by the
   ``tournament`` command as a subprocess: ``--workers 1`` (one process, SQLite: the default),
   ``--workers 2`` on SQLite, and both on a PostgreSQL store. Rounds interleave the four
   series; medians and the spread (min-max) are reported.
2. **transactions per game**: ``pg_stat_database.xact_commit`` over each PostgreSQL run, divided
   by its games (claims, records, renewals, heartbeats, the idle polls at the end, start-up).
3. **claims/s**: ``N`` client threads over ``N`` connections each loop ``claim`` + ``record``
   (an empty result, no faults: the lightest game) on one tournament of 20,000 games; the
   server runs with ``fsync=on`` and ``synchronous_commit=on`` (its defaults), so every commit
   waits for the WAL flush (on this VM's virtual disk). Client threads share this process's
   GIL, so the figure is a floor of what the server sustains;
4. **pgbench claims/s**: the same two statements (the claim's SQL verbatim) from ``pgbench``,
   many light C clients (``-j 2``), 50,000 games: what one server sustains when the clients
   cost almost nothing (on this 2-core VM they still share the cores with the server).

The server is started in a temporary directory as the tests do (``tests/pgserver.py``). Prints
one JSON object on stdout and readable lines on stderr.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

from bench.common import machine
from referee.tournament.store import GameSpec, open_store
from tests.pgserver import PgServer, pg_server

INSTANT = f"{sys.executable} -m bench.instant_bot"


def _config(path: Path, games: int) -> Path:
    path.write_text(
        "\n".join([
            "[tournament]", 'name = "bench"', f"games_per_pairing = {games}", "seed = 1",
            "concurrency = 4", "[time]", "move = 5.0", "bank = 60.0", "startup = 30.0",
            "[[bots]]", 'name = "a"', f"command = {json.dumps(INSTANT)}",
            "[[bots]]", 'name = "b"', f"command = {json.dumps(INSTANT)}",
        ]) + "\n"
    )  # fmt: skip
    return path


def _commits(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def _tournament(config: Path, out: Path, workers: int, store: str | None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (the referees and their bots, reaped) of one run."""
    argv = [sys.executable, "-m", "referee", "tournament", str(config), "--out", str(out),
            "--workers", str(workers), "--log-level", "warning"]  # fmt: skip
    if store is not None:
        argv += ["--store", store]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def games_per_second(server: PgServer, rounds: int, games: int) -> dict[str, object]:
    """Series ``sqlite-1``, ``sqlite-2``, ``pg-1``, ``pg-2``: games/s per round and CPU ms per
    game (referees and bots: the machine's cost of a game), and the PG runs' transactions per
    game."""
    rates: dict[str, list[float]] = {}
    per_game: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(Path(tmp) / "t.toml", games)
        _tournament(config, Path(tmp) / "warm", 1, None)  # warm-up: imports, page cache
        for r in range(rounds):
            for kind in ("sqlite", "pg"):
                for workers in (1, 2):
                    url = server.database() if kind == "pg" else None
                    before = 0 if url is None else _commits(url)
                    out = Path(tmp) / f"{kind}-{workers}-{r}"
                    seconds, cpu = _tournament(config, out, workers, url)
                    rates.setdefault(f"{kind}-{workers}", []).append(games / seconds)
                    rates.setdefault(f"{kind}-{workers}-cpu_ms_per_game", []).append(
                        1000 * cpu / games
                    )
                    if url is not None:
                        per_game.append((_commits(url) - before) / games)
    summary: dict[str, object] = {
        name: {"median": round(statistics.median(v), 2), "min": round(min(v), 2),
               "max": round(max(v), 2)}
        for name, v in rates.items()
    }  # fmt: skip
    summary["pg_transactions_per_game"] = {
        "median": round(statistics.median(per_game), 1), "min": round(min(per_game), 1),
        "max": round(max(per_game), 1),
    }  # fmt: skip
    return summary


def claims_per_second(server: PgServer, clients: int, seconds: float) -> float:
    """claim + record pairs per second over ``clients`` connections for ``seconds``."""
    url = server.database()
    games = [GameSpec(i, "a-vs-b", "a", "b", f"d{i}", None) for i in range(20000)]
    with open_store(url, tournament="bench") as store:
        store.init_tournament(config={}, config_hash="h", games=games, now=0.0)
    done = [0] * clients
    stop = threading.Event()
    ready = threading.Barrier(clients + 1)

    def client(k: int) -> None:
        with open_store(url, tournament="bench") as store:
            ready.wait()
            while not stop.is_set():
                claim = store.claim(owner=f"c{k}", lease_seconds=60.0, now=time.time())
                if claim is None:
                    return
                store.record(claim, result={}, faults=[], timings=None, now=time.time())
                done[k] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    start = time.perf_counter()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return sum(done) / (time.perf_counter() - start)


_PGBENCH = """WITH next AS MATERIALIZED (SELECT game_id FROM games WHERE tournament = 'pgb'
 AND status <> 'done' AND (status = 'pending' OR lease_expires <= 0) ORDER BY game_id LIMIT 1
 FOR UPDATE SKIP LOCKED) UPDATE games AS g SET status = 'claimed', owner = 'p',
 lease = md5(random()::text), lease_expires = 1e12, attempts = g.attempts + 1 FROM next
 WHERE g.tournament = 'pgb' AND g.game_id = next.game_id
 RETURNING g.game_id AS gid, g.lease AS lease \\gset
UPDATE games SET status = 'done', result = '{}', recorded_at = 1 WHERE tournament = 'pgb'
 AND game_id = :gid AND status = 'claimed' AND lease = ':lease';
"""


def pgbench_claims(server: PgServer, clients: int, seconds: float) -> float:
    """The store's claim and record statements from ``pgbench`` (C, one thread per core):
    claim + record pairs per second with ``clients`` connections."""
    url = server.database()
    games = [GameSpec(i, "a-vs-b", "a", "b", f"d{i}", None) for i in range(50_000)]
    with open_store(url, tournament="pgb") as store:
        store.init_tournament(config={}, config_hash="h", games=games, now=0.0)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "claim.sql"
        script.write_text(_PGBENCH.replace("\n ", " "))
        done = subprocess.run(
            [str(server.bindir / "pgbench"), "-n", "-c", str(clients), "-j", "2", "-T",
             str(round(seconds)), "-f", str(script), url],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    for line in done.stdout.splitlines():
        if line.startswith("tps = "):
            return float(line.split()[2])
    raise RuntimeError(f"pgbench printed no tps: {done.stdout}\n{done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--clients", default="4,16,64")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    result: dict[str, object] = {"machine": machine()}
    with pg_server("max_connections=200") as server:
        result["games_per_second"] = games_per_second(server, args.rounds, args.games)
        print(f"games/s: {json.dumps(result['games_per_second'])}", file=sys.stderr)
        for key, measure in (("claims_per_second", claims_per_second),
                             ("pgbench_claims_per_second", pgbench_claims)):  # fmt: skip
            samples: dict[str, list[float]] = {}
            for _ in range(args.rounds):
                for n in (int(c) for c in args.clients.split(",")):
                    samples.setdefault(str(n), []).append(measure(server, n, args.seconds))
            result[key] = {
                n: {"median": round(statistics.median(v)), "min": round(min(v)),
                    "max": round(max(v))}
                for n, v in samples.items()
            }  # fmt: skip
            print(f"{key} by clients: {json.dumps(result[key])}", file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
