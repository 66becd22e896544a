"""The adapters' pieces without a process: the rules they map or refuse, the hand log against
the rules engine, the OpenSpiel state replayed from it and RLCard's state built from a view.

Hands are played by the referee's rules engine with random legal moves; at each decision of
one seat the log is checked against the seat's view, and the OpenSpiel state replayed from the
log must show that seat exactly what the referee shows it (its hand, the upcard, the pile, the
stock's size, the phase), with the opponent holding every card it is known to hold."""

from __future__ import annotations

import random
from dataclasses import fields

import pyspiel
import pytest

from protocol.adapters import openspiel_state as st
from protocol.adapters.hand_log import HandLog, OutOfStep
from protocol.adapters.loading import hand_order
from protocol.adapters.rlcard import DRAW, GIN, PICK_UP, card_id, legal_ids, rlcard_state
from protocol.adapters.rules_map import RULE_FIELDS, RulesMismatch, check_rlcard, openspiel_params
from protocol.schema import Request, WireAction, WireView
from referee.rules import EAAI, PRESETS, RuleSet, apply, deal, legal_actions, shuffled_deck
from referee.rules.view import PlayerView, observe

pytestmark = [pytest.mark.timeout(120)]


def test_the_adapters_know_every_rule_field() -> None:
    assert {f.name for f in fields(RuleSet)} == RULE_FIELDS


@pytest.mark.parametrize(
    ("preset", "params"),
    [
        ("standard", {"knock_card": 10, "oklahoma": False, "gin_bonus": 25, "undercut_bonus": 25}),
        ("classic", {"knock_card": 10, "oklahoma": False, "gin_bonus": 20, "undercut_bonus": 10}),
        ("oklahoma", {"knock_card": 10, "oklahoma": True, "gin_bonus": 25, "undercut_bonus": 25}),
        ("straight", {"knock_card": 0, "oklahoma": False, "gin_bonus": 25, "undercut_bonus": 25}),
        ("eaai", {"knock_card": 10, "oklahoma": False, "gin_bonus": 25, "undercut_bonus": 25}),
    ],
)
def test_every_preset_maps_to_openspiel(preset: str, params: dict[str, object]) -> None:
    rules = PRESETS[preset].to_dict()
    assert openspiel_params(rules) == params
    pyspiel.load_game("gin_rummy", openspiel_params(rules))  # OpenSpiel takes them
    check_rlcard(rules)


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({"knock_limit": 11}, "knock_limit = 11: OpenSpiel's gin_rummy takes a knock card of 0"),
        ({"preset": "oklahoma", "knock_limit": 7}, "oklahoma with knock_limit = 7"),
    ],
)
def test_rules_openspiel_cannot_express_are_refused(table: dict[str, object], says: str) -> None:
    rules = RuleSet.from_table(table).to_dict()
    with pytest.raises(RulesMismatch, match=says):
        openspiel_params(rules)
    check_rlcard(rules)  # RLCard's agents choose from the referee's legal moves


def test_an_unknown_rule_field_is_refused_by_both() -> None:
    rules = {**EAAI.to_dict(), "jokers": 2}
    for check in (openspiel_params, check_rlcard):
        with pytest.raises(RulesMismatch, match="jokers unknown to this adapter"):
            check(rules)


def _wire(v: PlayerView) -> WireView:
    """The wire view of a rules view (only the fields the adapters read matter)."""
    return WireView(
        seat=v.seat, phase="discard", to_act=v.to_act, dealer=v.dealer,
        hand=tuple(str(c) for c in v.hand), discard_pile=tuple(str(c) for c in v.discard_pile),
        stock_size=v.stock_size, opponent_hand_size=10,
        opponent_known=tuple(str(c) for c in v.opponent_known), knock_limit=v.knock_limit,
        multiplier=1, turn=0, scores=(0, 0),
        taken_card=None if v.taken_card is None else str(v.taken_card),
    )  # fmt: skip


