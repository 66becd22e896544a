"""Several referee processes on one SQLite store: no double play by a second ``tournament``
command, dead runners' claims released, ``--workers`` results equal to one process's, and a
``worker`` refusing bots that are not the tournament's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.config import load_config
from referee.tournament.lease import Membership
from referee.tournament.runner import TournamentRun, schedule
from referee.tournament.store import Runner, SqliteStore, StoreBusy
from referee.tournament.worker import BOT_FILES_KEY, CONFIG_KEY, bot_files
from tests.e2e.helpers import GREEDY, RANDOM
from tests.tournament.test_tournament_e2e import game_results, write_config

pytestmark = pytest.mark.timeout(180)


def _started(tmp_path: Path, games: int = 4) -> tuple[Path, SqliteStore, Membership]:
    """A tournament initialised by a live ``tournament`` runner (this process) on a new store."""
    path = write_config(tmp_path / "t.toml", [("greedy", GREEDY), ("random", RANDOM)], games)
    config = load_config(path)
    (tmp_path / "out").mkdir()
    store = SqliteStore.open(tmp_path / "out" / "tournament.sqlite")
    assert store.init_tournament(config=config.to_dict(), config_hash=config.config_hash,
                                 games=schedule(config), now=0.0)  # fmt: skip
    store.set_meta(CONFIG_KEY, path.read_text())
    member = Membership(store, role="tournament", lease=60.0)
    member.join(exclusive=True)
    return path, store, member


@pytest.mark.asyncio
async def test_a_second_tournament_command_is_refused_and_plays_nothing(tmp_path: Path) -> None:
    """The issue's double play: the second command's resume released the first one's live
    claims, so those games were played twice. Now it is refused before touching any claim."""
    path, store, first = _started(tmp_path)
    claim = store.claim(owner=first.owner, lease_seconds=60.0, now=time.time())
    assert claim is not None
    second = TournamentRun(load_config(path), tmp_path / "out")
    with pytest.raises(StoreBusy, match=r"being played by another referee \(tournament pid"):
        await second.run()
    assert store.counts() == {"pending": 3, "claimed": 1, "done": 0}
    assert store.record(claim, result={"w": 1}, faults=[], timings=None, now=time.time())
    assert not list((tmp_path / "out" / "games").iterdir())  # the second one played nothing
    store.close()


def test_the_cli_names_the_running_referee(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, store, _first = _started(tmp_path)
    assert main(["tournament", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"tournament pid {os.getpid()}" in err and "gin-referee worker --store" in err
    store.close()


def test_claims_of_a_dead_runner_of_this_machine_are_released_at_once(tmp_path: Path) -> None:
    _path, store, member = _started(tmp_path)
    member.leave()
    worker = Membership(store, role="worker")
    worker.join(exclusive=False)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = Runner("dead-one", member.host, gone.pid, "tournament", 1e12)  # heartbeat "alive"
    store.join(dead, now=0.0, exclusive=False)
    live = store.claim(owner=worker.owner, lease_seconds=1e9, now=0.0)
    taken = store.claim(owner="dead-one", lease_seconds=1e9, now=0.0)
    assert taken is not None and live is not None
    others = Membership(store, role="tournament").join(exclusive=True)  # a worker is no rival
    assert [r.owner for r in others] == [worker.owner]
    status = {row.spec.game_id: row.status for row in store.games()}
    assert status[taken.game.game_id] == "pending" and status[live.game.game_id] == "claimed"
    store.close()


def test_workers_play_the_same_games_as_one_process(tmp_path: Path) -> None:
    bots = [("greedy", GREEDY), ("random", RANDOM)]
    config = write_config(tmp_path / "t.toml", bots, games=8, concurrency=4, startup=60.0)
    assert main(["tournament", str(config), "--out", str(tmp_path / "one")]) == 0
    argv = ["tournament", str(config), "--out", str(tmp_path / "two"), "--workers", "2"]
    assert main(argv) == 0
    assert game_results(tmp_path / "two") == game_results(tmp_path / "one")
    with SqliteStore.open(tmp_path / "two" / "tournament.sqlite") as store:
        assert all(row.attempts == 1 for row in store.games())
        assert store.runners(now=0.0) == []  # every runner left


def test_a_worker_refuses_bots_that_are_not_the_tournaments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("print('v1')\n")
    path = write_config(tmp_path / "t.toml", [("a", f"{sys.executable} {bot}"), ("b", RANDOM)], 2)
    config = load_config(path)
    (tmp_path / "out").mkdir()
    with SqliteStore.open(tmp_path / "out" / "tournament.sqlite") as store:
        store.init_tournament(config=config.to_dict(), config_hash=config.config_hash,
                              games=schedule(config), now=0.0)  # fmt: skip
        store.set_meta(CONFIG_KEY, path.read_text())
        store.set_meta(BOT_FILES_KEY, json.dumps(bot_files(config)))
    bot.write_text("print('v2')\n")
    db = str(tmp_path / "out" / "tournament.sqlite")
    assert main(["worker", "--store", db]) == 2
    err = capsys.readouterr().err
    assert f"bot 'a': {bot} differs" in err and "install the same bot" in err
    assert main(["worker", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "no tournament to join" in capsys.readouterr().err
    monkeypatch.delenv("GIN_REFEREE_STORE", raising=False)
    assert main(["worker"]) == 2
    assert "give --store URL (or set GIN_REFEREE_STORE)" in capsys.readouterr().err
    monkeypatch.setenv("GIN_REFEREE_STORE", db)  # the variable stands for --store
    assert main(["worker"]) == 2
    assert f"bot 'a': {bot} differs" in capsys.readouterr().err


def test_killing_the_command_stops_its_workers_and_the_same_command_resumes(
    tmp_path: Path,
) -> None:
    """(A generous start-up limit: several referee processes starting at once on a loaded
    2-core machine have made Python bots miss 10 s, a startup fault that changes a result.)"""
    bots = [("greedy", GREEDY), ("random", RANDOM)]
    config = write_config(tmp_path / "t.toml", bots, games=12, concurrency=2, startup=60.0)
    assert main(["tournament", str(config), "--out", str(tmp_path / "one")]) == 0
    out = tmp_path / "two"
    argv = [sys.executable, "-m", "referee", "tournament", str(config), "--out", str(out),
            "--workers", "2"]  # fmt: skip
    parent = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while True:  # another process's store: nothing to await
            assert time.monotonic() < deadline and parent.poll() is None
            if (out / "tournament.sqlite").exists():
                with SqliteStore.open(out / "tournament.sqlite") as store:
                    others = [r for r in store.runners(now=time.time()) if r.pid != parent.pid]
                    if others and store.counts()["done"] >= 2:
                        break
            time.sleep(0.1)
        parent.kill()
        parent.wait()
        child = others[0].pid
        deadline = time.monotonic() + 60
        while os.path.exists(f"/proc/{child}"):  # it notices its parent's death by itself
            assert time.monotonic() < deadline, "the worker outlived its command"
            time.sleep(0.05)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert main(["tournament", str(config), "--out", str(out), "--workers", "2"]) == 0
    assert game_results(out) == game_results(tmp_path / "one")


@pytest.mark.asyncio
async def test_a_failed_lease_renewal_is_tried_again_not_fatal() -> None:
    """A renewal that raises (the database briefly gone) is retried a third of a lease later;
    the renewer ends only when the lease is lost. (It used to die at once and take the game's
    result and the whole run with it.)"""
    import asyncio
    from types import SimpleNamespace
    from typing import cast

    from referee.tournament.runner import TournamentRun
    from referee.tournament.store import Claim, GameSpec, Store, StoreError

    calls: list[float] = []

    class FlakyStore:
        def renew(self, claim: Claim, *, lease_seconds: float, now: float) -> Claim | None:
            calls.append(now)
            if len(calls) == 1:
                raise StoreError("postgresql://db/gin", "the server closed the connection")
            return None if len(calls) == 3 else claim

    game = GameSpec(0, "a-vs-b", "a", "b", "a-vs-b/pair0", 0)
    claim = Claim(game=game, lease="fence", expires=0.0, attempt=1)
    runner = cast(TournamentRun, SimpleNamespace(lease=0.03))
    await asyncio.wait_for(TournamentRun._renew(runner, cast(Store, FlakyStore()), claim), 5)
    assert len(calls) == 3  # failed, renewed, lost
