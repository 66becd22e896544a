"""A tournament's one secret deal key: sealed while games are open, revealed by ``results``
at the end, never in a game's ``match_end``; and kept processes never play both games of a
duplicate pair (real cheating bot processes report what they were dealt)."""

from __future__ import annotations

import json
import stat
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.match.deals import Deal, commitment, parse_key
from referee.match.record_gzip import record_lines
from referee.rules import STANDARD
from referee.tournament.config import BotEntry, TournamentConfig
from referee.tournament.dealkey import KEY_FILE, deal_status, open_deal
from referee.tournament.runner import schedule
from referee.tournament.store import SqliteStore, StoreError
from tests.e2e.helpers import BOTS, FAST, PY
from tests.tournament.test_tournament_e2e import write_config

SPY = f"{PY} {BOTS / 'dealspy.py'}"


def spy_lines(out: Path) -> list[dict[str, Any]]:
    """What the spies wrote, with the bot's name (from its stderr file's name)."""
    lines = []
    for path in sorted((out / "stderr").glob("*.stderr")):
        name = path.name.split(".")[-2]
        lines += [
            {**json.loads(line), "bot": name}
            for line in path.read_text().splitlines()
            if line.startswith("{")
        ]
    return lines


@pytest.mark.timeout(300)
def test_kept_spies_never_replay_a_deal_and_never_see_the_key_before_the_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(
        tmp_path / "t.toml", [("spy1", SPY), ("spy2", SPY)], games=6, concurrency=1, max_hands=4
    )
    text = config.read_text().replace("seed = 5\n", "").replace("move = 0.5", "move = 5.0")
    config.write_text(text.replace("bank = 2.0", "bank = 10.0"))
    out = tmp_path / "out"
    assert main(["tournament", str(config), "--out", str(out)]) == 0
    lines = spy_lines(out)
    starts = [line for line in lines if line["kind"] == "start"]
    assert len(starts) == 12  # 6 games, 2 seats

    procs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for start in starts:
        procs[start["bot"], start["deal_id"]].append(start["proc"])
    assert len(procs) == 6 and all(len(p) == 2 for p in procs.values())  # 3 pairs, 2 bots
    for (bot, deal_id), pair in procs.items():
        assert pair[0] != pair[1], f"{bot} played both games of {deal_id} in one process"
    games_per_proc: dict[str, int] = defaultdict(int)
    for start in starts:
        games_per_proc[start["proc"]] += 1
    assert max(games_per_proc.values()) >= 2, "no process was kept: the test proves nothing"

    # Every game: the same commitment, no key in match_end, no attack reproduced a hand.
    verdicts = [line for line in lines if line["kind"] == "verify"]
    assert verdicts and all(v["sealed"] for v in verdicts)
    assert all(p["attacks"] == [] for p in lines if p["kind"] == "predict")
    commitments = {start["commitment"] for start in starts}
    assert len(commitments) == 1
    assert stat.S_IMODE((out / KEY_FILE).stat().st_mode) == 0o600
    for path in (out / "games").glob("*.jsonl.gz"):
        text = b"".join(record_lines(path)).decode()
        assert "deal_key" not in text.replace('"deal_key":null', "")

    capsys.readouterr()
    assert main(["results", str(out), "--format", "json"]) == 0
    deals = json.loads(capsys.readouterr().out)["deals"]
    assert deals["deal_commitment"] in commitments and deals["deal_secret"] is True
    assert commitment(parse_key(deals["deal_key"])) == deals["deal_commitment"]
    assert main(["results", str(out)]) == 0
    assert f"deal key: {deals['deal_key']}" in capsys.readouterr().out

    record = next((out / "games").glob("*.jsonl.gz"))
    assert main(["replay", str(record), "--verify", "--quiet"]) == 1
    assert "no deal key" in capsys.readouterr().err
    assert main(["replay", str(record), "--deal-key", deals["deal_key"], "--quiet"]) == 0
    assert "re-derived from the deal key" in capsys.readouterr().out
    wrong = Deal.random().key_hex
    assert main(["replay", str(record), "--deal-key", wrong, "--quiet"]) == 1
    assert "does not match the header's deal_commitment" in capsys.readouterr().err


def _config(seed: int | None = None) -> TournamentConfig:
    bots = (BotEntry("a", "true"), BotEntry("b", "true"))
    return TournamentConfig(
        name="t", bots=bots, games_per_pairing=2, seed=seed, time=FAST, rules=STANDARD
    )


def _store(out: Path, config: TournamentConfig) -> tuple[SqliteStore, bool]:
    out.mkdir(exist_ok=True)
    store = SqliteStore.open(out / "tournament.sqlite")
    created = store.init_tournament(
        config=config.to_dict(), config_hash=config.config_hash, games=schedule(config), now=1.0
    )
    return store, created


def test_the_key_is_sealed_while_games_are_open_and_a_resume_needs_its_file(
    tmp_path: Path,
) -> None:
    config = _config()
    store, created = _store(tmp_path, config)
    deal = open_deal(tmp_path, None, store, created=created)
    assert deal.secret and stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600
    status = deal_status(tmp_path, store)
    assert status.commitment == deal.commitment and status.key is None
    assert status.lines()[1] == "deal key: sealed until every game is played"
    # The store itself never holds the key.
    assert deal.key_hex.encode() not in (tmp_path / "tournament.sqlite").read_bytes()
    store.close()

    store, created = _store(tmp_path, config)
    assert not created and open_deal(tmp_path, None, store, created=created) == deal
    (tmp_path / KEY_FILE).unlink()
    with pytest.raises(StoreError, match="is missing: this tournament's deals came from the key"):
        open_deal(tmp_path, None, store, created=created)
    (tmp_path / KEY_FILE).write_text(
        json.dumps({"deal_key": Deal.random().key_hex, "bot_key": deal.bot_key.hex()})
    )
    with pytest.raises(StoreError, match="restore the original key file"):
        open_deal(tmp_path, None, store, created=created)
    store.close()


def test_a_seeded_tournament_is_marked_not_secret_and_writes_no_key(tmp_path: Path) -> None:
    config = _config(seed=3)
    store, created = _store(tmp_path, config)
    deal = open_deal(tmp_path, 3, store, created=created)
    assert deal == Deal.from_seed(3) and not deal.secret
    assert not (tmp_path / KEY_FILE).exists()
    status = deal_status(tmp_path, store)
    assert not status.secret and "NOT secret" in status.lines()[0]
    store.close()
