"""What ``gin-referee match`` prints at the end: a table, or the ``--json`` summary.

A seat is named as the command line named it (the organiser's name, as in the record's header
and on the pages: docs/viewer.md); the name its bot gave in its hello is a detail ("greedy_bot
calls itself greedy-bot"; ``self_name`` in the JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.match import MatchResult

__all__ = ["as_given", "own_names", "summary"]


def own_names(result: MatchResult) -> list[str]:
    """The names the bots gave in their hello (the result tells two equal ones apart with -A
    and -B: without them here)."""
    own = [seat.name for seat in result.seats]
    base = own[0].removesuffix("-A")
    return [base, base] if own == [f"{base}-A", f"{base}-B"] else own


def as_given(result: MatchResult, names: Sequence[str]) -> dict[str, Any]:
    """The ``--json`` summary with each seat named as the command line named it (the organiser's
    name, as in the record's header and on the pages); the bot's own name is ``self_name``."""
    data = result.to_dict()
    seats: list[dict[str, Any]] = data["seats"]  # type: ignore[assignment]
    for seat, name, own in zip(seats, names, own_names(result), strict=True):
        seat["self_name"], seat["name"] = own, name
    data["winner_name"] = None if result.winner is None else names[result.winner]
    return data


def summary(result: MatchResult, names: Sequence[str]) -> str:
    lines = [f"{result.match_id}: {result.games_played} game(s), {result.reason}"]
    width = max(len(name) for name in names)
    lines.append(f"  {'bot':<{width}}  games  points  hands  faults  time(s)  decisions")
    for seat, name in zip(result.seats, names, strict=True):
        lines.append(
            f"  {name:<{width}}  {seat.games_won:>5}  {seat.points:>6}  {seat.hands_won:>5}"
            f"  {len(seat.faults):>6}  {seat.time_used:>7.2f}  {seat.decisions:>9}"
        )
    for seat, name, own in zip(result.seats, names, own_names(result), strict=True):
        if own != name:
            lines.append(f"  {name} calls itself {own}")
        for fault in seat.faults:
            lines.append(f"  fault: {name} {fault.kind}: {fault.detail[:500]}")
    if result.winner is None:
        lines.append("result: draw" + (" (interrupted)" if result.interrupted else ""))
    else:
        lines.append(f"winner: {names[result.winner]}")
    if result.sandbox:
        lines.append(f"sandbox: {result.sandbox}")
    if result.record_path:
        lines.append(f"record: {result.record_path}")
    return "\n".join(lines)
