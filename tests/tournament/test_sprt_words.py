"""The words of ``gin-referee sprt``'s verdict line (referee.cli.sprt.verdict_text)."""

from __future__ import annotations

from referee.cli.sprt import verdict_text
from referee.tournament.stats import SprtResult


def result(llr: float, verdict: str, elo0: float = 0.0, elo1: float = 20.0) -> SprtResult:
    return SprtResult(llr, -2.944, 2.944, verdict, elo0, elo1, 0.05, 0.05, 40, 80)  # type: ignore[arg-type]


def test_the_verdict_is_said_in_the_tests_own_elo_terms() -> None:
    # elo0 = 250, elo1 = 400 rejected beside Elo +275: the candidate is stronger, just not +400.
    text = verdict_text(result(-2.96, "reject", 250, 400), interrupted=False)
    assert "no proof the candidate is stronger" not in text
    assert "H0 accepted: the data favour Elo +250 over +400" in text
    assert verdict_text(result(2.96, "accept"), False).startswith(
        "verdict: accept (H1 accepted: the data favour Elo +20 over +0)"
    )


def test_the_llr_is_placed_against_the_bounds_not_inside_them() -> None:
    assert verdict_text(result(2.96, "accept"), False).endswith(
        "LLR 2.96, at or past the upper bound 2.94"
    )
    assert verdict_text(result(-3.1, "reject"), False).endswith(
        "LLR -3.10, at or past the lower bound -2.94"
    )
    undecided = verdict_text(result(1.0, "continue"), False)
    assert undecided == (
        "verdict: undecided (no decision within the game limit); "
        "LLR 1.00, between the bounds -2.94 and 2.94"
    )
    assert "run the same command again" in verdict_text(None, True)
