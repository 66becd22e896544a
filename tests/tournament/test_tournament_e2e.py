"""Tournaments end to end: real bots, the store, resume after kill -9, faulty bots, SPRT."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.cli import main
from referee.match.record import read_record_lines
from referee.tournament.store import SqliteStore, StoreError
from tests.e2e.helpers import BOTS, GREEDY, RANDOM, bad, node_bot

pytestmark = pytest.mark.timeout(180)


def write_config(path: Path, bots: list[tuple[str, str]], games: int, **extra: object) -> Path:
    lines = [
        "[tournament]",
        'name = "t"',
        f"games_per_pairing = {games}",
        "seed = 5",
        f"concurrency = {extra.get('concurrency', 2)}",
        *([f"max_hands_per_game = {extra['max_hands']}"] if "max_hands" in extra else []),
        *([f'local_transport = "{extra["transport"]}"'] if "transport" in extra else []),
        *([f"reuse_bots = {extra['reuse']}"] if "reuse" in extra else []),
        "[time]",
        "move = 0.5",
        "bank = 2.0",
        f"startup = {extra.get('startup', 10.0)}",
    ]
    for name, command in bots:
        lines += ["[[bots]]", f'name = "{name}"', f"command = {json.dumps(command)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def game_results(out: Path) -> dict[int, tuple[object, ...]]:
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        rows = store.games()
    finally:
        store.close()
    return {
        r.spec.game_id: (r.status, r.result["winner"], tuple(r.result["totals"]))
        for r in rows
        if r.result is not None
    }


def results_so_far(out: Path) -> dict[int, tuple[object, ...]]:
    """:func:`game_results` while the tournament runs: none yet while its process holds the
    store's lock past the busy timeout (creating it; a loaded machine)."""
    try:
        return game_results(out)
    except StoreError as err:
        if "locked" not in str(err):
            raise
        return {}


