"""What a match produced: per-seat totals and the match's result, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.match.faults import Fault

__all__ = ["RESULT_SCHEMA_VERSION", "MatchResult", "RefereeError", "SeatSummary"]

RESULT_SCHEMA_VERSION = 1
"""Version of :meth:`MatchResult.to_dict`'s shape (the ``--json`` summary)."""


class RefereeError(RuntimeError):
    """A referee bug ended a match that a tool played (``check``, ``replay --feed``): the tool
    has no verdict to give, and the bot is not to blame (the command exits 70)."""

    @classmethod
    def check(cls, result: MatchResult) -> None:
        """Raise for a ``result`` that a referee bug ended (reason ``error``)."""
        if result.reason == "error":
            raise cls(result.error or "referee error")


@dataclass(slots=True)
class SeatSummary:
    """Running totals of one seat over a match."""

    name: str
    """The bot's name (from its hello, or the command)."""
    games_won: int = 0
    """Games won."""
    points: int = 0
    """Sum of its final game totals (bonuses included)."""
    hands_won: int = 0
    """Scored hands won."""
    faults: list[Fault] = field(default_factory=list)
    """Faults charged to it."""
    strikes: int = 0
    """Strikes (safe default moves) under the strike policy."""
    time_used: float = 0.0
    """Seconds spent deciding, as charged by the referee."""
    time_excused: float = 0.0
    """Seconds of its decisions' wall time not charged: it was waiting for a CPU."""
    decisions: int = 0
    """Decisions answered."""
    stale_replies: int = 0
    """Replies dropped because their request id was not outstanding."""

    def to_dict(self) -> dict[str, object]:
        """Plain-data form for the JSON summary."""
        return {
            "name": self.name,
            "games_won": self.games_won,
            "points": self.points,
            "hands_won": self.hands_won,
            "faults": [f.to_dict() for f in self.faults],
            "strikes": self.strikes,
            "time_used_s": round(self.time_used, 4),
            "time_excused_s": round(self.time_excused, 4),
            "decisions": self.decisions,
            "mean_decision_ms": round(1000 * self.time_used / self.decisions, 3)
            if self.decisions
            else None,
            "stale_replies": self.stale_replies,
        }


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The outcome of a match."""

    match_id: str
    """The match's id."""
    winner: int | None
    """Winning seat, or None for a draw."""
    reason: str
    """``normal``, ``forfeit`` (a bot lost the match by fault), ``no_start`` (neither bot
    started), ``aborted`` or ``error`` (a referee bug ended it: see ``error``)."""
    games_played: int
    """Games played to the end (including forfeited games)."""
    seats: tuple[SeatSummary, SeatSummary]
    """Per-seat totals."""
    interrupted: bool = False
    """True when the match was stopped by a signal before its end."""
    record_path: str | None = None
    """The record file, if one was written."""
    deal_commitment: str | None = None
    """The commitment to the deal key sent to the bots."""
    deal_key: str | None = None
    """The revealed deal key (hex); None while it stays sealed (a tournament's games)."""
    deal_secret: bool = True
    """False when the deals came from a public ``--seed`` (not secret)."""
    sandbox: str = "none"
    """The weakest sandbox level of the bots the referee started (``namespaces``,
    ``rlimits`` or ``none``; ``none`` also when it started none)."""
    error: str | None = None
    """An infrastructure error (a referee bug) that ended the match, never a bot's fault;
    None otherwise. The reason is then ``error`` and there is no winner."""

    def to_dict(self) -> dict[str, object]:
        """The machine summary printed by ``--json``."""
        return {
            "schema_version": RESULT_SCHEMA_VERSION,
            "match_id": self.match_id,
            "winner": self.winner,
            "winner_name": None if self.winner is None else self.seats[self.winner].name,
            "reason": self.reason,
            "games_played": self.games_played,
            "interrupted": self.interrupted,
            "record": self.record_path,
            "deal_commitment": self.deal_commitment,
            "deal_key": self.deal_key,
            "deal_secret": self.deal_secret,
            "sandbox": self.sandbox,
            "error": self.error,
            "seats": [s.to_dict() for s in self.seats],
        }
