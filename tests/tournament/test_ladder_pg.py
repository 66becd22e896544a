"""A ladder on a PostgreSQL store (a real server the test starts, tests/pgserver.py): entrants
added with ``--store URL --ladder NAME``, ``ladder run --store URL`` plays and rates, and
``results --ladder --store URL`` reads the leaderboard; two ladders share one database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.ladder import LadderBook
from referee.tournament.store import open_store
from tests.e2e.daemon import wait_for
from tests.pgserver import pg_server, why_unavailable
from tests.tournament.test_ladder_e2e import local, processes_mentioning, setup, start, stop

WHY = why_unavailable()
pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(WHY is not None, reason=f"NO POSTGRESQL: {WHY} (.ci/run installs it)"),
]


def test_a_ladder_on_postgresql(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, out, entry = setup(tmp_path, concurrency=1)
    with pg_server("fsync=off") as server:
        url = server.database()
        admin = ["--store", url, "--ladder", "e2e"]
        assert main(["ladder", "add", *admin, "mine", *local(entry.parent)]) == 0
        assert main(["ladder", "add", *admin, "rand", *local(tmp_path / "rand")]) == 0
        with LadderBook.open(url, ladder="other") as other:  # another ladder of the database
            other.add("ghost", now=1.0, command="true", fingerprint="f")
        ladder, _ = start(config, out, "--insecure", "--store", url)

        def rated() -> int:
            with LadderBook.open(url, ladder="e2e") as book:
                return len(book.current())

        try:
            wait_for("a rated pair", lambda: rated() == 2, within=90)
        finally:
            stop(ladder)
        capsys.readouterr()
        assert main(["results", "--store", url, "--tournament", "e2e", "--ladder",
                     "--format", "json"]) == 0  # fmt: skip
        board = json.loads(capsys.readouterr().out)
        assert {r["player"] for r in board["players"]} == {"mine.v1", "rand.v1"}
        assert board["pairs_rated"] >= 1
        assert main(["ladder", "history", *admin, "mine.v1", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["opponent"] == "rand.v1"
        store = open_store(url, tournament="e2e")
        try:
            done = [g for g in store.games() if g.status == "done"]
            assert done and store.file(done[0].spec.game_id, "record") is not None
            assert all(g.result is not None and g.result["reason"] != "no_start" for g in done)
        finally:
            store.close()
        with LadderBook.open(url, ladder="other") as other:
            assert [p.player for p in other.players()] == ["ghost.v1"]
        # the store's location is given one way
        assert main(["ladder", "list", "--store", url, "mine"]) == 2
        assert main(["ladder", "list", str(out), "--store", url, "--ladder", "e2e"]) == 2
        assert main(["results", "--store", url, "--ladder"]) == 2
    assert not (out / "tournament.sqlite").exists()
    assert not processes_mentioning(str(tmp_path))
