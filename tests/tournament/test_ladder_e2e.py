"""A ladder end to end, with real bot processes: entrants added and a new version uploaded
while it runs, a remote bot (CURVE) joining, the leaderboard over HTTP and from ``results
--ladder``, a clean stop that leaves no process behind; and a ladder killed mid-game that,
run again, loses nothing and plays nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from bench.common import free_port
from referee.cli import main
from referee.net.keys import write_keypair
from referee.tournament.ladder import LadderBook
from referee.tournament.store import GameRow, SqliteStore
from tests.e2e.daemon import text, wait_for
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(240)
LOOP = Path(__file__).resolve().parents[1] / "bots" / "remote_loop.py"
CONFIG = """
[ladder]
name = "e2e"
concurrency = {concurrency}
poll = 0.2
max_hands_per_game = 6
[time]
move = 0.5
bank = 3.0
startup = {startup}
"""
ENTRY = "import sys\nfrom sample_bots.greedy_bot import main\n\nsys.exit(main())\n"
RANDOM_ENTRY = "import sys\nfrom sample_bots.random_bot import main\n\nsys.exit(main())\n"


def setup(tmp_path: Path, concurrency: int, startup: float = 15.0) -> tuple[Path, Path, Path]:
    """The config, the ladder's directory and an entrant's program (``mine/bot.py``: its
    versions); a random bot's is ``rand/bot.py`` in ``tmp_path`` (each is added with
    :func:`local`: its directory snapshotted into the ladder's, whose path the sandbox's
    command line names, so that no process of theirs can outlive it unseen)."""
    config = tmp_path / "ladder.toml"
    config.write_text(CONFIG.format(concurrency=concurrency, startup=startup))
    entry = tmp_path / "mine" / "bot.py"
    for path, source in ((entry, ENTRY), (tmp_path / "rand" / "bot.py", RANDOM_ENTRY)):
        path.parent.mkdir()
        path.write_text(source)
    return config, tmp_path / "out", entry


def local(directory: Path) -> list[str]:
    """``ladder add``'s words for a Python entrant whose files are ``directory``."""
    return ["--bot-dir", str(directory), "--command", f"{PY} bot.py"]


