"""Records and the rules hash across issue 30 (a knock without melds arranged blind).

A record written before ``knock_hindsight`` existed has no such key and the presets' old hash;
it was played with hindsight and must replay that way and verify (docs/rules.md, "When the hash
changes"). The hand below is docs/rules.md's worked example, where the two rules disagree.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from referee.match.record import RecordError, replay_record, result_to_dict
from referee.rules import DRAW_STOCK, PASS_UPCARD, STANDARD, Card, RuleSet, apply, knock_action
from tests.rules.helpers import position

OLD_STANDARD_HASH = "75a852a779d24e6c"  # every standard record before issue 30


def _hand_line(rules: RuleSet) -> dict[str, Any]:
    """The worked example played under ``rules``: seat 1 knocks Kh without melds."""
    state = position(
        nondealer="3c 3d 3h 2h 4h 9s Ts Js Qs Ks",
        dealer="2c 9c Tc Jc 5d 6d 7d 8d 3s 4s",
        upcard="Kd",
        stock="Kh",
        rules=rules,
    )
    actions = []
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK, knock_action(Card.parse("Kh"))):
        actions.append([state.to_act, str(action), 1])
        state = apply(state, action)
    assert state.result is not None
    return {
        "type": "hand",
        "game": 0,
        "hand": 0,
        "dealer": 0,
        "deck": [str(Card.from_index(i)) for i in state.deck],
        "scores_before": [0, 0],
        "actions": actions,
        "result": result_to_dict(state.result),
    }


def _write(path: Path, rules_data: dict[str, Any], rules_hash: str, hand: dict[str, Any]) -> Path:
    header = {
        "type": "header",
        "schema_version": 1,
        "match_id": "m",
        "rules": rules_data,
        "rules_hash": rules_hash,
        "seats": ["a", "b"],
    }
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, hand)))
    return path


def test_a_record_from_before_issue_30_replays_with_hindsight_and_verifies(tmp_path: Path) -> None:
    old_rules = replace(STANDARD, knock_hindsight=True)
    old_data = old_rules.to_dict()
    assert "knock_hindsight" not in old_data and old_rules.rules_hash == OLD_STANDARD_HASH
    hand = _hand_line(old_rules)
    assert (hand["result"]["winner"], hand["result"]["points"]) == (1, 3)  # the knocker's 3
    report = replay_record(_write(tmp_path / "old.jsonl", old_data, OLD_STANDARD_HASH, hand))
    assert report.hands == 1


def test_a_record_of_the_blind_rule_verifies_under_the_new_hash(tmp_path: Path) -> None:
    hand = _hand_line(STANDARD)
    assert hand["result"]["termination"] == "undercut" and hand["result"]["points"] == 25
    path = _write(tmp_path / "new.jsonl", STANDARD.to_dict(), STANDARD.rules_hash, hand)
    assert replay_record(path).hands == 1


def test_the_hash_tells_the_two_rules_apart(tmp_path: Path) -> None:
    old = _hand_line(replace(STANDARD, knock_hindsight=True))
    # The hindsight result claimed under the blind rules: the replay scores it blind.
    path = _write(tmp_path / "a.jsonl", STANDARD.to_dict(), STANDARD.rules_hash, old)
    expected = ":2: ValueError: result mismatch: replay gives undercut winner 0 25 points, "
    with pytest.raises(RecordError, match=expected + "record says knock winner 1 3 points"):
        replay_record(path)
    # The old rules with the new hash (or the reverse) are refused at the header.
    stale = {k: v for k, v in STANDARD.to_dict().items() if k != "knock_hindsight"}
    path = _write(tmp_path / "b.jsonl", stale, STANDARD.rules_hash, old)
    with pytest.raises(RecordError, match=":1: rules hash mismatch"):
        replay_record(path)
