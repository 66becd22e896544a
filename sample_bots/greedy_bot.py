"""A greedy bot: takes the discard only when it lowers its deadwood, discards to the lowest
deadwood (highest card on ties), and knocks as soon as it may (big gin and gin first).

It uses the referee's pure rules library for deadwood, which any Python bot may import.
Run: ``python -m sample_bots.greedy_bot`` (endpoint and token from the environment).
"""

from __future__ import annotations

import gc
import sys

from protocol.bot import Bot, run_bot_main
from protocol.schema import Request, WireAction
from referee.rules import Card, CardSet, deadwood


def _after_discard(hand: CardSet, card: Card) -> tuple[int, int]:
    """Sort key of a discard: resulting deadwood, then prefer shedding high cards."""
    return deadwood(hand.remove(card)), -card.value


class GreedyBot(Bot):
    """Minimises deadwood one decision at a time."""

    def act(self, request: Request) -> WireAction:
        """Pick the greedy action among ``request.legal``."""
        legal = request.legal
        hand = CardSet.of(Card.parse(c) for c in request.view.hand)
        kinds = {a.kind for a in legal}
        if "big_gin" in kinds:
            return WireAction.big_gin()
        knocks = [a for a in legal if a.kind == "knock" and a.card is not None]
        if knocks:
            return min(knocks, key=lambda a: _after_discard(hand, Card.parse(str(a.card))))
        discards = [a for a in legal if a.kind == "discard" and a.card is not None]
        if discards:
            return min(discards, key=lambda a: _after_discard(hand, Card.parse(str(a.card))))
        pile = request.view.discard_pile
        if "take_discard" in kinds and pile:
            top = Card.parse(pile[-1])
            with_top = hand.add(top)
            best = min(deadwood(with_top.remove(c)) for c in hand)
            if best < deadwood(hand):
                return WireAction.take_discard()
        if "draw_stock" in kinds:
            return WireAction.draw_stock()
        return WireAction.pass_upcard()


def main() -> int:
    """Play against the referee named by the environment or the arguments (a stateless bot:
    it may be kept for several matches)."""
    return run_bot_main(GreedyBot(), "greedy-bot", multi_match=True)


if __name__ == "__main__":
    gc.freeze()  # what the imports made lives to the end: the collector skips it (faster exit)
    sys.exit(main())
