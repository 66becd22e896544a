"""The compiled rules helpers equal the Python functions: the legal actions
(``referee/rules/_legal.c``) and the common moves of ``apply`` (``referee/rules/_moves.c``),
results and errors alike.

Checked on states of random play (under turn caps as low as 1, so that hands also end there)
and on discard phases built to be rich in melds (so that knocks, gin and big gin are common,
where the compiled bound hands over to the exact search).
These tests need the extension: they are skipped where it was not built (an install without a
C compiler), unless ``GIN_REFEREE_REQUIRE_COMPILED`` is set, as ``.ci/run`` does.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    ALL_MELDS,
    BIG_GIN,
    DECK,
    DRAW_STOCK,
    PASS_UPCARD,
    PRESETS,
    TAKE_DISCARD,
    Action,
    HandState,
    Knock,
    Phase,
    RuleSet,
    deal,
    discard_action,
    knock_action,
    moves,
    shuffled_deck,
)
from referee.rules.moves import apply, apply_unchecked, python_apply, python_apply_unchecked
from referee.rules.state import (
    COMPILED,
    discard_options,
    legal_actions,
    python_discard_options,
    python_legal_actions,
)

pytestmark = pytest.mark.timeout(120)
REQUIRED = os.environ.get("GIN_REFEREE_REQUIRE_COMPILED", "") not in ("", "0")
needs_compiled = pytest.mark.skipif(
    not COMPILED and not REQUIRED,
    reason="the compiled legal actions were not built here (no C compiler at install)",
)
RULES = sorted(PRESETS.values(), key=lambda rules: rules.name)


def test_the_compiled_functions_are_in_use_where_required() -> None:
    """CI builds the extension: a build that silently fell back must not pass there."""
    if REQUIRED:
        assert COMPILED, "GIN_REFEREE_REQUIRE_COMPILED is set but the Python functions are in use"
        assert moves.COMPILED, "GIN_REFEREE_REQUIRE_COMPILED is set but Python's apply is in use"
    assert (legal_actions is python_legal_actions) is not COMPILED
    assert (discard_options is python_discard_options) is not COMPILED
    assert (apply is python_apply) is not moves.COMPILED
    assert (apply_unchecked is python_apply_unchecked) is not moves.COMPILED


def outcome(function: Callable[..., HandState], *args: object) -> object:
    """What a function gives: the next state, or its exception's type and message."""
    try:
        return function(*args)
    except Exception as err:  # compared, not hidden: both must fail alike
        return type(err).__name__, str(err)


def played(
    rules: RuleSet, seed: int, steps: int, knock_first: bool, *, scored: bool = False
) -> HandState:
    """A state ``steps`` random legal decisions into a hand (fewer if it ends first), by the
    Python functions; ``knock_first`` takes a knock or big gin whenever one is legal (so that
    hands end by knocks, not only walls); ``scored`` deals it at random game scores."""
    rng = random.Random(seed)
    scores = (rng.randrange(rules.target), rng.randrange(rules.target)) if scored else (0, 0)
    state = deal(rules, shuffled_deck(rng), dealer=rng.randrange(2), scores=scores)
    for _ in range(steps):
        if state.is_over:
            break
        legal = python_legal_actions(state)
        ends = [a for a in legal if isinstance(a, Knock) or a is BIG_GIN]
        state = python_apply(state, rng.choice(ends if knock_first and ends else legal))
    return state


EVERY_ACTION: tuple[Action, ...] = (
    DRAW_STOCK,
    TAKE_DISCARD,
    PASS_UPCARD,
    BIG_GIN,
    *(discard_action(card) for card in DECK),
    *(knock_action(card) for card in DECK),
)


@st.composite
def meldy(draw: st.DrawFn) -> HandState:
    """A discard phase whose eleven cards hold melds (and a few loose cards)."""
    rules = draw(st.sampled_from(RULES))
    state = deal(rules, shuffled_deck(random.Random(draw(st.integers(0, 999)))), dealer=0)
    hand = 0
    for meld in draw(st.lists(st.sampled_from(ALL_MELDS), max_size=4)):
        if (hand | meld.mask).bit_count() <= 11:
            hand |= meld.mask
    loose = draw(st.permutations(range(52)))
    for index in loose:
        if hand.bit_count() >= 11:
            break
        hand |= 1 << index
    cards = [i for i in range(52) if hand >> i & 1]
    taken = draw(st.sampled_from([-1, *cards]))
    seat = draw(st.sampled_from((0, 1)))
    hands = (hand, state.hands[1] & ~hand) if seat == 0 else (state.hands[0] & ~hand, hand)
    return state._replace(
        hands=hands,
        phase=Phase.DISCARD,
        to_act=seat,
        taken=taken,
        knock_limit=draw(st.integers(0, 10)),
    )


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(st.sampled_from(RULES), st.integers(0, 2**32), st.integers(0, 160), st.booleans())
def test_random_play_states(rules: RuleSet, seed: int, steps: int, knock_first: bool) -> None:
    state = played(rules, seed, steps, knock_first)
    assert legal_actions(state) == python_legal_actions(state)
    if state.phase is Phase.DISCARD:
        assert discard_options(state) == python_discard_options(state)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(RULES),
    st.integers(1, 80),
    st.integers(0, 2**32),
    st.integers(0, 160),
    st.booleans(),
)
def test_apply_on_every_action(
    rules: RuleSet, cap: int, seed: int, steps: int, knock_first: bool
) -> None:
    if cap < 60:  # else the preset's own cap
        rules = dataclasses.replace(rules, turn_cap=cap)
    state = played(rules, seed, steps, knock_first)
    legal = python_legal_actions(state)
    for action in EVERY_ACTION:
        assert outcome(apply, state, action) == outcome(python_apply, state, action)
        if action in legal:
            assert type(apply(state, action)) is HandState
            assert apply_unchecked(state, action) == python_apply_unchecked(state, action)
    assert outcome(apply, state, "draw_stock") == outcome(python_apply, state, "draw_stock")


@needs_compiled
@settings(max_examples=1000, deadline=None)
@given(meldy())
def test_meld_rich_discard_phases(state: HandState) -> None:
    assert legal_actions(state) == python_legal_actions(state)
    assert discard_options(state) == python_discard_options(state)


@needs_compiled
def test_what_it_does_not_know_is_refused() -> None:
    state = played(PRESETS["standard"], 1, 0, knock_first=False)
    with pytest.raises(TypeError, match="HandState"):
        legal_actions((1, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="phase"):
        legal_actions(state._replace(phase="draw"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a discard phase"):
        discard_options(state)
