"""Test helpers: build deck orders that deal chosen hands."""

from __future__ import annotations

from referee.rules import DECK, Card, HandState, RuleSet, deal, parse_cards
from referee.rules.ruleset import STANDARD


def deck_for(nondealer: str, dealer: str, upcard: str, stock: str = "") -> tuple[Card, ...]:
    """A deck order dealing these hands (dealt alternately, non-dealer first), this upcard,
    then ``stock`` on top of the stock, then every other card in index order."""
    first = parse_cards(nondealer)
    second = parse_cards(dealer)
    assert len(first) == 10 and len(second) == 10, "each hand needs 10 cards"
    order: list[Card] = []
    for a, b in zip(first, second, strict=True):
        order += [a, b]
    order += parse_cards(upcard)
    order += parse_cards(stock)
    assert len(set(order)) == len(order), "a card appears twice"
    order += [card for card in DECK if card not in order]
    return tuple(order)


def position(
    nondealer: str,
    dealer: str,
    upcard: str,
    stock: str = "",
    *,
    rules: RuleSet = STANDARD,
    dealer_seat: int = 0,
) -> HandState:
    """A freshly dealt hand with the given cards."""
    return deal(rules, deck_for(nondealer, dealer, upcard, stock), dealer=dealer_seat)
