"""The scripted battery ``gin-referee check`` plays: fixed decks and a scripted opponent.

The bot under test sits in seat 0 against a :class:`~referee.toolkit.probe.PuppetLink` in seat 1.
The rules are the standard ones with a game target of 1 point, so a game ends at the first hand
anyone scores and each game is one planned situation (the first dealer alternates by game:
seat ``game % 2``). Hand 0 of each game is dealt from a fixed deck; later hands (after a void
hand) from a seeded deal.

- Game 0, the bot deals: its ten cards are gin already (``Ac 2c 3c 4c``, ``7d 7h 7s``,
  ``9h Th Jh``) and every card it can get extends a meld. The puppet passes the upcard (``5c``),
  so the bot answers a ``first_upcard`` request as the dealer; whatever it does next, it reaches
  a ``discard`` decision where a gin knock and ``big_gin`` are legal.
- Game 1, the bot is the non-dealer: two melds and the ``Ah`` (``3c 3d 3h``, ``4s 5s 6s``,
  ``Td Jd Qd``), upcard ``9c``. It answers the first ``first_upcard`` request; if it passes,
  the puppet passes too and the bot gets the third request, where only ``draw_stock`` is legal.
  Either way it reaches a ``discard`` decision with an ordinary knock legal (and no gin).
- Game 2, the bot deals again: before the bot's first request the referee sends it a
  deliberate ``error``; the puppet thinks for a while at its first decision, so an idle bot is
  pinged; the puppet draws the ``Qh`` and throws it, so the bot has a ``draw`` decision
  whatever it did with the upcard; then the puppet draws an ace and knocks, and the bot reads
  the knock and ``hand_end`` as the defender.

The puppet passes the upcard, draws from the stock, knocks whenever a knock is legal from the
hand's third discard on (``view.turn >= 2``), and otherwise discards its highest card (by
deadwood value, then index).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from protocol.schema import Request, WireAction
from referee.match.deals import Deal
from referee.rules import DECK, STANDARD, Card, RuleSet, parse_cards
from referee.toolkit.probe import PuppetLink

__all__ = [
    "BATTERY_GAMES",
    "CHECK_RULES",
    "ERROR_GAME",
    "PUPPET_THINK",
    "battery_deck",
    "puppet_delay",
    "puppet_move",
    "scripted_deck",
]

CHECK_RULES: RuleSet = replace(STANDARD, name="check", target=1)
"""Standard rules, but a game ends at the first scoring hand."""

BATTERY_GAMES = 3
"""Games of the battery (one planned situation each)."""

ERROR_GAME = 2
"""The game before whose first request the bot is sent a deliberate ``error``."""

PUPPET_THINK = 4.0
"""The puppet's thinking time at its first decision of :data:`ERROR_GAME`, in heartbeats."""

_SEED_DEAL = Deal.from_seed(20261124)


def scripted_deck(nondealer: str, dealer: str, upcard: str, stock: str = "") -> tuple[Card, ...]:
    """A deck dealing these cards (ten each; ``stock`` is the top of the stock, first drawn
    first); the remaining cards fill the rest of the stock in index order."""
    first, second = parse_cards(nondealer), parse_cards(dealer)
    up, head = parse_cards(upcard), parse_cards(stock)
    if len(first) != 10 or len(second) != 10 or len(up) != 1:
        raise ValueError("a scripted deal needs ten cards each and one upcard")
    used = [*first, *second, *up, *head]
    if len(set(used)) != len(used):
        raise ValueError("a scripted deal names a card twice")
    dealt = [card for pair in zip(first, second, strict=True) for card in pair]
    rest = [card for card in DECK if card not in set(used)]
    return (*dealt, *up, *head, *rest)


_DECKS: dict[int, tuple[Card, ...]] = {
    0: scripted_deck(
        "2d 4d 6d 8d 3s 5s 8s 2h 4h 6h", "Ac 2c 3c 4c 7d 7h 7s 9h Th Jh", "5c", "Qh 7c 8h 6c"
    ),
    1: scripted_deck(
        "3c 3d 3h 4s 5s 6s Td Jd Qd Ah", "Kc Qs 8c 5d 9s 7h Kh 2s Jc 6c", "9c", "2d 4h"
    ),
    2: scripted_deck(
        "5h 6h 7h 8c 8d 8s Jc Qc Kc 2s", "Kd Qs 9d 7s 4c 3d Th 6c Ad 2h", "Ks", "Qh Ac As"
    ),
}


def battery_deck(game: int, hand: int) -> tuple[Card, ...]:
    """The deck of a hand of the battery (the planned one for hand 0 of a planned game)."""
    planned = _DECKS.get(game)
    if hand == 0 and planned is not None:
        return planned
    return _SEED_DEAL.deck("check", game, hand)


def _value(text: str) -> tuple[int, int]:
    card = parse_cards(text)[0]
    return card.value, card.index


def puppet_move(link: PuppetLink, request: Request) -> WireAction:
    """The scripted opponent's move (see the module docstring)."""
    legal: Sequence[WireAction] = request.legal
    for kind in ("pass_upcard", "draw_stock"):
        for action in legal:
            if action.kind == kind:
                return action
    knocks = [a for a in legal if a.kind == "knock"]
    if knocks and request.view.turn >= 2:
        return knocks[0]
    discards = [a for a in legal if a.kind == "discard" and a.card is not None]
    if discards:
        return max(discards, key=lambda a: _value(a.card or ""))
    return legal[0]


def puppet_delay(link: PuppetLink, request: Request) -> float:
    """Seconds the puppet waits before answering: it thinks for :data:`PUPPET_THINK`
    heartbeats at its first decision of :data:`ERROR_GAME` (the bot is pinged meanwhile)."""
    view = request.view
    first = request.decision == "first_upcard" and view.turn == 0 and view.to_act != view.dealer
    if first and (link.game, link.hand) == (ERROR_GAME, 0):
        return PUPPET_THINK * link.control.heartbeat
    return 0.0
