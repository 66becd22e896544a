"""A remote entrant never plays a deal it has seen. A duplicate pair deals the same cards twice
with the seats swapped: a remote bot that remembers its first game's hand knew its opponent's
whole hand in the second (447 of 447 hands, measured). So a pair with a remote player deals
each game apart (``referee/tournament/games.py``, ``SEPARATE``). A real ladder with a real
remote bot plays pairs; what the remote bot was dealt in each pair's first game overlaps its
opponent's hand in the second no more than chance, and each game still proves its decks with
its pair's revealed key."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from statistics import mean

import pytest

from referee.cli import main
from referee.tournament.games import SEPARATE, deck_label
from referee.tournament.ladder import LadderBook, PairLedger
from referee.tournament.store import GameSpec, SqliteStore
from tests.e2e.daemon import text, wait_for
from tests.e2e.helpers import PY
from tests.tournament.test_ladder_e2e import LOOP, local, setup, start, stop

pytestmark = pytest.mark.timeout(240)

GAMES = 8
"""Games the remote bot plays: four pairs."""


def dealt(record: Path) -> tuple[list[str], dict[str, list[str]]]:
    """A record's seat names and, by name, the cards each was dealt in its first hand."""
    lines = [json.loads(line) for line in gzip.decompress(record.read_bytes()).splitlines()]
    seats = lines[0]["seats"]
    first = next(line for line in lines if line["type"] == "hand")
    deck, dealer = first["deck"], first["dealer"]
    hands = {seats[1 - dealer]: deck[0:20:2], seats[dealer]: deck[1:20:2]}
    return seats, hands


def test_a_remote_player_that_remembers_its_first_game_knows_nothing_in_the_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, out, entry = setup(tmp_path, concurrency=1, startup=60.0)
    assert main(["ladder", "add", str(out), "mine", *local(entry.parent)]) == 0
    assert main(["ladder", "add", str(out), "alice", "--remote", "--token", "alice-token-1"]) == 0
    ladder, line = start(config, out, "--insecure")
    endpoint = line.split("serving on ", 1)[1].split(";", 1)[0]
    log = out / "referee.log.jsonl"
    try:
        wait_for("alice accepted", lambda: "remote player alice.v1 may connect" in text(log))
        remote = subprocess.Popen([PY, str(LOOP), endpoint, "alice-token-1", "alice", str(GAMES)])
        assert remote.wait(180) == 0
    finally:
        stop(ladder)
    with LadderBook.open(out / "tournament.sqlite") as book:
        pairs = [p for p in PairLedger(book).rows() if p.closed == "rated"]
    with SqliteStore.open(out / "tournament.sqlite") as store:
        rows = {row.spec.game_id: row for row in store.games()}
    assert len(pairs) >= 3, pairs
    known = []
    for pair in pairs:
        assert pair.deal_id.endswith(SEPARATE), pair
        first, second = (out / "games" / Path(str(rows[g].result["record"])).name  # type: ignore[index]
                         for g in pair.games)  # fmt: skip
        _, before = dealt(first)
        seats, after = dealt(second)
        opponent = next(name for name in seats if not name.startswith("alice"))
        remembered = set(next(cards for name, cards in before.items() if name.startswith("alice")))
        known.append(len(remembered & set(after[opponent])))
        # the pair's revealed key proves both games' decks
        capsys.readouterr()
        assert main(["ladder", "deals", str(out), "--json"]) == 0
        key = next(p for p in json.loads(capsys.readouterr().out) if p["pair"] == pair.deal_id)
        for record in (first, second):
            assert main(["replay", str(record), "--quiet", "--deal-key", key["deal_key"]]) == 0
    # Chance: two 10-card hands of one deck share 10 * 10 / 52 = 1.9 cards on average (at most
    # 4.3 for the mean of 3 pairs, 3.5 standard errors up). A duplicate pair shares all 10.
    assert max(known) < 10 and mean(known) < 4.3, known


def test_a_duplicate_pair_would_deal_its_second_game_the_first_ones_cards() -> None:
    """The control: without :data:`SEPARATE` the two games of a pair deal from one label,
    hence the same decks (what a remote player remembered); with it, from two."""
    duplicate = [GameSpec(g, "a-vs-b", "a", "b", "ladder/4", 4) for g in (4, 5)]
    separate = [GameSpec(g, "a-vs-b", "a", "b", "ladder/4" + SEPARATE, 4) for g in (4, 5)]
    assert deck_label(duplicate[0]) == deck_label(duplicate[1]) == "ladder/4"
    assert deck_label(separate[0]) != deck_label(separate[1])
