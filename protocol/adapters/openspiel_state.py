"""The referee's hand as an OpenSpiel ``gin_rummy`` state, and OpenSpiel's actions as the
referee's (for :mod:`protocol.adapters.openspiel`).

OpenSpiel's game is one hand in which player 0 acts first: the referee's non-dealer is player
0, its dealer player 1. :func:`replay` builds the state from a :class:`HandLog`: the deal
(this seat's ten cards, the opponent's hidden ones from :meth:`HandLog.hidden_cards`, the
upcard), then every move, a stock draw followed by its chance outcome. It is rebuilt at each
request, so a card the opponent discards is one it holds in the state. Actions: cards 0-51
(discards; OpenSpiel numbers them by suit ``s c d h``, ace to king), 52 draw the upcard, 53
draw from the stock, 54 pass, 55 knock, 56 and up lay a meld.

Needs ``pyspiel`` (``pip install open_spiel``), imported by :class:`Cards`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from protocol.adapters.hand_log import HandLog
from protocol.schema import Request, WireAction

__all__ = [
    "DRAW_STOCK",
    "DRAW_UPCARD",
    "KNOCK",
    "MELD_BASE",
    "PASS",
    "Cards",
    "Diverged",
    "fallback",
    "replay",
]

DRAW_UPCARD = 52
DRAW_STOCK = 53
PASS = 54
KNOCK = 55
MELD_BASE = 56
_KINDS = {"pass_upcard": PASS, "take_discard": DRAW_UPCARD, "draw_stock": DRAW_STOCK}
UPCARD_DRAW_LIMIT = 50
"""OpenSpiel ends a hand as a draw at its 50th draw of an upcard (``kMaxNumDrawUpcardActions``:
its guard against endless hands); the referee's turn cap is in discards."""


class Diverged(Exception):
    """OpenSpiel's game cannot follow the referee's hand any further (it says why)."""


class Cards:
    """OpenSpiel's card numbers and melds (``pyspiel.gin_rummy.GinRummyUtils``)."""

    def __init__(self) -> None:
        import pyspiel

        self.utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        self.phases: Any = pyspiel.gin_rummy.Phase
        """OpenSpiel's phases (``DRAW``, ``DISCARD``, ``KNOCK``...)."""
        self.melds: dict[int, list[int]] = dict(self.utils.int_to_meld)

    def number(self, card: str) -> int:
        """OpenSpiel's number of a wire card (``"Td"``)."""
        return int(self.utils.card_int(card))

    def text(self, number: int) -> str:
        """The wire card of OpenSpiel's card ``number``."""
        return str(self.utils.card_string(number))

    def meld(self, action: int) -> tuple[str, ...]:
        """The cards of a meld action (56 and up)."""
        return tuple(self.text(n) for n in self.melds[action - MELD_BASE])

    def deadwood(self, cards: Sequence[str]) -> int:
        """The least deadwood of ten cards (of the best ten of eleven)."""
        return int(self.utils.min_deadwood([self.number(c) for c in cards]))

    def value(self, card: str) -> int:
        """A card's points (ace 1, faces 10)."""
        return int(self.utils.card_value(self.number(card)))


Inform = Callable[[int, Any, int, int], None]
"""``(move index, state before the move, OpenSpiel player, action)``, for the opponent's
moves as :func:`replay` applies them."""


def replay(
    initial: Any,
    cards: Cards,
    log: HandLog,
    player: int,
    order: Sequence[str],
    inform: Inform | None = None,
) -> Any:
    """The OpenSpiel state of the hand in ``log`` for OpenSpiel ``player`` (0: this seat is
    the non-dealer), from ``initial`` (the game's initial state, cloned: making one takes
    milliseconds), with the opponent's hidden cards drawn from ``order``; :class:`Diverged`
    where OpenSpiel's game does not allow a move the referee did, or has ended the hand."""
    opponent_deal, opponent_draws = log.hidden_cards(order)
    state = initial.clone()
    deals = (log.dealt, opponent_deal) if player == 0 else (opponent_deal, log.dealt)
    for card in (*deals[0], *deals[1], log.upcard):
        state.apply_action(cards.number(card))
    draws = iter(opponent_draws)
    upcard_draws = 0
    for index, move in enumerate(log.moves):
        who = player if move.mine else 1 - player
        action = _KINDS.get(move.kind)
        if action is None:
            action = cards.number(str(move.card))
        if state.current_player() != who or action not in state.legal_actions():
            raise Diverged(f"OpenSpiel's game does not allow move {index + 1} ({move}) here")
        if action == DRAW_UPCARD and state.current_phase() == cards.phases.DRAW:
            upcard_draws += 1
            if upcard_draws >= UPCARD_DRAW_LIMIT:
                raise Diverged(
                    f"OpenSpiel's game ends a hand at its {UPCARD_DRAW_LIMIT}th draw of an upcard"
                )
        if inform is not None and not move.mine:
            inform(index, state, who, action)
        state.apply_action(action)
        if action == DRAW_STOCK:
            drawn = move.card if move.mine else next(draws, None)
            state.apply_action(cards.number(str(drawn)))
    if state.is_terminal() or state.current_player() != player:
        raise Diverged(f"OpenSpiel's game has player {state.current_player()} to act")
    return state


def fallback(cards: Cards, request: Request, *, knock: bool) -> WireAction:
    """A legal move when the bot's cannot be played: at a draw, the stock (or a pass of the
    first upcard); at a discard, with ``knock``, big gin or the knock leaving the least
    deadwood if one is legal, else the discard leaving the least deadwood (the highest card
    on ties), the way the greedy sample bot plays."""
    legal = request.legal
    if request.decision != "discard":
        for kind in ("draw_stock", "pass_upcard"):
            for action in legal:
                if action.kind == kind:
                    return action
        return legal[0]
    hand = request.view.hand

    def after(action: WireAction) -> tuple[int, int]:
        card = str(action.card)
        return cards.deadwood([c for c in hand if c != card]), -cards.value(card)

    if knock:
        for action in legal:
            if action.kind == "big_gin":
                return action
        knocks = [a for a in legal if a.kind == "knock"]
        if knocks:
            return min(knocks, key=after)
    discards = [a for a in legal if a.kind == "discard"]
    return min(discards, key=after) if discards else legal[0]
