"""A ladder's own deal key is never printed: ``results DIR`` on a ladder store with nothing
pending or claimed (an entrant away, one left alone) once took "nothing pending" for "the
tournament has ended" and printed the key every open pair's key derives from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.match import Deal
from referee.net.private import private_dir
from referee.tournament.dealkey import KEY_FILE, LADDER_META, _write
from referee.tournament.store import SqliteStore
from tests.e2e.helpers import GREEDY, RANDOM


def store_with_nothing_pending(out: Path, *, ladder: bool) -> Deal:
    """A store whose deals are committed, with no game pending or claimed, and its key file."""
    private_dir(out)
    deal = Deal.random()
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        if ladder:
            store.set_meta(LADDER_META, "open-ladder")
        store.commit_deal(deal.commitment)
    finally:
        store.close()
    _write(out / KEY_FILE, deal)
    return deal


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_results_never_prints_a_ladders_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    deal = store_with_nothing_pending(tmp_path / "ladder", ladder=True)
    assert main(["results", str(tmp_path / "ladder"), "--format", fmt]) == 0
    shown = capsys.readouterr().out
    assert deal.key_hex not in shown and deal.commitment in shown
    if fmt == "json":
        assert json.loads(shown)["deals"]["deal_key"] is None
    else:
        assert "deal key: never revealed (a ladder never ends)" in shown
    # the control: a tournament in the same state has ended, and its key is revealed
    other = store_with_nothing_pending(tmp_path / "cup", ladder=False)
    assert main(["results", str(tmp_path / "cup"), "--format", fmt]) == 0
    assert other.key_hex in capsys.readouterr().out


def test_report_on_a_running_ladder_shows_only_closed_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real two-game run's store, made a ladder's whose one pair (both games) is open: the
    report writes no replay page and names no card of them, and shows them once closed."""
    from referee.tournament.ladder import LadderBook, PairLedger, PairRow

    config = tmp_path / "cup.toml"
    config.write_text(
        '[tournament]\nname = "cup"\ngames_per_pairing = 2\nseed = 5\n'
        f'[[bots]]\nname = "greedy"\ncommand = "{GREEDY}"\n'
        f'[[bots]]\nname = "random"\ncommand = "{RANDOM}"\n'
    )
    out = tmp_path / "run"
    assert main(["tournament", str(config), "--out", str(out)]) == 0
    store = SqliteStore.open(out / "tournament.sqlite")
    games = tuple(row.spec.game_id for row in store.games())
    store.set_meta(LADDER_META, "cup")
    store.close()
    with LadderBook.open(out / "tournament.sqlite") as book:
        PairLedger(book).schedule(PairRow("ladder/0", ("greedy.v1", "random.v1"), games, True,
                                          "c" * 64, 1.0, None, None, None))  # fmt: skip
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert "0 replay page(s) written" in capsys.readouterr().out
    assert not list((out / "viewer").glob("*.html"))
    page = (out / "report.html").read_text()
    for row_game in games:
        record = next((out / "games").glob(f"g{row_game:06d}-*"))
        deck = json.loads(_first_hand(record))["deck"]
        assert f'"{deck[0]}"' not in page and " ".join(deck[:10]) not in page
    with LadderBook.open(out / "tournament.sqlite") as book:
        assert PairLedger(book).close("ladder/0", "unrated", "d" * 64, now=2.0)
    assert main(["report", str(out)]) == 0
    assert "2 replay page(s) written" in capsys.readouterr().out


def _first_hand(record: Path) -> str:
    """The first ``hand`` line of a (gzipped) record."""
    import gzip

    data = record.read_bytes()
    text = gzip.decompress(data).decode() if record.suffix == ".gz" else data.decode()
    return next(line for line in text.splitlines() if line.startswith('{"type":"hand"'))
