"""A real ladder run: the sample bots as local entrants played by workers, remote bots (CURVE)
that join and leave, a new version uploaded, a worker killed (SIGKILL) in the middle of a game,
and the ladder itself killed in the middle of a game, then run again: what was played, what
was replayed, that nothing was recorded or rated twice, and that every closed pair's revealed
deal key proves its records.

Run: ``python -m bench.ladder_run [--phase 40] [--workers 3] [--out DIR]``. Timeline
(``--phase`` seconds each): the ladder starts (``--workers N``: N - 1 worker processes beside
it) with three local entrants (greedy, random, and ``mine``, a directory whose ``bot.py`` runs
the greedy bot); remote ``alice`` (one connection, ``multi_match``) and ``bob`` (a connection
per game, 6 games, then gone) join; ``mine`` is uploaded again, changed (v2) and ``random``
retired; a worker is killed with SIGKILL while it plays a game; the ladder is killed with
SIGKILL while a game is in play and started again; after a last phase it is stopped with
SIGINT. Figures go to docs/performance.md ("The ladder").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import free_port, machine, serving_line
from referee.match import RecordError, replay_record
from referee.net.keys import write_keypair
from referee.tournament.ladder import LadderBook, PairLedger
from referee.tournament.store import GameRow, SqliteStore

PY = sys.executable
LOOP = Path(__file__).resolve().parents[1] / "tests" / "bots" / "remote_loop.py"
CONFIG = """[ladder]
name = "real"
concurrency = 2
poll = 0.5
[time]
move = 1.0
bank = 10.0
startup = 10.0
"""
ENTRY = "import sys\nfrom sample_bots.greedy_bot import main\n\nsys.exit(main())\n"


def cli(*argv: str) -> str:
    """Run a ``gin-referee`` command to completion; its output (it must succeed)."""
    done = subprocess.run([PY, "-m", "referee", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"gin-referee {' '.join(argv)}: {done.stderr}")
    return done.stdout


LEASE = 10.0
"""The claims' lease (s): how long a killed worker's game waits to be claimed again."""


def start(
    config: Path, out: Path, home: Path, endpoint: str, workers: int
) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [PY, "-m", "referee", "ladder", "run", str(config), "--out", str(out), "--bind",
         endpoint, "--key-dir", str(home), "--workers", str(workers), "--lease", str(LEASE)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    line = serving_line(proc.stderr.readline)
    return proc, line.rsplit("referee key ", 1)[1].strip()


def counts(path: Path) -> dict[str, int]:
    store = SqliteStore.open(path)
    try:
        return store.counts()
    finally:
        store.close()


def claimed(path: Path) -> dict[int, str]:
    """The games in play and who claimed them (the ``owner`` column, ``HOST-PID-HEX``)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT game_id, owner FROM games WHERE status = 'claimed'")
        return {int(r[0]): str(r[1]) for r in rows.fetchall()}


