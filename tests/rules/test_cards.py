"""Cards, card text and card sets."""

from __future__ import annotations

import pytest

from referee.rules import DECK, Card, CardParseError, CardSet, Rank, Suit, parse_cards


def test_deck_has_52_distinct_cards_in_index_order() -> None:
    assert len(DECK) == 52
    assert [card.index for card in DECK] == list(range(52))
    assert len({str(card) for card in DECK}) == 52


def test_values() -> None:
    values = {str(c.rank.name): c.value for c in DECK if c.suit is Suit.CLUBS}
    assert values["ACE"] == 1 and values["NINE"] == 9
    assert values["TEN"] == values["JACK"] == values["QUEEN"] == values["KING"] == 10
    assert Rank.KING.deadwood_value == 10


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("As", "As"), ("AS", "As"), ("10h", "Th"), ("A♠", "As"), ("qD", "Qd"), ("t♣", "Tc")],
)
def test_parser_accepts_variants(text: str, canonical: str) -> None:
    assert str(Card.parse(text)) == canonical


@pytest.mark.parametrize(("text", "bad"), [("As Zz", "Zz"), ("1s", "1s"), ("Ax", "Ax"), ("A", "A")])
def test_parser_names_the_bad_token(text: str, bad: str) -> None:
    with pytest.raises(CardParseError) as info:
        parse_cards(text)
    assert info.value.token == bad
    assert repr(bad) in str(info.value)


def test_repr_round_trips() -> None:
    for card in DECK:
        assert eval(repr(card), {"Card": Card}) is card


def test_cardset_operations() -> None:
    a = CardSet.parse("As 2s 3s")
    b = CardSet.parse("3s 4s")
    assert len(a | b) == 4
    assert str(a & b) == "3s"
    assert str(a - b) == "As 2s"
    assert Card.parse("2s") in a and Card.parse("4s") not in a
    assert a.value == 6
    assert hash(a) == hash(CardSet.parse("3s 2s As"))
    assert [str(c) for c in b] == ["3s", "4s"]
