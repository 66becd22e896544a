"""The compiled request writer gives the Python writer's bytes, and its errors, for any input.

``tests/match/test_request.py`` checks :func:`request_bytes` (whichever writer is in use)
against the general encoder; here the compiled writer is checked against the Python one on
the common case and on every input it hands back to it. These tests need the extension: they
are skipped where it was not built (an install without a C compiler), unless
``GIN_REFEREE_REQUIRE_COMPILED`` is set, as ``.ci/run`` does, where its absence fails.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import encode
from referee.match import request
from referee.match.request import COMPILED, python_request_bytes, request_bytes
from referee.rules import (
    DRAW_STOCK,
    PASS_UPCARD,
    PRESETS,
    Action,
    HandState,
    Knock,
    Phase,
    RuleSet,
    apply,
    deal,
    discard_action,
    legal_actions,
)
from referee.rules.cards import DECK, parse_cards
from referee.rules.melds import Meld
from referee.rules.state import shuffled_deck
from tests.match.test_request import an_event

REQUIRED = os.environ.get("GIN_REFEREE_REQUIRE_COMPILED", "") not in ("", "0")

needs_compiled = pytest.mark.skipif(
    not COMPILED and not REQUIRED,
    reason="the compiled request writer was not built here (no C compiler at install)",
)


def test_the_compiled_writer_is_in_use_where_it_is_required() -> None:
    """CI builds the extension: a build that silently fell back must not pass there."""
    if REQUIRED:
        assert COMPILED, "GIN_REFEREE_REQUIRE_COMPILED is set but the Python writer is in use"
    assert (request_bytes is python_request_bytes) is not COMPILED


def outcome(writer: Callable[..., bytes], *args: Any, **kwargs: Any) -> tuple[str, object]:
    """What a writer gives: its bytes, or its exception's type and message."""
    try:
        return "bytes", writer(*args, **kwargs)
    except Exception as err:  # compared, not hidden: both writers must fail alike
        return type(err).__name__, str(err)


def same(*args: Any, **kwargs: Any) -> None:
    compiled = outcome(request_bytes, *args, **kwargs)
    python = outcome(python_request_bytes, *args, **kwargs)
    assert compiled == python


def a_state(seed: int = 3, steps: int = 9) -> HandState:
    """A hand some way in, for the edge cases below."""
    rng = random.Random(seed)
    state = deal(RuleSet.preset("standard"), shuffled_deck(rng), dealer=1)
    for _ in range(steps):
        if state.is_over:
            break
        state = apply(state, rng.choice(legal_actions(state)))
    return state


big_ints = st.one_of(
    st.integers(-300, 300),
    st.integers(-(2**64), 2**64),
    st.sampled_from(
        [
            *(2**k + d for k in (7, 8, 15, 16, 31, 32, 63, 64) for d in (-1, 0, 1)),
            *(-(2**k) + d for k in (5, 7, 15, 31, 63) for d in (-1, 0, 1)),
        ]
    ),
)
encoded_events = st.lists(an_event.map(encode), max_size=20)


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    preset=st.sampled_from(sorted(PRESETS)),
    scores=st.tuples(big_ints, big_ints),
    request_id=big_ints,
    time_left_ms=big_ints,
    bank_ms=big_ints,
    events=encoded_events,
    as_list=st.booleans(),
)
def test_every_decision_of_random_hands_with_any_integers(
    seed: int,
    preset: str,
    scores: tuple[int, int],
    request_id: int,
    time_left_ms: int,
    bank_ms: int,
    events: list[bytes],
    as_list: bool,
) -> None:
    rng = random.Random(seed)
    state = deal(RuleSet.preset(preset), shuffled_deck(rng), dealer=seed % 2, scores=scores)
    held: Sequence[bytes] = events if as_list else tuple(events)
    while not state.is_over:
        legal = legal_actions(state)
        same(state, list(legal) if as_list else legal, request_id, time_left_ms, bank_ms, held)
        state = apply(state, rng.choice(legal))


def knock_with_melds() -> Knock:
    melds = (Meld.from_cards(parse_cards("Ac Ad Ah")),)
    return Knock(DECK[5], melds)


