"""Tests of how report.py presents the standings and head-to-head estimates to a reader."""

from __future__ import annotations

import json

from referee.tournament.report import compute_standings, render
from tests.tournament.test_ratings import rows


def test_two_pairs_say_they_are_too_few_and_claim_no_certainty() -> None:
    # Pairs scoring 1.5 and 2: Wald printed "Elo +338 [+149, +inf], LOS 100.0%".
    standings = compute_standings(rows([("a", "b", 2, ["a", None, "a", "a"])]))
    text = render(standings)
    line = next(line for line in text.splitlines() if "a vs b" in line)
    assert "Elo +338 [" in line and "inf" not in line and "LOS 100.0%" not in line
    assert line.endswith("(2 pairs: too few to say much)")
    (pairing,) = json.loads(render(standings, "json"))["pairings"]
    assert pairing["too_few"] is True and pairing["upper"] is not None
