"""What one seat has seen of a hand, move by move: the record an adapter replays into another
library's game state (:mod:`protocol.adapters.openspiel_state`).

The log holds the seat's ten cards and the first upcard, then every move of both players in
order, each with the card the seat knows: the one taken from the pile, the one it drew itself
(read from the next request's hand), the one discarded; the opponent's stock draws are
unknown. :meth:`HandLog.sync` checks the log against each request's ``view``, so the replayed
state is the referee's, and :meth:`HandLog.hidden_cards` chooses cards for what the seat
cannot see (the opponent's deal and stock draws) that agree with everything it did see.

>>> log = HandLog(hand=("2c", "3c", "4c", "7d", "7h", "9s", "Td", "Jh", "Qs", "Kd"), upcard="5c")
>>> log.opponent("pass_upcard")
>>> log.mine("draw_stock")
>>> log.sync(("2c", "3c", "4c", "7d", "7h", "9s", "Td", "Jh", "Qs", "Kd", "Ah"), ("5c",), ())
>>> log.moves[-1]
Move(mine=True, kind='draw_stock', card='Ah')
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["HIDDEN_DEAL", "HandLog", "Move", "OutOfStep"]

HIDDEN_DEAL = 10
"""Cards dealt to each player."""


class OutOfStep(RuntimeError):
    """The log does not agree with what the referee shows (an adapter bug: it says where)."""


@dataclass(frozen=True, slots=True)
class Move:
    """One move of the hand: ``mine`` (this seat's) or the opponent's; ``kind`` one of
    ``pass_upcard``, ``take_discard``, ``draw_stock``, ``discard``; ``card`` the card taken,
    drawn or discarded, ``None`` for the opponent's stock draw (and this seat's until the next
    request shows it)."""

    mine: bool
    kind: str
    card: str | None = None


class HandLog:
    """One hand as this seat saw it (module docstring)."""

    def __init__(self, hand: Iterable[str], upcard: str) -> None:
        self.dealt: tuple[str, ...] = tuple(hand)
        self.upcard = upcard
        self.moves: list[Move] = []
        self.hand: set[str] = set(self.dealt)
        self.pile: list[str] = [upcard]
        self.opponent_known: set[str] = set()
        self.over = False
        """The hand ended for this seat (a knock or big gin): nothing more is replayed."""

    def _take(self) -> str:
        if not self.pile:
            raise OutOfStep("a card was taken from an empty discard pile")
        return self.pile.pop()

    def opponent(self, kind: str, card: str | None = None) -> None:
        """The opponent's move (an ``event``); a knock or big gin ends the hand."""
        if kind == "take_discard":
            taken = self._take()
            self.opponent_known.add(taken)
            self.moves.append(Move(False, kind, taken))
        elif kind == "discard" and card is not None:
            self.opponent_known.discard(card)
            self.pile.append(card)
            self.moves.append(Move(False, kind, card))
        elif kind in ("pass_upcard", "draw_stock"):
            self.moves.append(Move(False, kind))
        else:  # knock, big_gin: the hand is over
            self.over = True

    def mine(self, kind: str, card: str | None = None) -> None:
        """This seat's move, as it answered the referee."""
        if kind == "take_discard":
            taken = self._take()
            self.hand.add(taken)
            self.moves.append(Move(True, kind, taken))
        elif kind == "discard" and card is not None:
            self.hand.discard(card)
            self.pile.append(card)
            self.moves.append(Move(True, kind, card))
        elif kind in ("pass_upcard", "draw_stock"):
            self.moves.append(Move(True, kind))
        else:
            self.over = True

    def sync(self, hand: Sequence[str], pile: Sequence[str], known: Sequence[str]) -> None:
        """Read this seat's own stock draw from a request's ``view`` (``hand``, the discard
        pile, ``opponent_known``) and check the log against it; :class:`OutOfStep` if they
        disagree."""
        if self.moves and self.moves[-1] == Move(True, "draw_stock"):
            new = set(hand) - self.hand
            if len(new) != 1:
                raise OutOfStep(f"after a stock draw the hand gained {sorted(new)}")
            (card,) = new
            self.moves[-1] = Move(True, "draw_stock", card)
            self.hand.add(card)
        if self.hand != set(hand):
            raise OutOfStep(f"the log holds {sorted(self.hand)}, the referee {sorted(hand)}")
        if self.pile != list(pile):
            raise OutOfStep(f"the log's discard pile is {self.pile}, the referee's {list(pile)}")
        if self.opponent_known != set(known):
            raise OutOfStep(
                f"the log's opponent holds {sorted(self.opponent_known)} from the pile, "
                f"the referee says {sorted(known)}"
            )

    def seen(self) -> set[str]:
        """Every card this seat has seen: its own (dealt and drawn), the upcard, every
        discard."""
        cards = set(self.dealt) | {self.upcard}
        cards.update(m.card for m in self.moves if m.card is not None)
        return cards

    def hidden_cards(self, order: Sequence[str]) -> tuple[list[str], list[str]]:
        """The opponent's ten dealt cards and the card of each of its stock draws (in order),
        agreeing with what this seat saw: each card the opponent discarded without having
        taken it from the pile is one it was dealt or drew before that discard (the earliest
        such place still free), and every other place gets the next card of ``order`` (a
        shuffled deck) that this seat has not seen."""
        deal: list[str | None] = [None] * HIDDEN_DEAL
        draws: list[str | None] = []
        free: deque[tuple[list[str | None], int]] = deque((deal, i) for i in range(HIDDEN_DEAL))
        from_pile: set[str] = set()
        for move in self.moves:
            if move.mine:
                continue
            if move.kind == "take_discard" and move.card is not None:
                from_pile.add(move.card)
            elif move.kind == "draw_stock":
                draws.append(None)
                free.append((draws, len(draws) - 1))
            elif move.kind == "discard" and move.card is not None:
                if move.card in from_pile:
                    from_pile.discard(move.card)
                    continue
                if not free:
                    raise OutOfStep(f"the opponent discarded {move.card}, which it cannot hold")
                where, index = free.popleft()
                where[index] = move.card
        seen = self.seen()
        unseen = (card for card in order if card not in seen)
        for where, index in free:
            card = next(unseen, None)
            if card is None:
                raise OutOfStep("more hidden cards than unseen ones")
            where[index] = card
        return [c for c in deal if c is not None], [c for c in draws if c is not None]
