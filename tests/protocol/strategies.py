"""Hypothesis strategies producing valid messages of every type, and wire-map helpers."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import strategies as st

from protocol.cards import ALL_CARDS
from protocol.checks import MAX_INT
from protocol.codec import to_wire
from protocol.schema import (
    ACTION_KINDS,
    DECISIONS,
    MATCH_END_REASONS,
    MATCH_RESULTS,
    PHASES,
    TERMINATIONS,
    ActionMsg,
    Bye,
    Cards,
    Error,
    Event,
    Fault,
    GameEnd,
    HandEnd,
    HandStart,
    Hello,
    MatchEnd,
    MatchStart,
    Melds,
    Message,
    Ping,
    Pong,
    Reject,
    Request,
    TimeControl,
    Welcome,
    WireAction,
    WireView,
)

cards = st.sampled_from(ALL_CARDS)
ints = st.integers(0, MAX_INT)
small_ints = st.integers(0, 10_000)
seats = st.integers(0, 1)
pairs = st.tuples(ints, ints)
texts = st.text(max_size=40)


def card_lists(min_size: int = 0, max_size: int = 11) -> st.SearchStrategy[Cards]:
    """Distinct cards."""
    return st.lists(cards, min_size=min_size, max_size=max_size, unique=True).map(tuple)


@st.composite
def meld_arrangements(draw: st.DrawFn, exclude: frozenset[str] = frozenset()) -> Melds:
    """Up to four disjoint melds of 3..5 cards, none of them in ``exclude``."""
    deck = [c for c in draw(st.permutations(ALL_CARDS)) if c not in exclude]
    sizes = draw(st.lists(st.integers(3, 5), max_size=4))
    melds: list[Cards] = []
    for size in sizes:
        melds.append(tuple(deck[:size]))
        deck = deck[size:]
    return tuple(melds)


@st.composite
def actions(draw: st.DrawFn) -> WireAction:
    """Any valid action map, including event-only forms (a card on take/draw)."""
    kind = draw(st.sampled_from(ACTION_KINDS))
    if kind in ("pass_upcard", "big_gin"):
        return WireAction(kind)
    if kind in ("take_discard", "draw_stock"):
        return WireAction(kind, draw(st.none() | cards))
    card = draw(cards)
    if kind == "discard":
        return WireAction.discard(card)
    return WireAction.knock(card, draw(st.none() | meld_arrangements(frozenset({card}))))


views = st.builds(
    WireView,
    seat=seats,
    phase=st.sampled_from(PHASES),
    to_act=seats,
    dealer=seats,
    hand=card_lists(),
    discard_pile=card_lists(max_size=31),
    stock_size=st.integers(0, 52),
    opponent_hand_size=st.integers(0, 11),
    opponent_known=card_lists(),
    knock_limit=st.integers(0, 10),
    multiplier=st.integers(1, 4),
    turn=small_ints,
    scores=pairs,
    taken_card=st.none() | cards,
)


events = st.builds(Event, seat=seats, action=actions())
"""Any valid event (also the elements of ``Request.events``)."""


@st.composite
def hand_starts(draw: st.DrawFn) -> HandStart:
    """A deal: ten distinct cards and an upcard that is not among them."""
    deck = draw(st.permutations(ALL_CARDS))
    return HandStart(
        game=draw(small_ints),
        hand=draw(small_ints),
        dealer=draw(seats),
        hand_cards=tuple(deck[:10]),
        upcard=deck[10],
        scores=draw(pairs),
    )


rule_values = st.none() | st.booleans() | st.integers(-MAX_INT, MAX_INT) | texts

messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(
        Hello,
        protocol_version=ints,
        name=st.text(min_size=1, max_size=64),
        token=st.text(min_size=1, max_size=128),
        author=st.none() | st.text(max_size=128),
        version=st.none() | st.text(max_size=128),
        inline_events=st.booleans(),
    ),
    st.builds(ActionMsg, request_id=ints, action=actions()),
    st.builds(Pong, nonce=ints),
    st.builds(Bye, reason=st.none() | texts),
    st.builds(
        Welcome,
        protocol_version=ints,
        referee=texts,
        heartbeat_ms=ints,
        inline_events=st.booleans(),
    ),
    st.builds(
        Reject,
        code=st.text(min_size=1, max_size=30),
        message=texts,
        supported_versions=st.lists(ints, max_size=4).map(tuple),
    ),
    st.builds(
        MatchStart,
        match_id=st.text(min_size=1, max_size=30),
        seat=seats,
        opponent=texts,
        games=small_ints,
        rules=st.dictionaries(st.text(max_size=20), rule_values, max_size=12),
        rules_hash=texts,
        time_control=st.builds(TimeControl, ints, ints, ints, ints),
    ),
    hand_starts(),
    st.builds(
        Request,
        request_id=ints,
        decision=st.sampled_from(DECISIONS),
        legal=st.lists(actions(), min_size=1, max_size=25).map(tuple),
        view=views,
        time_left_ms=ints,
        bank_ms=ints,
        events=st.lists(events, max_size=3).map(tuple),
    ),
    events,
    st.builds(
        HandEnd,
        game=small_ints,
        hand=small_ints,
        termination=st.sampled_from(TERMINATIONS),
        winner=st.none() | seats,
        points=small_ints,
        hands=st.tuples(card_lists(), card_lists()),
        melds=st.tuples(meld_arrangements(), meld_arrangements()),
        layoffs=st.lists(card_lists(1, 4), max_size=4).map(tuple),
        deadwood=pairs,
        scores=pairs,
    ),
    st.builds(GameEnd, game=small_ints, winner=st.none() | seats, scores=pairs, hands_won=pairs),
    st.builds(
        MatchEnd,
        result=st.sampled_from(MATCH_RESULTS),
        games_won=pairs,
        points=pairs,
        reason=st.sampled_from(MATCH_END_REASONS),
        fault=st.none() | st.builds(Fault, code=st.text(min_size=1, max_size=20), detail=texts),
    ),
    st.builds(
        Error, code=st.text(min_size=1, max_size=20), message=texts, request_id=st.none() | ints
    ),
    st.builds(Ping, nonce=ints),
)
"""Any valid message."""


def wire_map(msg: Message) -> dict[str, Any]:
    """A fresh, freely mutable copy of ``msg``'s wire map (lists, not tuples)."""
    value: dict[str, Any] = msgpack.unpackb(msgpack.packb(to_wire(msg)))
    return value