def wait_claimed(path: Path, within: float, by: set[str] | None = None) -> int | None:
    """Poll the store (another process's progress) until a game between local entrants is in
    play (a remote one may not come back after the kill, and its pair would wait for it), by
    one of the owners ``by`` if given; its game id (None: none within the time)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with SqliteStore.open(path) as store:
            rows = {r.spec.game_id: r for r in store.games()}
        local = ("greedy.", "mine.")
        for game, owner in claimed(path).items():
            spec = rows[game].spec
            both = spec.seat0.startswith(local) and spec.seat1.startswith(local)
            if both and (by is None or owner in by):
                return game
        time.sleep(0.05)
    return None


def kill_a_worker(path: Path, within: float) -> tuple[int | None, int]:
    """SIGKILL a worker while it plays a game: the game's id, and the worker's pid."""
    with SqliteStore.open(path) as store:
        workers = {r.owner: r.pid for r in store.runners(now=time.time()) if r.role == "worker"}
    game = wait_claimed(path, within, by=set(workers)) if workers else None
    if game is None:
        return None, 0
    pid = workers[claimed(path)[game]]
    os.kill(pid, signal.SIGKILL)
    return game, pid


def proved(out: Path, book: LadderBook, games: dict[int, GameRow]) -> tuple[int, int]:
    """Records of closed pairs that ``replay --deal-key`` verifies with the pair's revealed key,
    and those it does not."""
    good = bad = 0
    for pair in PairLedger(book).rows():
        key = bytes.fromhex(pair.deal_key) if pair.deal_key else None
        for game in pair.games if key else ():
            result = games[game].result
            if games[game].status != "done" or result is None:
                continue
            try:
                replay_record(out / "games" / Path(str(result["record"])).name,
                              verify_deals=True, deal_key=key)  # fmt: skip
                good += 1
            except RecordError:
                bad += 1
    return good, bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--phase", type=float, default=40.0, help="seconds per phase")
    parser.add_argument("--out", type=Path, default=None, help="keep the run here")
    parser.add_argument("--workers", type=int, default=3, help="ladder run --workers N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.out or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        base.chmod(0o755)  # a root referee's bots read their files as uids of their own
        out, home, path = base / "ladder", base / "home", base / "ladder" / "tournament.sqlite"
        (base / "ladder.toml").write_text(CONFIG)
        mine = base / "mine" / "bot.py"
        mine.parent.mkdir()
        mine.write_text(ENTRY)
        keys = {n: write_keypair(base / "keys", n) for n in ("alice", "bob")}
        files = ["--bot-dir", str(mine.parent)]
        for name, command, where in (("greedy", f"{PY} -m sample_bots.greedy_bot", []),
                                     ("random", f"{PY} -m sample_bots.random_bot", []),
                                     ("mine", f"{PY} bot.py", files)):  # fmt: skip
            cli("ladder", "add", str(out), name, "--command", command, *where)
        tokens = {}
        for name, pair in keys.items():
            added = json.loads(cli("ladder", "add", str(out), name, "--remote",
                                   f"--public-key={pair.public_z85}", "--json"))  # fmt: skip
            tokens[name] = added["token"]
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        began = time.monotonic()
        pids: list[int] = []
        ladder, server_key = start(base / "ladder.toml", out, home, endpoint, args.workers)
        pids.append(ladder.pid)
        remotes: list[subprocess.Popen[bytes]] = []
        procs: list[subprocess.Popen[str] | subprocess.Popen[bytes]]
        try:
            time.sleep(args.phase)  # the phases are wall-clock time by design
            for name, mode in (("alice", "multi"), ("bob", "")):
                env = {**os.environ, "GIN_REFEREE_SERVER_KEY": server_key,
                       "GIN_BOT_PUBLIC_KEY": keys[name].public_z85,
                       "GIN_BOT_SECRET_KEY": keys[name].secret_z85}  # fmt: skip
                argv = [PY, str(LOOP), endpoint, tokens[name], name, "6", *([mode] if mode else [])]
                remotes.append(subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL))
            time.sleep(args.phase)
            mine.write_text(ENTRY + "# version 2\n")
            cli("ladder", "add", str(out), "mine", "--command", f"{PY} bot.py", *files)
            cli("ladder", "retire", str(out), "random")
            time.sleep(args.phase)
            worker_game, worker_pid = kill_a_worker(path, 60.0)
            time.sleep(args.phase)
            killed_in_play = wait_claimed(path, 60.0) is not None
            before = counts(path)
            ladder.kill()
            ladder.communicate(timeout=30)
            ladder, _ = start(base / "ladder.toml", out, home, endpoint, args.workers)
            pids.append(ladder.pid)
            time.sleep(args.phase)
            ladder.send_signal(signal.SIGINT)
            printed, _ = ladder.communicate(timeout=60)
            code = ladder.returncode
        finally:
            procs = [ladder, *remotes]
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.wait(30)
        seconds = time.monotonic() - began
        store = SqliteStore.open(path)
        try:
            games = store.games()
        finally:
            store.close()
        by_id = {g.spec.game_id: g for g in games}
        with LadderBook.open(path) as book:
            history = book.history()
            players = book.players()
            good, bad = proved(out, book, by_id)
            statuses = [p.closed or "open" for p in PairLedger(book).rows()]
        with contextlib.closing(sqlite3.connect(path)) as conn:
            owners = conn.execute("SELECT owner FROM games WHERE status = 'done'").fetchall()
        ladder_pids = {str(p) for p in pids}
        by_ladder = sum(str(o[0]).rsplit("-", 2)[-2] in ladder_pids for o in owners)
        done = [g for g in games if g.status == "done"]
        deals = [r.deal_id for r in history]
        faults = sum(len(g.result["faults"]) for g in done if g.result is not None)
        replayed = sum(g.attempts > 1 for g in done)
        twice = sum(deals.count(d) != 2 for d in set(deals))
        unfinished = sum(
            any(g.spec.deal_id == d and g.status != "done" for g in games) for d in set(deals)
        )
        print(f"machine: {machine()}, {os.cpu_count()} cores; {seconds:.0f} s of ladder")
        print(
            f"games recorded {len(done)} ({60 * len(done) / seconds:.1f} a minute),"
            f" open {len(games) - len(done)}, faults {faults}; pairs rated {len(set(deals))}"
        )
        print(
            f"killed with a game in play: {killed_in_play} (counts then: {before});"
            f" games claimed twice (replayed after the kill): {replayed}"
        )
        print(
            f"pairs rated more than once: {twice}; rated pairs with a game not done: {unfinished}"
        )
        print("players: " + ", ".join(f"{p.player} ({p.status})" for p in players))
        lost = by_id.get(worker_game) if worker_game is not None else None
        lost_pair = [r for r in history if lost is not None and r.deal_id == lost.spec.deal_id]
        print(
            f"worker {worker_pid} killed playing game {worker_game}: then"
            f" {None if lost is None else (lost.status, lost.attempts)} (status, attempts);"
            f" its pair's rating rows: {len(lost_pair)}"
        )
        print(f"games played by the ladder's processes {by_ladder}, by its workers"
              f" {len(owners) - by_ladder}")  # fmt: skip
        print("pairs: " + ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses))))
        print(f"records proved by their pair's revealed key: {good}; not proved: {bad}")
        print(f"ladder run's exit code after SIGINT: {code}")
        print(printed.strip().split("\nladder ", 1)[-1] if printed else "")


if __name__ == "__main__":
    main()
