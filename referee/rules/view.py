"""What one seat may know: :func:`observe` is the only view of a hand a bot ever gets.

A view holds the seat's own hand, the discard pile, the stock's size (never its order), the
cards the opponent is known to hold because it took them from the pile, the scores and the
phase. The opponent's other cards stay hidden until the hand is over, when the result (both
hands, melds and layoffs) is public.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.rules.cards import DECK, Card, CardSet
from referee.rules.scoring import HandResult
from referee.rules.state import HandState, Phase

__all__ = ["PlayerView", "observe"]


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One seat's knowledge of a hand."""

    seat: int
    """The seat this view belongs to."""
    phase: Phase
    """Current phase."""
    to_act: int
    """Seat to decide."""
    dealer: int
    """Seat that dealt."""
    hand: CardSet
    """The seat's own cards."""
    discard_pile: tuple[Card, ...]
    """Discard pile, bottom first (the top card is last)."""
    stock_size: int
    """Cards left in the stock."""
    opponent_hand_size: int
    """How many cards the opponent holds."""
    opponent_known: CardSet
    """Cards the opponent holds that it took from the discard pile."""
    knock_limit: int
    """Knock limit in force for this hand."""
    multiplier: int
    """Score multiplier of this hand."""
    turn: int
    """Discards made so far."""
    scores: tuple[int, int]
    """Game scores by seat before this hand."""
    taken_card: Card | None
    """The card this seat took from the pile this turn (it may not discard it)."""
    result: HandResult | None
    """The hand's result once it is over (public)."""


def observe(state: HandState, seat: int) -> PlayerView:
    """The view of ``state`` that ``seat`` is entitled to.

    >>> import random
    >>> from referee.rules.state import deal, shuffled_deck
    >>> from referee.rules.ruleset import STANDARD
    >>> view = observe(deal(STANDARD, shuffled_deck(random.Random(1)), dealer=0), 1)
    >>> len(view.hand), view.stock_size, len(view.opponent_known)
    (10, 31, 0)
    """
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    other = 1 - seat
    taken = DECK[state.taken] if state.taken >= 0 and state.to_act == seat else None
    return PlayerView(
        seat=seat,
        phase=state.phase,
        to_act=state.to_act,
        dealer=state.dealer,
        hand=CardSet(state.hands[seat]),
        discard_pile=tuple(DECK[i] for i in state.discard_pile),
        stock_size=state.stock_size,
        opponent_hand_size=state.hands[other].bit_count(),
        opponent_known=CardSet(state.known[other]),
        knock_limit=state.knock_limit,
        multiplier=state.multiplier,
        turn=state.turn,
        scores=state.scores,
        taken_card=taken,
        result=state.result if state.phase is Phase.HAND_OVER else None,
    )
