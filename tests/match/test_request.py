"""The hot-path request writer gives exactly the bytes of the general encoder."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import decode, encode
from protocol.fields import describe
from protocol.schema import Event, Request, WireAction, WireView
from referee.match.request import _REQUEST_FIELDS, _VIEW_FIELDS, _keys, request_bytes
from referee.match.wire import to_wire_action
from referee.rules import (
    BIG_GIN,
    DRAW_STOCK,
    PASS_UPCARD,
    PRESETS,
    HandState,
    Knock,
    PlayerView,
    RuleSet,
    apply,
    deal,
    legal_actions,
    observe,
)
from referee.rules.cards import CARD_TEXT, mask_table
from referee.rules.state import shuffled_deck
from tests.rules.helpers import position
from tests.rules.test_golden import BIG, DEFENDER

ids = st.integers(0, 2**53 - 1)


an_event = st.builds(
    Event,
    st.integers(0, 1),
    st.sampled_from(
        [WireAction("draw_stock"), WireAction("take_discard", "Qh"), WireAction("knock", "2c")]
    ),
)
events = st.lists(an_event, max_size=3).map(tuple)


mask_texts = mask_table(CARD_TEXT)


def to_wire_view(view: PlayerView) -> WireView:
    """The reference wire form of a seat's view, field by field from the rules' view."""
    return WireView(
        seat=view.seat,
        phase=str(view.phase),
        to_act=view.to_act,
        dealer=view.dealer,
        hand=mask_texts(view.hand.mask),
        discard_pile=tuple([CARD_TEXT[c.index] for c in view.discard_pile]),
        stock_size=view.stock_size,
        opponent_hand_size=view.opponent_hand_size,
        opponent_known=mask_texts(view.opponent_known.mask),
        knock_limit=view.knock_limit,
        multiplier=view.multiplier,
        turn=view.turn,
        scores=view.scores,
        taken_card=None if view.taken_card is None else str(view.taken_card),
    )


def general(
    state: HandState, request_id: int, time_left_ms: int, bank_ms: int, held: tuple[Event, ...]
) -> bytes:
    """The request through the general path: observe, wire view, Request, encode."""
    legal = tuple(to_wire_action(action) for action in legal_actions(state))
    view = to_wire_view(observe(state, state.to_act))
    phase = str(state.phase)
    return encode(Request(request_id, phase, legal, view, time_left_ms, bank_ms, held))


def same(
    state: HandState,
    request_id: int,
    time_left_ms: int,
    bank_ms: int,
    held: tuple[Event, ...] = (),
) -> None:
    encoded = [encode(event) for event in held]
    fast = request_bytes(state, legal_actions(state), request_id, time_left_ms, bank_ms, encoded)
    assert fast == general(state, request_id, time_left_ms, bank_ms, held)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    preset=st.sampled_from(sorted(PRESETS)),
    scores=st.tuples(st.integers(0, 400), st.integers(0, 70_000)),
    request_id=ids,
    time_left_ms=ids,
    bank_ms=ids,
    knock_bias=st.floats(0, 1),
    held=events,
)
def test_every_decision_of_random_hands(
    seed: int,
    preset: str,
    scores: tuple[int, int],
    request_id: int,
    time_left_ms: int,
    bank_ms: int,
    knock_bias: float,
    held: tuple[Event, ...],
) -> None:
    rng = random.Random(seed)
    rules = RuleSet.preset(preset)
    state = deal(rules, shuffled_deck(rng), dealer=seed % 2, scores=scores)
    while not state.is_over:
        same(state, request_id, time_left_ms, bank_ms, held)
        legal = legal_actions(state)
        knocks = [a for a in legal if isinstance(a, Knock)]
        action = rng.choice(knocks) if knocks and rng.random() < knock_bias else rng.choice(legal)
        state = apply(state, action)
        request_id = (request_id + 1) % 2**53


def test_a_big_gin_offer_and_a_long_discard_pile() -> None:
    state = position(nondealer=BIG, dealer=DEFENDER.replace("8s", "8c"), upcard="Qs", stock="5s")
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    assert BIG_GIN in legal_actions(state) and len(legal_actions(state)) >= 16
    same(state, 1, 31_000, 30_000)
    long_pile = state._replace(discard_pile=tuple(range(20, 40)))
    same(long_pile, 300, 70_000, 65_536)
    request = decode(request_bytes(long_pile, legal_actions(long_pile), 300, 70_000, 65_536))
    assert isinstance(request, Request) and len(request.view.discard_pile) == 20


def test_the_writer_checks_its_fields_against_the_description() -> None:
    assert describe(WireView).always == _VIEW_FIELDS
    assert describe(Request).always == _REQUEST_FIELDS
    with pytest.raises(ImportError, match="taken_card"):
        _keys(describe(WireView), _VIEW_FIELDS[:-1])
