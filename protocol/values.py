"""The values inside messages: card lists, seats, pairs, the enumerations, and the action,
view, time-control and fault maps (re-exported by :mod:`protocol.schema`).

Like the messages, each nested map is a frozen dataclass whose annotations describe its
wire form (see :mod:`protocol.fields`).

>>> WireAction.knock("7h", (("3c", "3d", "3h"),))
WireAction(kind='knock', card='7h', melds=(('3c', '3d', '3h'),))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, TypeAlias

from protocol.checks import (
    check_card,
    check_cards,
    check_enum,
    check_hand,
    check_int,
    check_melds,
    check_pair,
    check_seat,
    check_str,
)
from protocol.fields import Check

__all__ = [
    "ACTION_KINDS",
    "DECISIONS",
    "MATCH_END_REASONS",
    "MATCH_RESULTS",
    "PHASES",
    "TERMINATIONS",
    "Card",
    "CardList",
    "Cards",
    "Fault",
    "Hand",
    "IntPair",
    "Melds",
    "Pair",
    "RuleValue",
    "Seat",
    "TimeControl",
    "WireAction",
    "WireView",
]

Cards: TypeAlias = tuple[str, ...]
"""A list of card strings, e.g. ``("As", "Td")``."""

Melds: TypeAlias = tuple[Cards, ...]
"""A meld arrangement: a list of melds, each a list of cards."""

IntPair: TypeAlias = tuple[int, int]
"""Two ints indexed by seat (seat 0 first)."""

RuleValue: TypeAlias = int | str | bool | None
"""A value in the ``match_start.rules`` map."""

ACTION_KINDS = (
    "pass_upcard", "take_discard", "draw_stock", "discard", "knock", "big_gin", "defend"
)  # fmt: skip
"""Every ``WireAction.kind``."""

DECISIONS = ("first_upcard", "draw", "discard", "defend")
"""Every ``Request.decision``."""

PHASES = ("first_upcard", "draw", "discard", "hand_over")
"""Every ``WireView.phase``."""

TERMINATIONS = ("knock", "gin", "big_gin", "undercut", "wall", "turn_cap", "forfeit")
"""Every ``HandEnd.termination``."""

MATCH_RESULTS = ("win", "loss", "draw")
"""Every ``MatchEnd.result`` (from the receiving bot's point of view)."""

MATCH_END_REASONS = ("normal", "opponent_forfeit", "your_fault", "aborted")
"""Every ``MatchEnd.reason``."""

Seat: TypeAlias = Annotated[int, Check(check_seat)]
"""A seat: 0 or 1."""

Card: TypeAlias = Annotated[str, Check(check_card)]
"""One canonical card string."""

Hand: TypeAlias = Annotated[Cards, Check(check_hand)]
"""Up to eleven distinct cards."""

CardList: TypeAlias = Annotated[Cards, Check(check_cards)]
"""Up to 52 distinct cards."""

Pair: TypeAlias = Annotated[IntPair, Check(check_pair)]
"""Two non-negative ints indexed by seat."""


@dataclass(frozen=True, slots=True)
class WireAction:
    """A move as it travels on the wire (the "action map").

    ``card`` is required for ``discard`` and ``knock``; in events it may also be set for
    ``take_discard`` and ``draw_stock`` (the card taken, when the receiver may know it).
    ``melds`` is only for ``knock``: an explicit arrangement, or ``None`` to let the
    referee arrange the kept cards, from those cards alone (docs/protocol.md, "A knock
    without melds"); and for ``defend``: the defender's own melds after a knock, or ``None``
    to let the referee arrange its cards for the least deadwood.
    """

    kind: Annotated[str, Check(check_enum, ACTION_KINDS)]
    card: Card | None = None
    melds: Annotated[Melds | None, Check(check_melds)] = None

    @staticmethod
    def pass_upcard() -> WireAction:
        """Decline the first upcard."""
        return WireAction("pass_upcard")

    @staticmethod
    def take_discard(card: str | None = None) -> WireAction:
        """Take the top of the discard pile (``card`` only appears in events)."""
        return WireAction("take_discard", card)

    @staticmethod
    def draw_stock(card: str | None = None) -> WireAction:
        """Draw the top card of the stock (``card`` only appears in events)."""
        return WireAction("draw_stock", card)

    @staticmethod
    def discard(card: str) -> WireAction:
        """Discard ``card`` and end the turn."""
        return WireAction("discard", card)

    @staticmethod
    def defend(melds: Melds | None = None) -> WireAction:
        """After a knock: the defender's own melds (None: the referee arranges them)."""
        return WireAction("defend", None, melds)

    @staticmethod
    def knock(card: str, melds: Melds | None = None) -> WireAction:
        """Discard ``card`` face down and knock, optionally with an explicit arrangement."""
        return WireAction("knock", card, melds)

    @staticmethod
    def big_gin() -> WireAction:
        """Declare big gin: all eleven cards melded, no discard."""
        return WireAction("big_gin")


@dataclass(frozen=True, slots=True)
class WireView:
    """Everything the receiving seat may know about the hand (the "view map")."""

    seat: Seat
    phase: Annotated[str, Check(check_enum, PHASES)]
    to_act: Seat
    dealer: Seat
    hand: Hand
    discard_pile: CardList
    """Bottom to top: the last card is the one that can be taken."""
    stock_size: Annotated[int, Check(check_int, 0, 52)]
    opponent_hand_size: Annotated[int, Check(check_int, 0, 11)]
    opponent_known: Hand
    """Cards the opponent is known to hold because it took them from the pile."""
    knock_limit: int
    multiplier: Annotated[int, Check(check_int, 1)]
    turn: int
    scores: Pair
    """Game scores by seat before this hand."""
    taken_card: Card | None
    """The card this seat took from the pile this turn (it may not discard it)."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The match's clock settings, all in integer milliseconds."""

    move_ms: int
    bank_ms: int
    grace_ms: int
    startup_ms: int


@dataclass(frozen=True, slots=True)
class Fault:
    """Why a match ended abnormally: an error code and a human-readable detail."""

    code: Annotated[str, Check(check_str, 1)]
    detail: str
