"""A pair left open by a stopped ladder whose remote player never comes back is voided once it
has waited ``ladder.void_after``: its recorded game is kept (and provable with the pair's
revealed key), it is never rated, the audit log says so, and the others play on. A worker
refuses to join with a program that is not the one the ladder added (a version added before
snapshots, whose command names its file)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.ladder import LadderBook, PairLedger, fingerprint_command
from referee.tournament.store import SqliteStore
from tests.e2e.daemon import text, wait_for
from tests.e2e.helpers import PY
from tests.tournament.test_ladder_e2e import (
    LOOP,
    RANDOM_ENTRY,
    local,
    processes_mentioning,
    ratings,
    setup,
    start,
    stop,
)

pytestmark = pytest.mark.timeout(240)


def test_a_pair_whose_remote_player_never_returns_is_voided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, out, entry = setup(tmp_path, concurrency=1, startup=60.0)
    path = out / "tournament.sqlite"
    assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
    assert main(["ladder", "add", str(out), "alice", "--remote", "--token", "alice-token-1"]) == 0
    ladder, line = start(config, out, "--insecure")
    endpoint = line.split("serving on ", 1)[1].split(";", 1)[0]
    log = out / "referee.log.jsonl"
    remote = None
    try:
        wait_for("alice accepted", lambda: "remote player alice.v1 may connect" in text(log))
        remote = subprocess.Popen([PY, str(LOOP), endpoint, "alice-token-1", "alice", "1"])
        assert remote.wait(90) == 0  # she played one game and left

        def second_waits() -> bool:  # her pair's second game waits for her (time.startup)
            with SqliteStore.open(path) as store:
                counts = store.counts()
            return counts["done"] == 1 and counts["claimed"] == 1

        wait_for("her second game waiting", second_waits, within=60)
    finally:
        stop(ladder)  # mid-pair: its second game is given back, the pair stays open
        if remote is not None and remote.poll() is None:
            remote.kill()
            remote.wait(10)
    with LadderBook.open(path) as book:
        (pair,) = PairLedger(book).rows()
    assert pair.closed is None and pair.deal_key is None
    # the grace is an operational setting (not hashed): a shorter one, and a third entrant
    config.write_text(config.read_text().replace("poll = 0.2", "poll = 0.2\nvoid_after = 0.5"))
    assert main(["ladder", "add", str(out), "rand", *local(tmp_path / "rand")]) == 0
    again, _ = start(config, out, "--insecure")
    try:
        wait_for("the others play on", lambda: "rand.v1" in ratings(out), within=90)
    finally:
        printed, _ = stop(again)
    assert f"pair {pair.deal_id}: " in printed and "voided" in printed
    with LadderBook.open(path) as book:
        voided = next(p for p in PairLedger(book).rows() if p.deal_id == pair.deal_id)
        history = book.history()
        audit = [entry for entry in book.log() if entry[1] == "void"]
    assert voided.closed == "voided" and voided.deal_key is not None
    assert pair.deal_id not in {r.deal_id for r in history}  # never rated
    assert len(audit) == 1 and audit[0][3] == "alice.v1"
    assert (
        f"pair {pair.deal_id} (" in audit[0][4]
        and "1 recorded game(s) kept, not rated" in (audit[0][4])
    )
    with SqliteStore.open(path) as store:
        rows = {r.spec.game_id: r for r in store.games()}
    first, second = (rows[g] for g in pair.games)
    assert first.status == "done" and second.status == "pending"  # kept; never played
    assert first.result is not None
    record = out / "games" / Path(str(first.result["record"])).name
    assert main(["replay", str(record), "--quiet", "--deal-key", voided.deal_key]) == 0
    capsys.readouterr()
    assert main(["ladder", "list", str(out), "--json"]) == 0
    assert any(e["action"] == "void" for e in json.loads(capsys.readouterr().out)["log"])
    # a version added before snapshots (its command names its file) whose file changed in
    # place: a worker with that program is refused, as bad flags are
    legacy = tmp_path / "legacy.py"
    legacy.write_text(RANDOM_ENTRY)
    command = f"{PY} {legacy}"
    with LadderBook.open(path) as book:
        book.add("old", now=1.0, command=command,
                 fingerprint=fingerprint_command(command, tmp_path))  # fmt: skip
    legacy.write_text(RANDOM_ENTRY + "# changed in place\n")
    assert main(["worker", "--store", str(path)]) == 2
    assert "entrant old.v1: its command or files differ" in capsys.readouterr().err
    assert main(["ladder", "run", str(config), "--out", str(out), "--workers", "0"]) == 2
    assert "--workers must be a number" in capsys.readouterr().err
    assert not processes_mentioning(str(tmp_path))
