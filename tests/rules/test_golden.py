"""Golden hands: one hand-built deal for every rule, played through the state machine."""

from __future__ import annotations

from dataclasses import replace

import pytest

from referee.rules import (
    BIG_GIN,
    CLASSIC,
    DECK,
    DRAW_STOCK,
    OKLAHOMA,
    PASS_UPCARD,
    STANDARD,
    TAKE_DISCARD,
    Card,
    HandState,
    IllegalAction,
    Knock,
    Meld,
    Phase,
    Termination,
    apply,
    discard_action,
    knock_action,
    legal_actions,
    parse_cards,
)
from tests.rules.helpers import position

C = Card.parse


def draw_and_knock(state: HandState, card: str) -> HandState:
    """Both players pass the upcard; the non-dealer draws from the stock and knocks ``card``."""
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    return apply(state, knock_action(C(card)))


def test_chained_layoffs_onto_a_run_and_a_set() -> None:
    state = position(
        nondealer="5s 6s 7s Kc Kd Kh 2c 3c 4c 9d",
        dealer="8s 9s Ks Qd Jh 2d 7h 6d 5d 3h",
        upcard="Ad",
        stock="2h",
    )
    end = draw_and_knock(state, "9d")
    result = end.result
    assert result is not None
    assert result.termination is Termination.KNOCK and result.knocker == 1
    laid = [str(card) for card, _ in result.layoffs]
    assert sorted(laid) == ["8s", "9s", "Ks"]
    assert laid.index("8s") < laid.index("9s")  # 9s only after 8s joined the run
    assert result.deadwood == (43, 2)
    assert (result.winner, result.points) == (1, 41)


def test_no_layoff_onto_gin() -> None:
    state = position(
        nondealer="5s 6s 7s Kc Kd Kh 2c 3c 4c 9d",
        dealer="8s 9s Ks Qd Jh 2d 7h 6d Ac 3h",
        upcard="Ad",
        stock="5c",
    )
    result = draw_and_knock(state, "9d").result
    assert result is not None
    assert result.termination is Termination.GIN
    assert result.layoffs == ()
    assert result.deadwood == (66, 0)
    assert result.points == 25 + 66


def test_seed_gin_example_counts_15_and_scores_40() -> None:
    state = position(
        nondealer="8c 8d 8h Jc Qc Kc Td Jd Qd 2c",
        dealer="3c 3d 3h 3s 4h 5h 6h 7h 6s 9s",
        upcard="Ah",
        stock="Kd",
    )
    result = draw_and_knock(state, "2c").result
    assert result is not None
    assert result.termination is Termination.GIN
    assert result.deadwood[0] == 15
    assert result.points == 40


def test_tie_is_an_undercut() -> None:
    state = position(
        nondealer="As 2s 3s 7c 7d 7h 9c 9d 9h 5d",
        dealer="Qc Qd Qh Jc Jd Jh Tc Td Th 5c",
        upcard="2c",
        stock="Kc",
    )
    result = draw_and_knock(state, "Kc").result
    assert result is not None
    assert result.termination is Termination.UNDERCUT
    assert result.deadwood == (5, 5)
    assert (result.winner, result.points) == (0, 25)


def test_defender_breaks_its_set_to_lay_off() -> None:
    state = position(
        nondealer="4h 5h 6h Kc Kd Ks Qc Jc Tc 2d",
        dealer="7c 7d 7h 7s 8h 2c 3s 5d 8d 9c",
        upcard="Ad",
        stock="As",
    )
    result = draw_and_knock(state, "2d").result
    assert result is not None
    # 7h leaves the four sevens to carry 8h onto 4h5h6h; 9c goes onto TcJcQc.
    assert sorted(str(c) for c, _ in result.layoffs) == ["7h", "8h", "9c"]
    assert [str(m) for m in result.melds[0]] == ["7c 7d 7s"]
    assert result.deadwood == (18, 1)
    assert result.points == 17


KNOCKER = "7c 7d 7h 7s 4s 5s 6s Ac Ad 2h"
DEFENDER = "8s Qc Qd Jh Jd 9c 2c 3d 5h Th"


def test_engine_picks_the_arrangement_that_exposes_fewer_layoffs() -> None:
    # Blind (issue 30): 7777 + 456s and 777 + 4567s both leave Ac Ad 2h (4); the first exposes
    # only 3s (7s is the knocker's own), the second 3s and 8s. It happens to deny the defender's
    # 8s, as the old hindsight rule did, but would be chosen whatever the defender held.
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd", stock="Kh")
    result = draw_and_knock(state, "Kh").result
    assert result is not None
    assert {str(m) for m in result.melds[1]} == {"7c 7d 7h 7s", "4s 5s 6s"}
    assert result.layoffs == ()
    assert result.points == 77 - 4


