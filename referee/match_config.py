"""A match's configuration and its result, as plain immutable data."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from referee.match_faults import Fault, FaultPolicy
from referee.match_seat import TimeControl
from referee.rules import STANDARD, Card, RuleSet, shuffled_deck

__all__ = ["DEFAULT_MAX_HANDS", "MatchConfig", "MatchResult", "SeatSummary", "seeded_deck"]

RESULT_SCHEMA_VERSION = 1
DEFAULT_MAX_HANDS = 200
"""Hands after which an undecided game ends without a winner (``how: hand_cap``)."""


def seeded_deck(seed: int, game: int, hand: int) -> tuple[Card, ...]:
    """The deck order of one hand, derived from the match seed, game and hand numbers only.

    Deals never depend on the bots or their timing, so the same seed deals the same cards.
    """
    digest = hashlib.sha256(f"gin-referee/deck/{seed}/{game}/{hand}".encode()).digest()
    return shuffled_deck(random.Random(int.from_bytes(digest[:16], "big")))


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchConfig:
    """Everything that defines a match except the bots."""

    rules: RuleSet = STANDARD
    """The rule set."""
    games: int = 10
    """Games to play (with ``target_points``: the most games to play)."""
    target_points: int | None = None
    """If set, the match ends when a bot's match points (game totals) reach this."""
    seed: int = 0
    """Deal seed."""
    time: TimeControl = field(default_factory=TimeControl)
    """Clocks."""
    policy: FaultPolicy = FaultPolicy.FORFEIT_GAME
    """How non-terminal faults are resolved."""
    strikes: int = 3
    """Strikes that forfeit the match under the ``strike`` policy."""
    max_hands_per_game: int = DEFAULT_MAX_HANDS
    """A game still undecided after this many hands ends with no winner."""
    match_id: str = "match"
    """Identifier sent to the bots and written in the record."""

    def __post_init__(self) -> None:
        if not 1 <= self.games <= 1_000_000:
            raise ValueError("games must be between 1 and 1000000")
        if self.target_points is not None and self.target_points < 1:
            raise ValueError("target points must be positive")
        if not 1 <= self.strikes <= 1000:
            raise ValueError("strikes must be between 1 and 1000")
        if not 1 <= self.max_hands_per_game <= 100_000:
            raise ValueError("max hands per game must be between 1 and 100000")


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
    """Seconds spent deciding, as measured by the referee."""
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
    """``normal``, ``forfeit`` (a bot lost the match by fault) or ``aborted``."""
    games_played: int
    """Games played to the end (including forfeited games)."""
    seats: tuple[SeatSummary, SeatSummary]
    """Per-seat totals."""
    interrupted: bool = False
    """True when the match was stopped by a signal before its end."""
    record_path: str | None = None
    """The record file, if one was written."""

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
            "seats": [s.to_dict() for s in self.seats],
        }