@needs_compiled
@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"hands": (1 << 52, 3)}, id="a card beyond the deck in the hand"),
        pytest.param({"hands": (-1, 3)}, id="a negative hand"),
        pytest.param({"known": (1 << 60, 1 << 60)}, id="known cards beyond the deck"),
        pytest.param({"known": [0, 0]}, id="known as a list"),
        pytest.param({"discard_pile": (1, -1)}, id="a negative card index in the pile"),
        pytest.param({"discard_pile": (1, 52)}, id="a card index past the deck in the pile"),
        pytest.param({"discard_pile": tuple(range(52)) * 2}, id="a pile of 104"),
        pytest.param({"discard_pile": (1, True)}, id="a bool in the pile"),
        pytest.param({"discard_pile": [1, 2]}, id="the pile as a list"),
        pytest.param({"taken": 52}, id="a taken card past the deck"),
        pytest.param({"taken": -7}, id="a negative taken card"),
        pytest.param({"phase": "draw"}, id="the phase as a plain string"),
        pytest.param({"phase": Phase.HAND_OVER}, id="the phase of an ended hand"),
        pytest.param({"to_act": 2}, id="a third seat to act"),
        pytest.param({"to_act": -1}, id="a negative seat"),
        pytest.param({"to_act": True}, id="seat True"),
        pytest.param({"dealer": 5}, id="a third dealer"),
        pytest.param({"stock_pos": 99}, id="a stock position past the deck"),
        pytest.param({"deck": tuple(range(52)) * 6}, id="a stock of 300"),
        pytest.param({"scores": (1.5, 2)}, id="a float score"),
        pytest.param({"scores": (1, 2, 3)}, id="three scores"),
        pytest.param({"turn": 2**70}, id="a turn beyond 64 bits"),
        pytest.param({"knock_limit": -(2**63) - 1}, id="a knock limit below int64"),
        pytest.param({"multiplier": None}, id="no multiplier"),
    ],
)
def test_inputs_outside_the_common_case_give_the_python_writers_result(
    change: dict[str, Any],
) -> None:
    state = a_state()._replace(**change)
    same(state, legal_actions(a_state()), 7, 5000, 60000, ())


@needs_compiled
@pytest.mark.parametrize(
    "legal",
    [
        pytest.param((PASS_UPCARD, knock_with_melds()), id="a knock with melds (not interned)"),
        pytest.param(tuple(discard_action(card) for card in DECK) * 2, id="104 actions"),
        pytest.param([DRAW_STOCK], id="a list"),
        pytest.param([], id="an empty list"),
        pytest.param((), id="an empty tuple"),
        pytest.param(iter((DRAW_STOCK,)), id="an iterator"),
        pytest.param(("draw_stock",), id="a string"),
    ],
)
def test_any_legal_sequence_gives_the_python_writers_result(legal: Sequence[Action]) -> None:
    if not isinstance(legal, (tuple, list)):  # an iterator is used up by the first writer
        items = tuple(legal)
        compiled = outcome(request_bytes, a_state(), iter(items), 7, 5000, 60000)
        assert compiled == outcome(python_request_bytes, a_state(), iter(items), 7, 5000, 60000)
        return
    same(a_state(), legal, 7, 5000, 60000)


@needs_compiled
@pytest.mark.parametrize(
    "events",
    [
        pytest.param([b"\x80"] * 70_000, id="70,000 events"),
        pytest.param((bytearray(b"\x80"),), id="a bytearray"),
        pytest.param(("text",), id="a string"),
        pytest.param([b"\x80" * 100_000], id="one event of 100 KB"),
        pytest.param((b"",), id="an empty event"),
    ],
)
def test_any_events_give_the_python_writers_result(events: Sequence[bytes]) -> None:
    state = a_state()
    same(state, legal_actions(state), 7, 5000, 60000, events)


@needs_compiled
def test_keywords_and_wrong_arity_give_the_python_writers_result() -> None:
    state = a_state()
    legal = legal_actions(state)
    same(state, legal, 7, 5000, 60000, events=[b"\x80"])
    same(state, legal, request_id=7, time_left_ms=5000, bank_ms=60000)
    same(state, legal, 7, 5000)
    same(state, legal, 7, 5000, 60000, (), "extra")
    same("not a state", legal, 7, 5000, 60000)
    same((), legal, 7, 5000, 60000)


@needs_compiled
def test_arguments_keep_their_reference_counts() -> None:
    """Neither path holds on to (or frees) what it is given."""
    state = a_state()
    legal = legal_actions(state)
    events = (b"\x80", b"\x81")
    big = 2**63 + 5  # beyond int64: the compiled writer hands it to the Python one
    odd = state._replace(turn=big)
    before = [sys.getrefcount(x) for x in (state, legal, events, big, odd)]
    for _ in range(1000):
        request_bytes(state, legal, 7, 5000, 60000, events)
        request_bytes(odd, legal, 7, 5000, 60000, events)
    assert [sys.getrefcount(x) for x in (state, legal, events, big, odd)] == before


@needs_compiled
def test_the_writer_is_set_up_once() -> None:
    from referee.match import _request

    with pytest.raises(RuntimeError, match="set up already"):
        _request.setup({}, python_request_bytes)


@needs_compiled
def test_the_environment_can_keep_the_python_writer() -> None:
    code = "import referee.match.request as r; print(r.COMPILED)"

    def compiled_with(value: str) -> str:
        env = {**os.environ, "GIN_REFEREE_PURE_PYTHON": value}
        argv = [sys.executable, "-c", code]
        return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout

    assert (compiled_with("1"), compiled_with("0"), compiled_with("")) == (
        "False\n",
        "True\n",
        "True\n",
    )
    assert request.COMPILED
