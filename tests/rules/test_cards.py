"""Cards, card text and card sets."""

from __future__ import annotations

import pytest

from referee.rules import (
    DECK,
    Card,
    CardParseError,
    CardSet,
    Rank,
    Suit,
    deadwood,
    parse_cards,
)


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


@pytest.mark.parametrize(
    ("text", "bad"),
    [("As Zz", "Zz"), ("1x", "1x"), ("11s", "11s"), ("Ax", "Ax"), ("A", "A"), ("1", "1")],
)
def test_parser_names_the_bad_token(text: str, bad: str) -> None:
    with pytest.raises(CardParseError) as info:
        parse_cards(text)
    assert info.value.token == bad
    assert repr(bad) in str(info.value)


def test_a_rank_of_1_is_an_ace_in_card_lists() -> None:
    # Seed 000 writes its example hands with 1 for the ace and 10 for the ten.
    first = parse_cards("1♥ 1♠ 3♦ 6♥ 7♥ K♦ 3♠ 4♦ 2♠ 2♣")
    second = parse_cards("J♣ J♥ K♠ Q♠ 1♦ 3♣ 3♥ 7♦ 9♣ 10♣")
    assert [str(c) for c in first] == ["Ah", "As", "3d", "6h", "7h", "Kd", "3s", "4d", "2s", "2c"]
    assert str(second[4]) == "Ad" and str(second[9]) == "Tc"
    # The seed's sums (39 and 73) add every card; the rules count deadwood, after melds
    # (As 2s 3s, and 9c Tc Jc), which is 33 and 44.
    assert sum(c.value for c in first) == 39 and sum(c.value for c in second) == 73
    assert deadwood(first) == 33 and deadwood(second) == 44
    assert parse_cards("1s, 1c") == parse_cards("As Ac")
    with pytest.raises(CardParseError):
        Card.parse("1s")  # the single-card parser stays canonical


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