def test_round_robin_of_the_sample_bots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bots = [("greedy", GREEDY), ("random", RANDOM), ("greedy2", GREEDY)]
    config = write_config(tmp_path / "t.toml", bots, games=2)
    assert main(["tournament", str(config), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "games: 6/6" in out and "head to head" in out
    results = game_results(tmp_path / "out")
    assert len(results) == 6 and all(status == "done" for status, *_ in results.values())
    assert main(["results", str(tmp_path / "out"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {b["name"] for b in data["bots"]} == {"greedy", "random", "greedy2"}
    assert sum(b["games"] for b in data["bots"]) == 12
    assert data["bots"][-1]["name"] == "random"
    assert main(["results", str(tmp_path / "out"), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("rank,bot,games")
    # Each finished game's record is compressed, and its stored result names that file.
    games_dir = tmp_path / "out" / "games"
    assert len(list(games_dir.glob("*.jsonl.gz"))) == 6 and not list(games_dir.glob("*.jsonl"))
    store = SqliteStore.open(tmp_path / "out" / "tournament.sqlite")
    try:
        named = [Path(row.result["record"]) for row in store.games() if row.result is not None]
    finally:
        store.close()
    assert sorted(p.name for p in named) == sorted(p.name for p in games_dir.iterdir())
    assert main(["replay", str(named[0]), "--quiet"]) == 0
    assert main(["report", str(tmp_path / "out")]) == 0
    assert_private(tmp_path / "out")


def assert_private(top: Path) -> None:
    """Everything the referee wrote under ``top`` is its user's alone: no bot of another run
    reads a record, a log, the store or a page (docs/security.md, "Private outputs")."""
    paths = [top, *top.rglob("*")]
    assert len(paths) > 10
    for path in paths:
        mode = path.stat().st_mode & 0o777
        assert mode in (0o700, 0o600), f"{path} is mode {mode:o}"


def test_the_hand_cap_per_game_is_configurable(tmp_path: Path) -> None:
    """With one hand per game and the standard target, every game stops at the cap and goes
    to the bot with more points (a draw when equal)."""
    config = write_config(tmp_path / "t.toml", [("g", GREEDY), ("r", RANDOM)], 2, max_hands=1)
    assert main(["tournament", str(config), "--out", str(tmp_path / "out")]) == 0
    store = SqliteStore.open(tmp_path / "out" / "tournament.sqlite")
    try:
        results = [row.result for row in store.games() if row.result is not None]
    finally:
        store.close()
    assert len(results) == 2
    for result in results:
        seats, totals = result["seats"], result["totals"]
        leader = None if totals[0] == totals[1] else seats[0 if totals[0] > totals[1] else 1]
        assert result["winner"] == leader
    games = []
    for record in (tmp_path / "out" / "games").glob("*.jsonl.gz"):
        lines = [line for _, line in read_record_lines(record)]
        assert sum(1 for line in lines if line["type"] == "hand") == 1
        games += [line for line in lines if line["type"] == "game"]
    assert [game["how"] for game in games] == ["hand_cap", "hand_cap"]


@pytest.mark.parametrize("transport", ["ipc", "tcp"])
def test_local_bots_connect_as_the_config_says(tmp_path: Path, transport: str) -> None:
    tracker = f"{sys.executable} {BOTS / 'tracker.py'} inline"
    bots = [("t1", tracker), ("t2", tracker)]
    config = write_config(tmp_path / "t.toml", bots, 2, transport=transport)
    assert main(["tournament", str(config), "--out", str(tmp_path / "out")]) == 0
    logs = sorted((tmp_path / "out" / "stderr").glob("*.stderr"))
    assert len(logs) == 4
    assert all(f"connecting over {transport}" in log.read_text() for log in logs)


def test_kept_bot_processes_play_exactly_the_games_fresh_ones_play(tmp_path: Path) -> None:
    bots = [("greedy", GREEDY), ("random", RANDOM), ("random2", RANDOM)]
    results, started = {}, {}
    for reuse in ("true", "false"):
        # Four hands a game at most: random against random seldom knocks (50 s uncapped).
        config = write_config(tmp_path / f"{reuse}.toml", bots, games=4, reuse=reuse, max_hands=4)
        out = tmp_path / reuse
        assert main(["tournament", str(config), "--out", str(out)]) == 0
        results[reuse] = game_results(out)
        started[reuse] = len(list((out / "stderr").glob("*.stderr")))  # one per process
    assert len(results["true"]) == 12 and results["true"] == results["false"]
    assert started["false"] == 24
    assert started["true"] < 24  # 2 workers, 3 pairings of 4 games: at least 9 games reused


def test_the_node_bot_is_kept_between_games(tmp_path: Path) -> None:
    """The Node sample bot asks for multi_match: two kept processes play its four games (two
    duplicate pairs), cleanly."""
    bots = [("node", node_bot()), ("greedy", GREEDY)]
    config = write_config(tmp_path / "t.toml", bots, games=4, concurrency=1)
    out = tmp_path / "out"
    assert main(["tournament", str(config), "--out", str(out)]) == 0
    results = game_results(out)
    assert len(results) == 4 and all(status == "done" for status, *_ in results.values())
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        assert store.faults() == []
    finally:
        store.close()
    node_logs = list((out / "stderr").glob("*.node.stderr"))
    # Two processes, alternating: neither plays both games of a duplicate pair.
    assert len(node_logs) == 2, node_logs
    assert [log.read_text().count("node-bot: ") for log in node_logs] == [2, 2]  # match_ends


@pytest.mark.parametrize("mode", ["kept_leaves", "kept_bye"])
def test_a_bot_that_asks_multi_match_and_leaves_costs_only_itself(
    tmp_path: Path, mode: str
) -> None:
    bots = [("greedy", GREEDY), ("liar", bad(mode, 10_000))]
    config = write_config(tmp_path / "t.toml", bots, games=4, concurrency=1)
    assert main(["tournament", str(config), "--out", str(tmp_path / "out")]) == 0
    store = SqliteStore.open(tmp_path / "out" / "tournament.sqlite")
    try:
        rows = store.games()
    finally:
        store.close()
    assert len(rows) == 4 and all(r.status == "done" and r.result is not None for r in rows)
    for row in rows:
        assert row.result is not None
        seats = row.result["seats"]
        assert all(seats[fault["seat"]] == "liar" for fault in row.result["faults"])
        if row.result["faults"]:
            assert row.result["winner"] == "greedy"


def test_a_bot_that_crashes_every_game_does_not_stop_the_tournament(tmp_path: Path) -> None:
    bots = [("greedy", GREEDY), ("crasher", bad("crash", 1))]
    config = write_config(tmp_path / "t.toml", bots, games=4)
    assert main(["tournament", str(config), "--out", str(tmp_path / "out")]) == 0
    results = game_results(tmp_path / "out")
    assert len(results) == 4 and all(winner == "greedy" for _s, winner, _t in results.values())


def _kill_marked(marker: str) -> None:
    """Kill orphaned bots of a kill -9'ed referee (they carry a marker in their environment)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                continue


def test_resume_after_kill_9_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    marker = f"GIN_TEST_MARKER={os.getpid()}{time.monotonic_ns()}"
    bots = [
        ("greedy", f"env {marker} {GREEDY}"),
        ("random", f"env {marker} {RANDOM}"),
        ("greedy2", f"env {marker} {GREEDY}"),
    ]
    config = write_config(tmp_path / "t.toml", bots, games=4)
    reference = tmp_path / "reference"
    assert main(["tournament", str(config), "--out", str(reference)]) == 0
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--out", str(out)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = 1 + int.from_bytes(os.urandom(1), "big") % 8  # a random moment: after 1..8 games
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "tournament.sqlite").exists() and len(results_so_far(out)) >= target:
                break
            time.sleep(0.05)  # another process's progress: nothing to await
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        _kill_marked(marker)
    before = game_results(out)
    assert 0 < len(before) < 12 or proc.returncode != -signal.SIGKILL
    assert main(["tournament", str(config), "--out", str(out), "--resume"]) == 0
    after = game_results(out)
    assert after == game_results(reference)
    for game_id, value in before.items():
        assert after[game_id] == value  # kept exactly as recorded


def test_sprt_accepts_a_clearly_better_bot_and_rejects_a_clearly_worse_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--elo0", "0", "--elo1", "50", "--max-games", "200", "--move-time", "0.5"]
    assert main(["sprt", "--candidate", GREEDY, "--baseline", RANDOM, *common,
                 "--out", str(tmp_path / "up")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "verdict: accept" in out
    assert main(["sprt", "--candidate", RANDOM, "--baseline", GREEDY, *common,
                 "--out", str(tmp_path / "down")]) == 0  # fmt: skip
    assert "verdict: reject" in capsys.readouterr().out


def test_results_of_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", str(tmp_path)]) == 2
    assert "no tournament store" in capsys.readouterr().err


def test_a_different_config_in_the_same_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    first = write_config(tmp_path / "a.toml", [("greedy", GREEDY), ("random", RANDOM)], games=2)
    assert main(["tournament", str(first), "--out", str(out)]) == 0
    second = write_config(tmp_path / "b.toml", [("greedy", GREEDY), ("random", RANDOM)], games=4)
    capsys.readouterr()
    assert main(["tournament", str(second), "--out", str(out)]) == 2
    assert "another tournament configuration" in capsys.readouterr().err
