"""The environment's fast paths equal the general ones: the compiled observation writer, the
Python writer and the protocol's encoding of the seat's view; the action mask numbered from
:func:`~referee.rules.discard_options` and from :func:`~referee.rules.legal_actions`.

The compiled writer's own tests are skipped where it was not built (an install without a C
compiler), unless ``GIN_REFEREE_REQUIRE_COMPILED`` is set (as ``.ci/run`` does)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import referee.env.observe as observe_module
from protocol.encoding import PHASE_INDEX, encode_view, hand_bits
from referee.env import ACTIONS
from referee.env.aec import legal_mask
from referee.env.observe import (
    COMPILED,
    SIZE,
    fill,
    fixed_bytes,
    observation,
    python_observation,
    stock_masks,
)
from referee.env.spaces import wire_view
from referee.match.wire import to_wire_action
from referee.rules import (
    BIG_GIN,
    PRESETS,
    Discard,
    HandState,
    Knock,
    Phase,
    RuleSet,
    discard_options,
    legal_actions,
    observe,
)
from referee.rules.compiled import compiled_module
from tests.rules.test_compiled import played

pytestmark = pytest.mark.timeout(120)
REQUIRED = os.environ.get("GIN_REFEREE_REQUIRE_COMPILED", "") not in ("", "0")


def reach(rules: RuleSet, seed: int, steps: int, knock_first: bool) -> tuple[HandState, int]:
    """A state of random play (:func:`tests.rules.test_compiled.played`, at random game
    scores), and the target its score blocks are read against."""
    return played(rules, seed, steps, knock_first, scored=True), rules.target


def mask_of(state: HandState) -> int:
    """The general path: the legal actions, numbered one by one."""
    return sum(1 << ACTIONS.index(action) for action in legal_actions(state))


states = st.builds(
    reach,
    st.sampled_from(sorted(PRESETS.values(), key=lambda r: r.name)),
    st.integers(0, 2**32),
    st.integers(0, 140),
    st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(states, st.sampled_from((0, 1)))
def test_the_writers_agree_with_the_protocols_encoding(
    reached: tuple[HandState, int], seat: int
) -> None:
    state, target = reached
    stock = stock_masks(state.deck)
    fixed = fixed_bytes(
        hand_bits(
            dealer=state.dealer == seat,
            doubled=state.multiplier > 1,
            knock_limit=state.knock_limit,
            scores=(state.scores[seat], state.scores[1 - seat]),
            target=target,
        )
    )
    legal = legal_mask(state)
    general = python_observation(state, seat, stock, fixed, legal)
    fast = observation(state, seat, stock, fixed, legal)
    assert all(a.dtype == np.int8 for a in (*general, *fast))
    assert np.array_equal(fast[0], general[0]) and np.array_equal(fast[1], general[1])
    if fill is not None:
        written = np.full(SIZE, 7, np.int8)  # every byte is written
        fill(written, state, seat, stock, fixed, legal)
        assert np.array_equal(written, np.concatenate(general))
    view = wire_view(observe(state, seat))
    wire = tuple(to_wire_action(a) for a in legal_actions(state)) if state.to_act == seat else ()
    obs, mask = encode_view(view, wire, target=target)
    assert np.array_equal(general[0], obs) and np.array_equal(general[1], mask)
    # bytes that fixed_bytes did not make are read back alike
    again = python_observation(state, seat, stock, bytes(bytearray(fixed)), legal)
    assert np.array_equal(again[0], obs)


@settings(max_examples=400, deadline=None)
@given(states)
def test_the_numbered_mask_is_the_legal_actions(reached: tuple[HandState, int]) -> None:
    state, _ = reached
    assert legal_mask(state) == mask_of(state)
    if state.phase is Phase.DISCARD:
        discards, knocks, big = discard_options(state)
        legal = legal_actions(state)
        assert discards == sum(1 << a.card.index for a in legal if isinstance(a, Discard))
        assert knocks == sum(1 << a.card.index for a in legal if isinstance(a, Knock))
        assert big == (BIG_GIN in legal)


def test_the_compiled_writer_is_in_use_where_it_is_required() -> None:
    """CI builds the extension: a build that silently fell back must not pass there."""
    if REQUIRED:
        assert COMPILED, "GIN_REFEREE_REQUIRE_COMPILED is set but the Python writer is in use"
    assert (observation is python_observation) is not COMPILED
    assert (fill is not None) is COMPILED


@pytest.mark.skipif(
    not COMPILED and not REQUIRED,
    reason="the compiled observation writer was not built here (no C compiler at install)",
)
def test_the_compiled_writer_refuses_what_it_does_not_know() -> None:
    assert fill is not None
    state, target = reach(PRESETS["standard"], 3, 5, knock_first=False)
    stock, fixed = stock_masks(state.deck), bytes(SIZE)
    with pytest.raises(ValueError, match="whole observation"):
        fill(np.empty(SIZE - 1, np.int8), state, 0, stock, fixed, 0)
    with pytest.raises(TypeError, match="HandState"):
        fill(np.empty(SIZE, np.int8), (1, 2), 0, stock, fixed, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="phase"):
        fill(np.empty(SIZE, np.int8), state._replace(phase="draw"), 0, stock, fixed, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seat"):
        fill(np.empty(SIZE, np.int8), state, 2, stock, fixed, 0)
    with pytest.raises(TypeError, match="fixed"):
        fill(np.empty(SIZE, np.int8), state, 0, stock, bytes(3), 0)
    assert target == 100


@pytest.mark.skipif(
    not COMPILED and not REQUIRED,
    reason="the compiled observation writer was not built here (no C compiler at install)",
)
def test_a_failed_setup_leaves_the_writer_unusable_until_set_up_again() -> None:
    """setup() reads positions the Python side owns (referee/rules/_positions.h): a bad one is
    refused, naming it, and the writer refuses to run on half of a layout."""
    module = compiled_module("referee.env._observe")
    assert module is not None and fill is not None
    state, _ = reach(PRESETS["standard"], 3, 5, knock_first=False)
    stock, fixed = stock_masks(state.deck), bytes(SIZE)
    phases = tuple(sorted(Phase, key=lambda phase: PHASE_INDEX[phase.value]))
    try:
        with pytest.raises(ValueError, match="a field position is negative"):
            module.setup((0, 1, -2, 3, 4, 5, 6, 7), phases, tuple(range(10)))
        with pytest.raises(RuntimeError, match="setup"):
            fill(np.empty(SIZE, np.int8), state, 0, stock, fixed, 0)
        with pytest.raises(ValueError, match="an offset is negative"):
            module.setup(tuple(range(8)), phases, (0, 1, 2, -1, 4, 5, 6, 7, 8, 9))
    finally:
        assert observe_module._compiled() is not None  # the real layout again
    fill(np.empty(SIZE, np.int8), state, 0, stock, fixed, 0)
