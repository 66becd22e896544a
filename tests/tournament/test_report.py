"""Tests of how report.py presents the standings and head-to-head estimates to a reader."""

from __future__ import annotations

import json

from referee.tournament.report import compute_standings, elo_text, estimate_text, render
from referee.tournament.stats import Pentanomial, estimate_pairs
from referee.view.svg import elo_text as svg_elo_text
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


def test_no_signed_zeros_and_narrow_intervals_keep_their_digits() -> None:
    # 10,000 pairs all split 1-1 (20,000 games): Wald printed "Elo +0 [-0, +0]".
    text = estimate_text(estimate_pairs(Pentanomial((0, 0, 10_000, 0, 0))))
    assert text.startswith("Elo 0.00 [-0.13, +0.13], LOS 50.0%"), text

    # A cycle: every rating is 0 up to rounding; none prints as "-0".
    def beats(w: str, loser: str) -> list[str | None]:  # 6 of 10
        return [w, loser, w, loser, w, loser, w, loser, w, w]

    standings = compute_standings(rows([
        ("a", "b", 5, beats("a", "b")), ("b", "c", 5, beats("b", "c")),
        ("c", "a", 5, beats("c", "a")),
    ]))  # fmt: skip
    table = render(standings)
    assert all(b.rating is not None and abs(b.rating) < 1e-6 for b in standings.bots)
    assert "-0 " not in table and "+0 " not in table and "-0]" not in table
    assert [elo_text(x) for x in (-0.4, 0.0, -0.0, 0.4, 12.6)] == ["0", "0", "0", "0", "+13"]
    assert [svg_elo_text(x) for x in (-0.4, -0.0, -12.6)] == ["0", "0", "-13"]


def test_a_bot_without_games_is_unranked_and_shows_no_score() -> None:
    standings = compute_standings(rows([
        ("a", "b", 1, ["a", "b"]),
        ("a", "idle", 1, ["", ""]),
    ]))  # fmt: skip
    table = render(standings)
    idle = next(line for line in table.splitlines() if " idle " in line)
    assert idle.split()[0] == "-" and "0.000" not in idle
    assert [b.name for b in standings.bots][-1] == "idle"
    data = json.loads(render(standings, "json"))
    assert data["schema_version"] == 3  # 3: a null score, shared ranks
    (bot,) = [b for b in data["bots"] if b["name"] == "idle"]
    assert bot["score"] is None and bot["rank"] is None
    csv_row = next(r for r in render(standings, "csv").splitlines() if ",idle," in r)
    assert csv_row.startswith("-,idle,0,0,0,0,,")


def test_a_pairing_without_a_finished_game_has_its_line() -> None:
    standings = compute_standings(rows([
        ("a", "b", 1, ["a", "b"]),
        ("a", "c", 1, ["", ""]),
    ]))  # fmt: skip
    table = render(standings)
    assert "  a vs c: 0 games, no complete duplicate pair yet" in table
    pairing = next(p for p in json.loads(render(standings, "json"))["pairings"]
                   if p["second"] == "c")  # fmt: skip
    assert pairing["games"] == 0 and pairing["score"] is None and pairing["status"] == "empty"


def test_ties_share_a_rank_and_say_so() -> None:
    # b, c and d each split one pair with a and lost nothing else: same score, same points.
    standings = compute_standings(rows([
        ("a", "b", 1, ["a", "a"]),
        ("a", "c", 1, ["c", "a"]),
        ("a", "d", 1, ["d", "a"]),
        ("c", "d", 1, ["c", "d"]),
    ]))  # fmt: skip
    table = render(standings).splitlines()
    ranks = {line.split()[1]: line.split()[0] for line in table[2:6]}
    assert ranks["a"] == "1" and ranks["c"] == "2=" and ranks["d"] == "2=" and ranks["b"] == "4"
    assert any("= tied" in line for line in table)
    bots = {b["name"]: b for b in json.loads(render(standings, "json"))["bots"]}
    assert (bots["c"]["rank"], bots["c"]["tied"], bots["b"]["rank"], bots["b"]["tied"]) == (
        2, True, 4, False)  # fmt: skip


def test_the_ratings_note_names_what_helps() -> None:
    never_met = render(compute_standings(rows([
        ("a", "b", 1, ["a", "b"]),
        ("c", "d", 1, ["c", "d"]),
    ])))  # fmt: skip
    line = next(line for line in never_met.splitlines() if line.startswith("ratings:"))
    assert "never played each other" in line and "--prior-draws N regularises" not in line
    assert "(games between {c, d} and {a, b} would put them on one scale" in line
    dominated = render(compute_standings(rows([("a", "b", 1, ["a", "a"])])))
    assert "(--prior-draws N regularises them)" in dominated
    nothing = render(compute_standings(rows([("a", "b", 1, ["", ""])])))
    assert "ratings: no games yet" in nothing and "--prior-draws" not in nothing
