"""A match's configuration (rules, clocks, fault policy, deals) as plain immutable data."""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.match.clock import TimeControl
from referee.match.deals import Deal
from referee.match.faults import FaultPolicy
from referee.rules import STANDARD, RuleSet

__all__ = ["DEFAULT_MAX_HANDS", "MatchConfig"]

DEFAULT_MAX_HANDS = 200
"""Hands after which an undecided game ends without a winner (``how: hand_cap``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchConfig:
    """Everything that defines a match except the bots."""

    rules: RuleSet = STANDARD
    """The rule set."""
    games: int = 10
    """Games to play (with ``target_points``: the most games to play)."""
    target_points: int | None = None
    """If set, the match ends when a bot's match points (game totals) reach this."""
    seed: int | None = None
    """A public deal seed for strategy testing (deals then are NOT secret); when set, it
    replaces ``deal`` with :meth:`Deal.from_seed`. None: secret deals."""
    deal: Deal = field(default_factory=Deal.random)
    """The deal secrets (fresh random ones by default; a tournament passes its own)."""
    deal_id: str | None = None
    """What this match's decks derive from along with the key (default: ``match_id``)."""
    reveal_key: bool = True
    """Reveal the deal key in ``match_end`` and the record (False in a tournament, whose
    one key is revealed when the tournament has ended)."""
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
        if self.seed is not None:
            object.__setattr__(self, "deal", Deal.from_seed(self.seed))
        if not 1 <= self.games <= 1_000_000:
            raise ValueError("games must be between 1 and 1000000")
        if self.target_points is not None and self.target_points < 1:
            raise ValueError("target points must be positive")
        if not 1 <= self.strikes <= 1000:
            raise ValueError("strikes must be between 1 and 1000")
        if not 1 <= self.max_hands_per_game <= 100_000:
            raise ValueError("max hands per game must be between 1 and 100000")

    @property
    def deal_label(self) -> str:
        """The ``deal_id`` the decks derive from."""
        return self.match_id if self.deal_id is None else self.deal_id