def _kind(text: str) -> tuple[str, str | None]:
    kind, *card = text.split()
    return kind, card[0] if card else None


@pytest.mark.parametrize("seed", range(12))
def test_the_replayed_openspiel_state_is_what_the_seat_sees(seed: int) -> None:
    rng = random.Random(seed)
    rules = EAAI
    state = deal(rules, shuffled_deck(rng), dealer=seed % 2)
    seat = rng.randrange(2)
    view = observe(state, seat)
    log = HandLog((str(c) for c in view.hand), str(view.discard_pile[-1]))
    game = pyspiel.load_game("gin_rummy", openspiel_params(rules.to_dict()))
    cards = st.Cards()
    player = 1 if state.dealer == seat else 0
    checked = 0
    while not state.is_over:
        options = legal_actions(state)
        action = rng.choice(options)
        if state.to_act == seat:
            view = observe(state, seat)
            wire = _wire(view)
            log.sync(wire.hand, wire.discard_pile, wire.opponent_known)
            order = hand_order(seed, 0, 0)
            replayed = st.replay(game.new_initial_state(), cards, log, player, order)
            assert sorted(cards.text(c) for c in replayed.hands()[player]) == sorted(wire.hand)
            pile = [cards.text(c) for c in replayed.discard_pile()]
            upcard = replayed.upcard()
            if upcard is not None:
                pile.append(cards.text(upcard))
            assert pile == list(wire.discard_pile)
            assert replayed.stock_size() == wire.stock_size
            held = {cards.text(c) for c in replayed.hands()[1 - player]}
            assert set(wire.opponent_known) <= held
            checked += 1
            kind, card = _kind(str(action))
            log.mine(kind, card)
        else:
            kind, card = _kind(str(action))
            log.opponent(kind, card)
        state = apply(state, action)
    assert checked >= 2


def test_a_log_that_disagrees_with_the_referee_says_where() -> None:
    log = HandLog(("2c", "3c", "4c", "7d", "7h", "9s", "Td", "Jh", "Qs", "Kd"), "5c")
    with pytest.raises(OutOfStep, match="discard pile"):
        log.sync(log.dealt, ("6c",), ())


def test_an_opponent_discard_is_a_card_it_was_dealt_or_drew() -> None:
    log = HandLog(("2c", "3c", "4c", "7d", "7h", "9s", "Td", "Jh", "Qs", "Kd"), "5c")
    log.opponent("take_discard")
    log.opponent("discard", "Ah")
    for _ in range(12):  # more hidden discards than the ten dealt cards
        log.mine("draw_stock")
        log.sync((*log.hand, next(c for c in hand_order(1, 0, 0) if c not in log.seen())),
                 log.pile, tuple(log.opponent_known))  # fmt: skip
        card = sorted(log.hand)[0]
        log.mine("discard", card)
        log.opponent("draw_stock")
        log.opponent("discard", next(c for c in hand_order(2, 0, 0) if c not in log.seen()))
    deal_, draws = log.hidden_cards(hand_order(3, 0, 0))
    assert len(deal_) == 10 and len(draws) == 12 and "5c" not in deal_
    discarded = [m.card for m in log.moves if not m.mine and m.kind == "discard"]
    assert set(discarded[:10]) == set(deal_) and discarded[10:] == draws[:3]


def _request(decision: str, legal: tuple[WireAction, ...], hand: tuple[str, ...]) -> Request:
    view = WireView(
        seat=0, phase=decision, to_act=0, dealer=1, hand=hand, discard_pile=("5c", "9h"),
        stock_size=20, opponent_hand_size=10, opponent_known=("5d",), knock_limit=10,
        multiplier=1, turn=3, scores=(0, 0), taken_card=None,
    )  # fmt: skip
    return Request(1, decision, legal, view, 1000, 1000)


