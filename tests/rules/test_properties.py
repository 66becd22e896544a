"""Hypothesis properties over random deals and random legal play."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules import (
    BIG_GIN,
    DECK,
    DRAW_STOCK,
    PASS_UPCARD,
    PRESETS,
    TAKE_DISCARD,
    Action,
    Card,
    CardSet,
    HandState,
    IllegalAction,
    Phase,
    RuleSet,
    Termination,
    apply,
    check,
    deadwood,
    deal,
    discard_action,
    is_legal,
    knock_action,
    legal_actions,
    observe,
    replay,
)
from tests.rules.test_melds import brute_deadwood

UNIVERSE: tuple[Action, ...] = (
    PASS_UPCARD,
    TAKE_DISCARD,
    DRAW_STOCK,
    BIG_GIN,
    *(discard_action(c) for c in DECK),
    *(knock_action(c) for c in DECK),
)
ALL = (1 << 52) - 1


def check_invariants(state: HandState, ever_discarded: int) -> None:
    stock = 0
    for i in state.deck[state.stock_pos :]:
        stock |= 1 << i
    pile = 0
    for i in state.discard_pile:
        pile |= 1 << i
    parts = (state.hands[0], state.hands[1], stock, pile)
    assert sum(p.bit_count() for p in parts) == 52
    assert parts[0] | parts[1] | stock | pile == ALL
    sizes = sorted((state.hands[0].bit_count(), state.hands[1].bit_count()))
    if state.phase is Phase.DISCARD:
        assert state.hands[state.to_act].bit_count() == 11 and sizes == [10, 11]
    elif state.phase is Phase.HAND_OVER and state.result is not None:
        assert sizes == ([10, 11] if state.result.termination is Termination.BIG_GIN else [10, 10])
    else:
        assert sizes == [10, 10]
    for seat in (0, 1):
        view = observe(state, seat)
        assert view.hand.mask == state.hands[seat]
        other = state.hands[1 - seat]
        assert view.opponent_known.mask & ~other == 0
        assert view.opponent_known.mask & ~ever_discarded == 0  # only cards seen on the pile
        assert view.opponent_hand_size == other.bit_count()
        shown = CardSet.of(view.discard_pile).mask | view.opponent_known.mask
        assert shown & other & ~ever_discarded == 0
        if state.phase is not Phase.HAND_OVER:
            assert view.result is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    deck=st.permutations(DECK),
    seed=st.integers(0, 2**32 - 1),
    rules=st.sampled_from(list(PRESETS.values())),
    dealer=st.integers(0, 1),
)
def test_random_legal_play_keeps_every_invariant(
    deck: list[Card], seed: int, rules: RuleSet, dealer: int
) -> None:
    rng = random.Random(seed)
    state = deal(rules, deck, dealer=dealer)
    actions: list[Action] = []
    ever_discarded = 1 << state.deck[20]
    while True:
        check_invariants(state, ever_discarded)
        legal = legal_actions(state)
        assert (len(legal) == 0) == state.is_over
        legal_set = set(legal)
        for action in UNIVERSE:
            if action in legal_set:
                check(state, action)
            else:
                assert not is_legal(state, action), (str(action), state.phase)
        if state.is_over:
            break
        action = rng.choice(legal)
        actions.append(action)
        state = apply(state, action)
        if state.discard_pile:
            ever_discarded |= 1 << state.discard_pile[-1]
    again = replay(rules, deck, dealer=dealer, actions=actions)
    assert again == state


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DECK[:6] + DECK[13:19] + DECK[26:30] + DECK[39:41]), max_size=11))
def test_deadwood_equals_brute_force(cards: list[Card]) -> None:
    hand = CardSet.of(cards)
    assert deadwood(hand) == brute_deadwood(hand)


@settings(max_examples=100, deadline=None)
@given(st.permutations(DECK))
def test_illegal_actions_raise_typed_errors_with_reasons(deck: list[Card]) -> None:
    state = deal(PRESETS["standard"], deck, dealer=0)
    for action in UNIVERSE:
        if not is_legal(state, action):
            try:
                apply(state, action)
            except IllegalAction as err:
                assert err.reason and err.phase == "first_upcard"
            else:
                raise AssertionError(f"{action} applied although illegal")
