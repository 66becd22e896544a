"""A referee frozen mid-game (SIGSTOP, then SIGCONT: Ctrl-Z and ``fg``, a frozen VM) charges
no bot: the results equal an unpaused run of the same seeds game by game, nobody is faulted,
and the stall is stored with each game it touched (issue #34, docs/design/faults.md).

Real processes: the referee (and, with ``--workers``, one of its workers) is a subprocess
stopped for the whole pause while its bots, which are not stopped, keep their links
(``LINK_PATIENCE_MS``) and answer into the frozen referee's sockets."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.store import SqliteStore, StoreError
from tests.e2e.daemon import Procs, wait_for
from tests.e2e.helpers import BOTS, GREEDY, PY
from tests.tournament.test_tournament_e2e import game_results, write_config

pytestmark = pytest.mark.slow

SLOW = f"{PY} {BOTS / 'slow_bot.py'} 0.02"  # a seeded random bot that thinks 20 ms a move
BOTS_PLAYED = [("greedy", GREEDY), ("greedy2", GREEDY), ("slow", SLOW)]


def stored(out: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(every fault, every game's timings) of a finished tournament."""
    with SqliteStore.open(out / "tournament.sqlite") as store:
        return store.faults(), [row.timings or {} for row in store.games()]


def pause(pid: int, seconds: float) -> None:
    """SIGSTOP ``pid`` for ``seconds`` (sleeping for the pause is the point), then SIGCONT."""
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)


def runners_once_playing(out: Path) -> tuple[int, set[int]]:
    """(games done, pids of the runners) of a tournament in progress in another process:
    (0, none) while its store is not there yet or is held past the busy timeout."""
    if not (out / "tournament.sqlite").exists():
        return 0, set()
    try:
        with SqliteStore.open(out / "tournament.sqlite") as store:
            return store.counts()["done"], {r.pid for r in store.runners(now=time.time())}
    except StoreError:
        return 0, set()


@pytest.mark.parametrize(
    ("seconds", "workers"),
    [
        pytest.param(7.0, 1, marks=pytest.mark.timeout(60), id="7s-one-referee"),
        pytest.param(20.0, 1, marks=pytest.mark.timeout(90), id="20s-one-referee"),
        pytest.param(20.0, 2, marks=pytest.mark.timeout(90), id="20s-one-of-two-workers"),
    ],
)
def test_a_paused_referee_plays_the_games_of_an_unpaused_one(
    tmp_path: Path, procs: Procs, seconds: float, workers: int
) -> None:
    config = write_config(tmp_path / "t.toml", BOTS_PLAYED, games=4, concurrency=4, startup=30.0)
    assert main(["tournament", str(config), "--out", str(tmp_path / "plain")]) == 0
    expected = game_results(tmp_path / "plain")
    out = tmp_path / "paused"
    argv = [PY, "-m", "referee", "tournament", str(config), "--out", str(out),
            "--workers", str(workers)]  # fmt: skip
    referee = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    procs.append(referee)
    seen: list[tuple[int, set[int]]] = [(0, set())]

    def playing() -> bool:  # two games done (and, with workers, a worker process joined)
        seen.append(runners_once_playing(out))
        done, pids = seen[-1]
        return done >= 2 and (workers == 1 or bool(pids - {referee.pid}))

    wait_for("two games done", playing)
    target = referee.pid if workers == 1 else min(seen[-1][1] - {referee.pid})
    pause(target, seconds)
    _, err = referee.communicate(timeout=60)
    assert referee.returncode == 0, err
    assert game_results(out) == expected  # game by game
    faults, timings = stored(out)
    assert faults == []
    stalls = [s for t in timings for s in t.get("stalls", [])]  # type: ignore[attr-defined]
    assert any(abs(length - seconds) < 2.0 for _, length in stalls), timings  # stored with it
    if workers == 1:
        assert err.count(f"stalled for {seconds:.0f}.") == 1, err  # logged once, with its length