def test_rlcard_sees_the_state_its_environment_would_give() -> None:
    hand = ("2c", "3c", "4c", "7d", "7h", "7s", "Td", "Jd", "Qd", "Kd", "As")
    legal = (
        *(WireAction.discard(c) for c in hand),
        WireAction.knock("As"),  # leaves 0: gin
        WireAction.knock("Kd"),
    )
    ids = legal_ids(_request("discard", legal, hand))
    assert ids == {GIN: WireAction.knock("As")}  # RLCard: gin is then the only legal action
    first = legal_ids(_request("first_upcard", (WireAction.take_discard(),
                                                WireAction.pass_upcard()), hand[:10]))  # fmt: skip
    assert first == {DRAW: WireAction.pass_upcard(), PICK_UP: WireAction.take_discard()}
    state = rlcard_state(_request("draw", (), hand[:10]), [DRAW, PICK_UP])
    obs = state["obs"]
    assert obs.shape == (5, 52) and obs.sum() == 52
    assert obs[1][card_id("9h")] == 1 and obs[2][card_id("5c")] == 1 and obs[3][card_id("5d")]
    assert list(state["legal_actions"]) == [DRAW, PICK_UP]


def test_openspiels_upcard_draw_limit_is_where_the_replay_stops() -> None:
    mine = ("2c", "3c", "4c", "7d", "7h", "9s", "Td", "Jh", "Qs", "Kd")
    log = HandLog(mine, "5c")
    log.opponent("pass_upcard")
    log.mine("pass_upcard")
    log.opponent("draw_stock")
    log.opponent("discard", "Ah")
    log.mine("take_discard")
    log.mine("discard", "2c")
    held = {True: "Ah", False: "Ad"}  # each discards the card it took the turn before
    takes, mine_turn = 1, False
    game = pyspiel.load_game("gin_rummy")
    cards = st.Cards()
    while takes < st.UPCARD_DRAW_LIMIT:
        top = log.pile[-1]
        record = log.mine if mine_turn else log.opponent
        record("take_discard")
        record("discard", held[mine_turn])
        held[mine_turn] = top
        takes += 1
        mine_turn = not mine_turn
        if mine_turn and st.UPCARD_DRAW_LIMIT - 2 <= takes < st.UPCARD_DRAW_LIMIT:  # plays on
            st.replay(game.new_initial_state(), cards, log, 1, hand_order(1, 0, 0))
    with pytest.raises(st.Diverged, match="ends a hand at its 50th draw of an upcard"):
        st.replay(game.new_initial_state(), cards, log, 1, hand_order(1, 0, 0))


def test_the_fallback_plays_as_the_greedy_bot() -> None:
    hand = ("2c", "3c", "4c", "7d", "7h", "7s", "Td", "Jd", "Qd", "Kh", "9h")
    legal = (*(WireAction.discard(c) for c in hand if c != "9h"), WireAction.knock("Kh"))
    request = _request("discard", legal, hand)
    cards = st.Cards()
    assert st.fallback(cards, request, knock=True) == WireAction.knock("Kh")
    assert st.fallback(cards, request, knock=False) == WireAction.discard("Kh")
    draw = _request("draw", (WireAction.take_discard(), WireAction.draw_stock()), hand[:10])
    assert st.fallback(cards, draw, knock=True) == WireAction.draw_stock()


def test_ismcts_never_plays_a_forbidden_action_at_its_root() -> None:
    from protocol.adapters.openspiel_bots import IsmctsBudget, factory

    game = pyspiel.load_game("gin_rummy")
    state = game.new_initial_state()
    rng = random.Random(5)
    while state.is_chance_node():
        state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
    state.apply_action(st.DRAW_UPCARD)  # player 0 takes the upcard: eleven cards to discard from
    bot = factory("ismcts", IsmctsBudget(simulations=20))(game, 0, 3)
    legal = state.legal_actions()
    for keep in legal[:3]:
        bot.referee_forbidden = frozenset(a for a in legal if a != keep)
        assert bot.step(state) == keep
