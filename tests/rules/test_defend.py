"""The defender declares its own melds after a knock (:class:`Defend`): scored as declared, its
other cards are deadwood less what it lays off; declaring nothing leaves the referee's
arrangement for the least deadwood (docs/rules.md, "After a knock")."""

from __future__ import annotations

import random

import pytest

from referee.rules import (
    STANDARD,
    CardSet,
    Defend,
    HandResult,
    IllegalAction,
    Knock,
    Meld,
    apply,
    deal,
    legal_actions,
    parse_action,
    parse_cards,
    shuffled_deck,
)
from referee.rules.scoring import defend_result, resolve_knock


def meld(text: str) -> Meld:
    return Meld.from_cards(parse_cards(text))


def knock(knocker_hand: str, defender_hand: str) -> HandResult:
    return resolve_knock(
        STANDARD,
        knocker=0,
        knocker_hand=CardSet.parse(knocker_hand).mask,
        defender_hand=CardSet.parse(defender_hand).mask,
        knock_limit=10,
        declared=(meld("5s 6s 7s"), meld("Tc Td Th"), meld("2h 3h 4h")),
    )


KNOCKER = "5s 6s 7s Tc Td Th 2h 3h 4h Ac"  # 1 deadwood
DEFENDER = "8s 9s Jc Jd Jh Js 4c 5c 6c Kd"  # optimal: 8s 9s laid off, two melds: Kd = 10


def test_declared_melds_are_scored_as_declared() -> None:
    result = knock(KNOCKER, DEFENDER)
    assert result.deadwood == (1, 10) and len(result.layoffs) == 2  # the referee's choice
    # The defender melds only its jacks: the clubs run counts as deadwood (15), 8s 9s go off.
    only_jacks = defend_result(STANDARD, result, (meld("Jc Jd Jh Js"),))
    assert only_jacks.defended and only_jacks.deadwood == (1, 4 + 5 + 6 + 10)
    assert [str(card) for card, _ in only_jacks.layoffs] == ["8s", "9s"]
    assert (only_jacks.winner, only_jacks.points) == (0, 24)
    assert only_jacks.melds[1] == (meld("Jc Jd Jh Js"),)


def test_declaring_nothing_leaves_every_card_to_deadwood_or_layoffs() -> None:
    result = defend_result(STANDARD, knock(KNOCKER, DEFENDER), ())
    assert result.deadwood[1] == 4 + 5 + 6 + 10 * 5  # Jc Jd Jh Js Kd, 4c 5c 6c
    assert result.melds[1] == ()


def test_a_declared_card_is_not_laid_off() -> None:
    """A defender that melds 7s 8s 9s itself keeps the 7s out of the knocker's run."""
    knocker = "4s 5s 6s Tc Td Th 2h 3h 4h Ac"
    defender = "7s 8s 9s Jc Jd Jh 4c 5c Kd Qd"
    result = knock(knocker, defender)
    declared = defend_result(STANDARD, result, (meld("7s 8s 9s"), meld("Jc Jd Jh")))
    assert declared.layoffs == () and declared.deadwood[1] == 4 + 5 + 10 + 10


def test_the_action_in_play_and_its_text() -> None:
    rng = random.Random(3)
    checked = 0
    while checked < 25:
        state = deal(STANDARD, shuffled_deck(rng), dealer=0)
        while not state.is_over:
            actions = legal_actions(state)
            knocks = [a for a in actions if isinstance(a, Knock)]
            with pytest.raises(IllegalAction, match="only after a knock"):
                apply(state, Defend(()))
            state = apply(state, knocks[0] if knocks else rng.choice(actions))
        result = state.result
        assert result is not None
        if result.knocker is None:
            continue
        defender = 1 - result.knocker
        again = apply(state, Defend(result.melds[defender]))  # the referee's own: same score
        assert again.result is not None and again.result.defended
        assert (again.result.points, again.result.deadwood) == (result.points, result.deadwood)
        with pytest.raises(IllegalAction, match="already"):
            apply(again, Defend(()))
        text = str(Defend(result.melds[defender]))
        assert parse_action(text) == Defend(result.melds[defender])
        knocker_meld = result.melds[result.knocker][:1]
        if knocker_meld:
            with pytest.raises(IllegalAction, match="not of the defender's cards"):
                apply(state, Defend(knocker_meld))
        checked += 1
    assert parse_action("defend") == Defend(())
