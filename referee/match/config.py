"""A match's configuration (rules, clocks, fault policy, deals) as plain immutable data."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from referee.match.clock import TimeControl
from referee.match.faults import FaultPolicy
from referee.rules import STANDARD, Card, RuleSet, shuffled_deck

__all__ = ["DEFAULT_MAX_HANDS", "MatchConfig", "seeded_deck"]

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
