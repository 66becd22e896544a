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
