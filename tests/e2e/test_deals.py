"""Secret deals against a real cheating bot process, the reveal as a bot sees it, and
``replay --verify`` on tampered records."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from protocol.examples import EXAMPLES
from protocol.schema import HandStart, MatchStart
from referee.cli import main
from referee.match.deals import Deal
from tests.bots import dealspy
from tests.e2e.helpers import BOTS, FAST, PY, RANDOM, play

pytestmark = pytest.mark.timeout(180)
SPY = f"{PY} {BOTS / 'dealspy.py'}"
CLOCK = replace(FAST, move=5.0, bank=10.0, startup=20.0, heartbeat=2.0)  # a busy machine


def spy_lines(out: Path) -> list[dict[str, Any]]:
    """The JSON lines the spy bots wrote to their stderr files."""
    lines = []
    for path in sorted(out.rglob("*.stderr")):
        for line in path.read_text().splitlines():
            if line.startswith("{"):
                lines.append({**json.loads(line), "file": path.name})
    return lines


def record(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def starting_hands(lines: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[set[str], ...]]:
    """(game, hand) -> (seat 0's, seat 1's) starting cards, from a record's decks."""
    hands: dict[tuple[int, int], tuple[set[str], ...]] = {}
    for rec in lines:
        if rec["type"] == "hand":
            deck, dealer = rec["deck"], rec["dealer"]
            first, second = set(deck[0:20:2]), set(deck[1:20:2])  # non-dealer's, dealer's
            hands[rec["game"], rec["hand"]] = (second, first) if dealer == 0 else (first, second)
    return hands


def hits(out: Path, lines: list[dict[str, Any]]) -> list[int]:
    """For every prediction: how many of the opponent's starting cards the spy named."""
    truth = starting_hands(lines)
    return [
        len(set(p["opponent"]) & truth[p["game"], p["hand"]][1 - p["seat"]])
        for p in spy_lines(out)
        if p["kind"] == "predict"
    ]