def test_knocker_may_declare_its_own_arrangement() -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd", stock="Kh")
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    melds = (Meld.from_cards(parse_cards("7c 7d 7h")), Meld.from_cards(parse_cards("4s 5s 6s 7s")))
    result = apply(state, Knock(C("Kh"), melds)).result
    assert result is not None
    assert [str(c) for c, _ in result.layoffs] == ["8s"]
    assert result.points == 69 - 4


def test_declared_arrangement_is_validated() -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd", stock="Kh")
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    overlapping = (
        Meld.from_cards(parse_cards("7c 7d 7h 7s")),
        Meld.from_cards(parse_cards("5s 6s 7s")),
    )
    with pytest.raises(IllegalAction, match="overlaps"):
        apply(state, Knock(C("Kh"), overlapping))
    too_little = (Meld.from_cards(parse_cards("7c 7d 7h")),)
    with pytest.raises(IllegalAction, match="above the knock limit"):
        apply(state, Knock(C("Kh"), too_little))
    foreign = (Meld.from_cards(parse_cards("Kh Kc Ks")),)
    with pytest.raises(IllegalAction, match="not in the hand kept"):
        apply(state, Knock(C("4s"), foreign))


def test_wall_voids_the_hand() -> None:
    state = position(
        nondealer="Ac 3c 5c 7c 9c Jc Kc 2d 4d 6d",
        dealer="8d Td Qd Ah 3h 5h 7h 9h Jh Kh",
        upcard="2s",
    )
    state = apply(apply(state, PASS_UPCARD), PASS_UPCARD)
    while not state.is_over:
        before = state.hands[state.to_act]
        state = apply(state, DRAW_STOCK)
        drawn = state.hands[state.to_act] & ~before
        state = apply(state, discard_action(Card.from_index(drawn.bit_length() - 1)))
    assert state.result is not None
    assert state.result.termination is Termination.WALL
    assert state.stock_size == 2
    assert (state.result.winner, state.result.points) == (None, 0)
    assert state.turn == 29


def test_a_player_may_still_knock_on_the_wall_discard() -> None:
    state = position(
        nondealer="Ac 3c 5c 7c 9c Jc Kc 2d 4d 6d",
        dealer="8d Td Qd Ah 3h 5h 7h 9h Jh Kh",
        upcard="2s",
    )
    state = apply(apply(state, PASS_UPCARD), PASS_UPCARD)
    while state.stock_size > 3 or state.phase is not Phase.DRAW:
        if state.phase is not Phase.DISCARD:
            before = state.hands[state.to_act]
            state = apply(state, DRAW_STOCK)
            drawn = state.hands[state.to_act] & ~before
        state = apply(state, discard_action(Card.from_index(drawn.bit_length() - 1)))
    state = apply(state, DRAW_STOCK)
    assert state.stock_size == 2 and state.phase is Phase.DISCARD


def test_turn_cap_voids_a_hand_of_traded_discards() -> None:
    rules = replace(STANDARD, turn_cap=4)
    state = position(
        nondealer="Ac 3c 5c 7c 9c Jc Kc 2d 4d 6d",
        dealer="8d Td Qd Ah 3h 5h 7h 9h Jh Kh",
        upcard="2s",
        rules=rules,
    )
    state = apply(state, PASS_UPCARD)
    state = apply(state, PASS_UPCARD)
    state = apply(state, DRAW_STOCK)
    state = apply(state, discard_action(C("Kc")))
    for _ in range(3):
        top = DECK[state.discard_pile[-1]]
        state = apply(state, TAKE_DISCARD)
        keep = [a for a in legal_actions(state) if a != discard_action(top)]
        state = apply(state, keep[0])
    assert state.result is not None
    assert state.result.termination is Termination.TURN_CAP
    assert state.result.winner is None


BIG = "As 2s 3s 4s 7c 7d 7h Kc Kd Kh"


def test_big_gin_scores_its_bonus() -> None:
    state = position(nondealer=BIG, dealer=DEFENDER.replace("8s", "8c"), upcard="Qs", stock="5s")
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    assert BIG_GIN in legal_actions(state)
    result = apply(state, BIG_GIN).result
    assert result is not None
    assert result.termination is Termination.BIG_GIN
    assert result.points == 31 + result.deadwood[0]


