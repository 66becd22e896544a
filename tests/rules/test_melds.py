"""Melds, deadwood and knock discards, against pinned tables and brute force."""

from __future__ import annotations

import itertools
import random

import pytest

from referee.rules import ALL_MELDS, Card, CardSet, InvalidMeld, Meld, MeldKind, parse_cards
from referee.rules.melds import best_melds, deadwood, knock_discards, meld_kind, melds_in


def brute_deadwood(cards: CardSet) -> int:
    """Minimum deadwood by trying every subset of the deck's melds (slow, obviously right)."""
    inside = [m.mask for m in ALL_MELDS if m.mask & ~cards.mask == 0]
    best = 0
    for r in range(len(inside) + 1):
        for combo in itertools.combinations(inside, r):
            used = 0
            ok = True
            for m in combo:
                if used & m:
                    ok = False
                    break
                used |= m
            if ok:
                best = max(best, CardSet(used).value)
    return cards.value - best


def test_meld_count_is_pinned() -> None:
    sets = [m for m in ALL_MELDS if m.kind is MeldKind.SET]
    runs = [m for m in ALL_MELDS if m.kind is MeldKind.RUN]
    assert len(sets) == 13 * 5  # 4 threes and 1 four per rank
    assert len(runs) == 4 * sum(14 - n for n in range(3, 14))  # 66 runs per suit
    assert len([r for r in runs if len(r.cards) <= 5]) == 120  # OpenSpiel's figure
    assert len(set(ALL_MELDS)) == 329


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("As 2s 3s", MeldKind.RUN),
        ("Js Qs Ks", MeldKind.RUN),
        ("7c 7d 7h", MeldKind.SET),
        ("7c 7d 7h 7s", MeldKind.SET),
        ("Qs Ks As", None),
        ("7c 7d", None),
        ("2h 3h 5h", None),
        ("2h 3h 4s", None),
    ],
)
def test_meld_kinds(text: str, kind: MeldKind | None) -> None:
    assert meld_kind(CardSet.parse(text).mask) == kind
    if kind is None:
        with pytest.raises(InvalidMeld):
            Meld.from_cards(parse_cards(text))


def test_invalid_meld_repeating_card() -> None:
    with pytest.raises(InvalidMeld, match="repeats"):
        Meld.from_cards((Card.parse("As"), Card.parse("As"), Card.parse("2s")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("3c 3d 3h 3s 4h 5h 6h 7h 6s 9s", 15),
        ("As 2s 3s 4s 4c 4d", 0),  # 4s joins the set, not the run: A23 + 444
        ("7c 7d 7h 7s 8s 9s", 0),
        ("Kc Kd Qs Js 9h", 49),
        ("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc", 0),
    ],
)
def test_deadwood_examples(text: str, expected: int) -> None:
    cards = CardSet.parse(text)
    assert deadwood(cards) == expected
    melds, rest = best_melds(cards)
    assert rest.value == expected
    covered = CardSet()
    for meld in melds:
        assert not (covered & meld.cards)
        covered = covered | meld.cards
    assert covered | rest == cards


def test_deadwood_matches_brute_force_on_random_and_dense_hands() -> None:
    rng = random.Random(11)
    dense = [c for c in ALL_MELDS[0].cards] + list(parse_cards("4c 4d 4h 5c 5d 5h 6c 6d"))
    pool = list(CardSet.parse("2c 3c 4c 5c 6c 2d 3d 4d 5d 6d 2h 3h 4h 5h 6h"))
    for _ in range(300):
        size = rng.randint(0, 11)
        cards = CardSet.of(rng.sample(pool, min(size, len(pool))))
        assert deadwood(cards) == brute_deadwood(cards), str(cards)
    assert dense  # the dense pool above is the hard case; random full-deck hands below
    deck = list(CardSet.of(dense)) + list(parse_cards("9s Ts Js Qs Ks"))
    for _ in range(200):
        cards = CardSet.of(rng.sample(deck, rng.randint(3, 11)))
        assert deadwood(cards) == brute_deadwood(cards), str(cards)


def test_knock_discards_match_definition() -> None:
    rng = random.Random(5)
    pool = list(CardSet.parse("Ac 2c 3c 4c 5c Ad 2d 3d 4d 5d Ah 2h 3h 4h As 2s 9s Ts"))
    for _ in range(300):
        hand = CardSet.of(rng.sample(pool, 11))
        for limit in (0, 5, 10):
            expected = tuple(c for c in hand if deadwood(hand.remove(c)) <= limit)
            assert knock_discards(hand, limit) == expected, (str(hand), limit)


def test_melds_in_lists_every_contained_meld() -> None:
    hand = CardSet.parse("7c 7d 7h 7s 8s 9s Ts")
    found = {CardSet(m) for m in melds_in(hand.mask)}
    expected = {m.cards for m in ALL_MELDS if m.cards.mask & ~hand.mask == 0}
    assert found == expected
    assert len(found) == 5 + 3  # 4 threes + the four; 789, 89T, 789T