def start(config: Path, out: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``gin-referee ladder run``; the process and its serving line."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [PY, "-m", "referee", "ladder", "run", str(config), "--out", str(out), "--bind",
         endpoint, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    for _ in range(10):
        line = proc.stderr.readline()
        if "serving on" in line or not line:
            break
    assert "serving on" in line, line
    return proc, line


def ratings(out: Path) -> dict[str, tuple[float, float, int]]:
    with LadderBook.open(out / "tournament.sqlite") as book:
        return book.current()


def rated_deals(path: Path) -> set[str]:
    with LadderBook.open(path) as book:
        return book.rated_deals()


def started_games(out: Path) -> list[GameRow]:
    """The done games, each checked to have started: no start-up fault ("no_start")."""
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        done = [row for row in store.games() if row.status == "done"]
    finally:
        store.close()
    assert done and all(r.result is not None and r.result["reason"] != "no_start" for r in done)
    return done


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out, err


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line mentions ``text`` (this test's own files)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = (entry / "stat").read_text().split(") ")[-1][:1]
            except (OSError, IndexError):
                continue
            if text in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def test_a_ladder_takes_entrants_and_versions_while_it_runs(tmp_path: Path) -> None:
    config, out, entry = setup(tmp_path, concurrency=2)
    assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
    assert main(["ladder", "add", str(out), "rand", *local(tmp_path / "rand")]) == 0
    keys = write_keypair(tmp_path / "keys", "alice")
    spectate = f"127.0.0.1:{free_port()}"
    live = ["--spectate", spectate, "--spectate-lag", "0"]  # the leaderboard, read once rated
    ladder, line = start(config, out, "--key-dir", str(tmp_path / "home"), *live)
    server_key = line.rsplit("referee key ", 1)[1].strip()
    remote: subprocess.Popen[bytes] | None = None
    try:
        wait_for("a first rated pair", lambda: len(ratings(out)) == 2, within=90)
        # a third local entrant and a remote one join while it runs
        (tmp_path / "greedy").mkdir()
        (tmp_path / "greedy" / "bot.py").write_text(ENTRY + "# another program\n")
        assert main(["ladder", "add", str(out), "greedy", *local(tmp_path / "greedy")]) == 0
        assert main(["ladder", "add", str(out), "alice", "--remote", "--token",
                     "alice-token-123", f"--public-key={keys.public_z85}"]) == 0  # fmt: skip
        env = {
            **os.environ,
            "GIN_REFEREE_SERVER_KEY": server_key,
            "GIN_BOT_PUBLIC_KEY": keys.public_z85,
            "GIN_BOT_SECRET_KEY": keys.secret_z85,
        }
        endpoint = line.split("serving on ", 1)[1].split(";", 1)[0]
        log = out / "referee.log.jsonl"
        wait_for("alice accepted", lambda: "remote player alice.v1 may connect" in text(log))
        remote = subprocess.Popen(
            [PY, str(LOOP), endpoint, "alice-token-123", "alice", "1000", "multi"], env=env
        )
        # a new version of "mine": the program changed
        entry.write_text(ENTRY + "# version 2\n")
        assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
        wanted = {"mine.v2", "alice.v1", "greedy.v1"}
        wait_for("the new players rated", lambda: wanted <= set(ratings(out)), within=150)
        # alice uploads a new version: a new key and token; her old connection is sent away
        new_keys = write_keypair(tmp_path / "keys2", "alice")
        assert main(["ladder", "add", str(out), "alice", "--remote", "--token",
                     "alice-token-456", f"--public-key={new_keys.public_z85}"]) == 0  # fmt: skip
        assert remote.wait(60) == 0  # the referee's bye, once alice.v1 was out of its pair
        wait_for("alice.v2 accepted", lambda: "remote player alice.v2 may connect" in text(log))
        env.update(GIN_BOT_PUBLIC_KEY=new_keys.public_z85, GIN_BOT_SECRET_KEY=new_keys.secret_z85)
        remote = subprocess.Popen(
            [PY, str(LOOP), endpoint, "alice-token-456", "alice", "1000", "multi"], env=env
        )
        wait_for("alice.v2 rated", lambda: "alice.v2" in ratings(out), within=120)
        with urllib.request.urlopen(f"http://{spectate}/leaderboard.json", timeout=10) as reply:
            published: dict[str, Any] = json.loads(reply.read())
        assert main(["ladder", "retire", str(out), "rand"]) == 0
    finally:
        if ladder.poll() is None:
            printed, _ = stop(ladder)
        if remote is not None:
            remote.wait(30)
    assert "pair ladder/" in printed and "mine.v2" in printed  # the final leaderboard
    names = {row["player"]: row for row in published["players"]}
    assert {"mine.v1", "mine.v2", "rand.v1", "greedy.v1", "alice.v1", "alice.v2"} <= set(names)
    assert names["mine.v1"]["status"] == "superseded" and names["mine.v2"]["version"] == 2
    assert names["alice.v1"]["status"] == "superseded" and names["alice.v2"]["kind"] == "remote"
    shown = json.dumps(published)
    assert "alice-token" not in shown and str(entry) not in shown
    assert [r["rank"] for r in published["players"]] == list(range(1, len(names) + 1))
    values = [r["rank_value"] for r in published["players"]]
    assert values == sorted(values, reverse=True)
    # every stored game is done or was given back: none played twice, each pair rated once
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        rows = store.games()
    finally:
        store.close()
    with LadderBook.open(out / "tournament.sqlite") as book:
        history = book.history()
        statuses = {p.player: p.status for p in book.players()}
    assert statuses["rand.v1"] == "retired"
    started_games(out)
    deals = [r.deal_id for r in history]
    assert all(deals.count(d) == 2 for d in deals)  # two rows (one per player) per pair
    for deal in set(deals):
        games = [r for r in rows if r.spec.deal_id == deal]
        assert len(games) == 2 and all(g.status == "done" for g in games)
    assert all(r.status in ("done", "pending") for r in rows)
    assert not processes_mentioning(str(tmp_path))  # no bot process outlives the ladder


def test_results_ladder_prints_the_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, out, entry = setup(tmp_path, concurrency=1)
    assert main(["results", str(tmp_path), "--ladder"]) == 2  # no store there
    assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
    assert main(["ladder", "add", str(out), "rand", *local(tmp_path / "rand")]) == 0
    ladder, _ = start(config, out, "--insecure")
    try:
        second = subprocess.run(
            [PY, "-m", "referee", "ladder", "run", str(config), "--out", str(out), "--insecure",
             "--bind", f"tcp://127.0.0.1:{free_port()}"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert second.returncode == 2 and "is being played by another referee" in second.stderr
        wait_for("a rated pair", lambda: len(ratings(out)) == 2, within=90)
        # rand's source changes without a new version: rand.v1 plays on, from its snapshot
        (tmp_path / "rand" / "bot.py").write_text(RANDOM_ENTRY + "# changed in place\n")
        played = ratings(out)["rand.v1"][2]
        wait_for("another pair", lambda: ratings(out)["rand.v1"][2] > played, within=90)
        assert "is not played" not in text(out / "referee.log.jsonl")
    finally:
        stop(ladder)
    capsys.readouterr()
    assert main(["ladder", "history", str(out), "mine.v1", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert history and history[0]["opponent"] == "rand.v1" and history[0]["sigma"] < 25 / 3
    assert main(["ladder", "history", str(out), "nobody.v1"]) == 2
    capsys.readouterr()
    assert main(["results", str(out), "--ladder", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["ladder"] == "e2e" and board["pairs_rated"] >= 1
    assert {r["player"] for r in board["players"]} == {"mine.v1", "rand.v1"}
    assert main(["results", str(out), "--ladder", "--format", "csv"]) == 2
    assert main(["results", str(out)]) == 0  # the tournament's standings, per version
    assert main(["report", str(out), "--no-games"]) == 0
    page = (out / "report.html").read_text()
    assert "Rating history" in page and "mine.v1" in page and "<polyline" in page
    started_games(out)
    assert not processes_mentioning(str(tmp_path))


def test_a_ladder_killed_mid_game_loses_nothing_and_plays_nothing_twice(tmp_path: Path) -> None:
    config, out, entry = setup(tmp_path, concurrency=1)
    assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
    assert main(["ladder", "add", str(out), "rand", *local(tmp_path / "rand")]) == 0
    path = out / "tournament.sqlite"

    def counts() -> dict[str, int]:
        store = SqliteStore.open(path)
        try:
            return store.counts()
        finally:
            store.close()

    ladder, _ = start(config, out, "--insecure")
    try:
        wait_for("a game in play after one done",
                 lambda: counts()["done"] >= 1 and counts()["claimed"] == 1, within=90)  # fmt: skip
        ladder.kill()  # SIGKILL: the game in play is neither recorded nor given back
        ladder.communicate(timeout=30)
    finally:
        if ladder.poll() is None:
            ladder.kill()
            ladder.wait(10)
    store = SqliteStore.open(path)
    try:
        killed = [r for r in store.games() if r.status == "claimed"]
        done_before = {r.spec.game_id for r in store.games() if r.status == "done"}
    finally:
        store.close()
    assert len(killed) == 1
    again, _ = start(config, out, "--insecure")
    game = killed[0].spec

    def replayed() -> bool:
        store = SqliteStore.open(path)
        try:
            return any(r.spec.game_id == game.game_id and r.status == "done" for r in store.games())
        finally:
            store.close()

    try:
        wait_for("the killed game played again", replayed, within=90)
        wait_for("its pair rated", lambda: game.deal_id in rated_deals(path), within=90)
    finally:
        stop(again)
    store = SqliteStore.open(path)
    try:
        rows = {r.spec.game_id: r for r in store.games()}
    finally:
        store.close()
    assert rows[game.game_id].attempts == 2  # claimed twice, recorded once
    assert done_before <= {g for g, r in rows.items() if r.status == "done"}
    with LadderBook.open(path) as book:
        deals = [r.deal_id for r in book.history()]
    assert deals.count(game.deal_id) == 2  # rated once (a row per player)
    assert all(deals.count(d) == 2 for d in deals)
    started_games(out)
    assert not processes_mentioning(str(tmp_path))


def test_a_remote_bot_that_leaves_mid_pair_stalls_nobody(tmp_path: Path) -> None:
    """alice plays one game and leaves: her pair's second game waits for her only the start-up
    time, she loses it by a start-up fault, the pair is rated, and the others play on."""
    config, out, entry = setup(tmp_path, concurrency=1, startup=2.0)
    assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
    assert main(["ladder", "add", str(out), "alice", "--remote", "--token", "alice-token-1"]) == 0
    ladder, line = start(config, out, "--insecure")
    endpoint = line.split("serving on ", 1)[1].split(";", 1)[0]
    log = out / "referee.log.jsonl"
    wait_for("alice accepted", lambda: "remote player alice.v1 may connect" in text(log))
    remote = subprocess.Popen([PY, str(LOOP), endpoint, "alice-token-1", "alice", "1"])
    try:
        wait_for("alice's pair rated", lambda: "alice.v1" in ratings(out), within=90)
        assert remote.wait(30) == 0  # she played her one game and left
        assert main(["ladder", "add", str(out), "rand", *local(tmp_path / "rand")]) == 0
        wait_for("the others play on", lambda: ratings(out).get("rand.v1", (0, 0, 0))[2] >= 2,
                 within=90)  # fmt: skip
    finally:
        stop(ladder)
        if remote.poll() is None:
            remote.kill()
            remote.wait(10)
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        games, faults = store.games(), store.faults()
    finally:
        store.close()
    hers = [g for g in games if "alice.v1" in (g.spec.seat0, g.spec.seat1) and g.status == "done"]
    assert len(hers) == 2  # one pair: she was never chosen again once gone
    second = max(hers, key=lambda g: g.spec.game_id)
    assert second.result is not None and second.result["winner"] == "mine.v1"
    assert any(f["game_id"] == second.spec.game_id and f["kind"] == "startup" for f in faults)
    others = [g for g in games if g.status == "done" and g.spec.game_id != second.spec.game_id]
    assert all(g.result is not None and g.result["reason"] != "no_start" for g in others)
    assert not processes_mentioning(str(tmp_path))