def test_big_gin_is_refused_under_classic() -> None:
    state = position(nondealer=BIG, dealer=DEFENDER, upcard="Qs", stock="5s", rules=CLASSIC)
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    assert BIG_GIN not in legal_actions(state)
    with pytest.raises(IllegalAction, match="not played"):
        apply(state, BIG_GIN)
    assert apply(state, knock_action(C("5s"))).result is not None


@pytest.mark.parametrize(
    ("upcard", "limit", "multiplier"), [("8h", 8, 1), ("Ah", 0, 1), ("9s", 9, 2), ("Kd", 10, 1)]
)
def test_oklahoma_upcard_sets_limit_and_spades_double(
    upcard: str, limit: int, multiplier: int
) -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard=upcard, rules=OKLAHOMA)
    assert (state.knock_limit, state.multiplier) == (limit, multiplier)


def test_oklahoma_refuses_a_knock_above_the_upcard_limit_and_doubles_on_spades() -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="3h", stock="Kh", rules=OKLAHOMA)
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    with pytest.raises(IllegalAction, match="above the knock limit 3"):
        apply(state, knock_action(C("Kh")))
    doubled = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="9s", stock="Kh", rules=OKLAHOMA)
    result = draw_and_knock(doubled, "Kh").result
    assert result is not None
    assert result.points == 2 * (77 - 4)


def test_first_upcard_both_pass_then_nondealer_must_draw_stock() -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd", dealer_seat=1)
    assert state.to_act == 0 and legal_actions(state) == (TAKE_DISCARD, PASS_UPCARD)
    state = apply(state, PASS_UPCARD)
    assert state.to_act == 1 and legal_actions(state) == (TAKE_DISCARD, PASS_UPCARD)
    state = apply(state, PASS_UPCARD)
    assert state.to_act == 0 and legal_actions(state) == (DRAW_STOCK,)
    with pytest.raises(IllegalAction, match="both players passed"):
        apply(state, TAKE_DISCARD)
    with pytest.raises(IllegalAction, match="only allowed on the first upcard"):
        apply(state, PASS_UPCARD)
    state = apply(state, DRAW_STOCK)
    assert state.phase is Phase.DISCARD and len(state.hand(0)) == 11


def test_dealer_may_take_the_upcard_after_a_pass() -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd")
    state = apply(apply(state, PASS_UPCARD), TAKE_DISCARD)
    assert state.to_act == 0 and state.phase is Phase.DISCARD
    assert C("Kd") in state.hand(0) and state.known[0] == C("Kd").mask


def test_card_taken_from_the_pile_may_not_be_discarded_the_same_turn() -> None:
    state = apply(position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd"), TAKE_DISCARD)
    assert discard_action(C("Kd")) not in legal_actions(state)
    with pytest.raises(IllegalAction, match="just taken from the discard pile"):
        apply(state, discard_action(C("Kd")))
    with pytest.raises(IllegalAction, match="not in your hand"):
        apply(state, discard_action(C("Qs")))
    state = apply(state, discard_action(C("2h")))
    assert state.phase is Phase.DRAW and state.to_act == 0


def test_actions_out_of_phase_are_refused_with_reasons() -> None:
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd")
    with pytest.raises(IllegalAction, match="draw a card first"):
        apply(state, discard_action(C("2h")))
    with pytest.raises(IllegalAction, match="take or pass"):
        apply(state, DRAW_STOCK)
    over = draw_and_knock(
        position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd", stock="Kh"), "Kh"
    )
    assert legal_actions(over) == ()
    with pytest.raises(IllegalAction, match="hand is over"):
        apply(over, DRAW_STOCK)


def test_a_knocked_card_taken_from_the_pile_is_no_longer_known() -> None:
    # Regression (found by hypothesis): the knock discard stayed in the knocker's known cards.
    state = position(nondealer=KNOCKER, dealer=DEFENDER, upcard="Kd", stock="Qh 2d")
    state = apply(state, TAKE_DISCARD)  # the non-dealer takes Kd: now known
    state = apply(state, discard_action(C("2h")))
    assert state.known[1] == C("Kd").mask
    state = apply(apply(state, DRAW_STOCK), discard_action(C("Qh")))  # the dealer
    state = apply(state, DRAW_STOCK)  # the non-dealer draws 2d
    over = apply(state, knock_action(C("Kd")))
    assert over.result is not None and over.result.knocker == 1
    assert over.known == (0, 0)