def test_the_spy_attacks_would_work_on_the_old_public_deals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Control: against the deals of the referee before secret deals (bot seed = 2*seed+seat,
    deck from the seed), the spy's seed inversion names the opponent's ten cards."""
    spy = dealspy.DealSpy()
    start = EXAMPLES["match_start"]
    assert isinstance(start, MatchStart)
    spy.on_match_start(replace(start, seat=1, seed="15"))
    deck = dealspy.old_deck(7, 0, 0)  # the old referee, --seed 7: seat 1 got seed 2*7+1
    cards = [dealspy.CARD[i] for i in deck]  # seat 0 deals: seat 1 gets positions 0, 2, ...
    spy.on_hand_start(HandStart(0, 0, 0, tuple(cards[0:20:2]), cards[20], (0, 0)))
    said = json.loads(capsys.readouterr().err.splitlines()[-1])
    assert "old-seed-inversion" in said["attacks"]
    assert set(said["opponent"]) == set(cards[1:20:2])


@pytest.mark.asyncio
async def test_a_cheating_bot_predicts_secret_deals_no_better_than_chance(tmp_path: Path) -> None:
    result = await play(SPY, SPY, tmp_path, time=CLOCK, games=3, seed=None, max_hands_per_game=10)
    assert result.reason == "normal" and result.deal_secret
    lines = record(tmp_path / "match.jsonl")
    predictions = [p for p in spy_lines(tmp_path) if p["kind"] == "predict"]
    assert len(predictions) >= 10
    assert all(p["attacks"] == [] for p in predictions), "an attack rebuilt a secret deck"
    found = hits(tmp_path, lines)
    # Chance: ten guesses among the 41 unseen cards hit 10*10/41 = 2.44 of the opponent's ten
    # (sd about 1.2 per hand); a prediction from the deck would hit all ten.
    assert sum(found) / len(found) < 4.0
    assert max(found) < 9


@pytest.mark.asyncio
async def test_a_public_seed_is_not_secret(tmp_path: Path) -> None:
    """What the docs warn about: with --seed N, a bot brute-forces N from its own hand."""
    await play(SPY, RANDOM, tmp_path, time=CLOCK, games=1, seed=7, max_hands_per_game=3)
    predictions = [p for p in spy_lines(tmp_path) if p["kind"] == "predict"]
    assert predictions and all("public-seed:7" in p["attacks"] for p in predictions)
    assert set(hits(tmp_path, record(tmp_path / "match.jsonl"))) == {10}
    header = record(tmp_path / "match.jsonl")[0]
    assert header["seed"] == 7 and header["deal_secret"] is False


@pytest.mark.asyncio
async def test_the_revealed_key_matches_the_commitment_as_the_bots_see_them(
    tmp_path: Path,
) -> None:
    result = await play(SPY, SPY, tmp_path, time=CLOCK, games=2, seed=None, max_hands_per_game=3)
    lines = record(tmp_path / "match.jsonl")
    header, end = lines[0], lines[-1]
    verdicts = [v for v in spy_lines(tmp_path) if v["kind"] == "verify"]
    assert len(verdicts) == 2
    for verdict in verdicts:
        assert verdict["commitment_ok"] and not verdict["sealed"]
        assert verdict["hands"] >= 1 and verdict["decks_ok"] == verdict["hands"]
        assert verdict["commitment"] == header["deal_commitment"] == result.deal_commitment
        assert verdict["key"] == end["deal_key"] == result.deal_key
    assert header["deal_secret"] is True and header["seed"] is None
    assert main(["replay", str(tmp_path / "match.jsonl"), "--verify", "--quiet"]) == 0


def _tamper(path: Path, target: Path, change: Any) -> Path:
    lines = record(path)
    change(lines)
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return target


@pytest.mark.asyncio
async def test_a_tampered_record_fails_replay_verify_naming_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await play(RANDOM, RANDOM, tmp_path, time=CLOCK, games=1, seed=None, max_hands_per_game=3)
    good = tmp_path / "match.jsonl"
    assert main(["replay", str(good), "--verify", "--quiet"]) == 0
    assert "re-derived from the deal key" in capsys.readouterr().out

    def swap_stock_bottom(lines: list[dict[str, Any]]) -> None:
        # The last two stock cards are never drawn (the wall): only the deal check sees this.
        hand = [line for line in lines if line["type"] == "hand"][-1]
        hand["deck"][50], hand["deck"][51] = hand["deck"][51], hand["deck"][50]

    swapped = _tamper(good, tmp_path / "swapped.jsonl", swap_stock_bottom)
    assert main(["replay", str(swapped), "--quiet"]) == 0  # the rules alone cannot tell
    capsys.readouterr()
    assert main(["replay", str(swapped), "--verify", "--quiet"]) == 1
    last = [line for line in record(good) if line["type"] == "hand"][-1]
    err = capsys.readouterr().err
    # the record's indexes count from 0, what replay prints from 1
    assert f"game {last['game'] + 1} hand {last['hand'] + 1}: the recorded deck is not" in err
    assert "position 50" in err

    def other_key(lines: list[dict[str, Any]]) -> None:
        lines[-1]["deal_key"] = Deal.random().key_hex

    rekeyed = _tamper(good, tmp_path / "rekeyed.jsonl", other_key)
    assert main(["replay", str(rekeyed), "--verify", "--quiet"]) == 1
    assert "the deal key does not match the header's deal_commitment" in capsys.readouterr().err

    def other_commitment(lines: list[dict[str, Any]]) -> None:
        lines[0]["deal_commitment"] = Deal.random().commitment

    recommitted = _tamper(good, tmp_path / "recommitted.jsonl", other_commitment)
    assert main(["replay", str(recommitted), "--verify", "--quiet"]) == 1
    assert "does not match the header's deal_commitment" in capsys.readouterr().err

    def sealed(lines: list[dict[str, Any]]) -> None:
        lines[-1]["deal_key"] = None

    unrevealed = _tamper(good, tmp_path / "sealed.jsonl", sealed)
    assert main(["replay", str(unrevealed), "--verify", "--quiet"]) == 1
    assert "no deal key" in capsys.readouterr().err
    key = record(good)[-1]["deal_key"]
    assert main(["replay", str(unrevealed), "--deal-key", key, "--quiet"]) == 0
    assert main(["replay", str(unrevealed), "--deal-key", "12ab"]) == 2
    assert "--deal-key: a deal key is 64 hex digits" in capsys.readouterr().err


def test_random_guessing_baseline_is_what_the_bound_assumes() -> None:
    """The chance rate the cheat test's bound rests on: 10 of 41 unseen cards, 10 guesses."""
    rng = random.Random(1)
    unseen = list(range(41))
    trials = [len(set(rng.sample(unseen, 10)) & set(range(10))) for _ in range(20000)]
    assert abs(sum(trials) / len(trials) - 100 / 41) < 0.05
