"""The defender's own melds after a knock (``declare_melds``), with a real bot that asks for
them: declared melds are scored as declared and recorded (the record replays and verifies);
melds of the knocker's cards, or a ``card`` on the answer, are the bot's fault."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from referee.match.record import replay_record
from referee.rules import STANDARD
from tests.e2e.helpers import BOTS, GREEDY, PY, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]
SHORT = replace(STANDARD, target=30)  # a game of a few hands: the first knock comes soon


def defender(mode: str) -> str:
    return f"{PY} {BOTS / 'defender.py'} {mode}"


async def test_declared_melds_are_scored_as_declared_and_replay(tmp_path: Path) -> None:
    result = await play(defender("nothing"), GREEDY, tmp_path, seed=2, rules=SHORT)
    stderr = (tmp_path / "match.seat0.stderr").read_text()
    assert "welcome declare_melds=True" in stderr and "defend request 1" in stderr, stderr
    assert not result.seats[0].faults and result.reason == "normal", result
    hands = [json.loads(line) for line in (tmp_path / "match.jsonl").read_text().splitlines()]
    defended = [h for h in hands if any(a[1] == "defend" for a in h.get("actions", ()))]
    assert defended, "a knock the defender answered"
    for hand in defended:
        assert hand["result"]["melds"][0] == []  # as declared: no meld at all
    report = replay_record(tmp_path / "match.jsonl")
    assert report.complete and report.games == 1


@pytest.mark.parametrize(
    ("mode", "kind", "detail"),
    [("steal", "illegal", "not of the defender's cards"), ("card", "malformed", "card")],
)
async def test_a_bad_declaration_is_the_defenders_fault(
    tmp_path: Path, mode: str, kind: str, detail: str
) -> None:
    result = await play(defender(mode), GREEDY, tmp_path, seed=2, rules=SHORT)
    stderr = (tmp_path / "match.seat0.stderr").read_text()
    assert "defend request 1" in stderr, stderr  # it was asked, and answered badly
    fault = result.seats[0].faults[0]
    assert fault.kind == kind and detail in fault.detail, fault
    assert not result.seats[1].faults
