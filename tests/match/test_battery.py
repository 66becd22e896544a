"""The check battery's fixed decks make every planned situation arise whatever legal moves the
bot under test makes: every path of the bot's choices is explored with the rules engine, the
scripted opponent answering through the same requests the match would send it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from protocol.codec import decode
from protocol.schema import Request
from referee.match.request import request_bytes
from referee.match.wire import to_action
from referee.rules import DECK, Action, HandState, apply, deadwood, deal, legal_actions
from referee.toolkit.battery import (
    BATTERY_GAMES,
    CHECK_RULES,
    battery_deck,
    puppet_move,
    scripted_deck,
)

BOT = 0


def request_for(state: HandState) -> Request:
    """The request the match would send for ``state``."""
    msg = decode(request_bytes(state, legal_actions(state), 1, 1000, 30000))
    assert isinstance(msg, Request)
    return msg


def bot_decisions(state: HandState, stop: str) -> Iterator[tuple[HandState, list[Action]]]:
    """Every bot decision of kind ``stop`` reached by any sequence of the bot's legal moves
    before it (the puppet plays its scripted moves); yields (state, the bot's moves so far)."""

    def walk(state: HandState, path: list[Action]) -> Iterator[tuple[HandState, list[Action]]]:
        while not state.is_over and state.to_act != BOT:
            state = apply(state, to_action(puppet_move(None, request_for(state))))  # type: ignore[arg-type]
        if state.is_over:
            raise AssertionError(f"the hand ended before a {stop} decision: {path}")
        if str(state.phase) == stop:
            yield state, path
            return
        for action in legal_actions(state):
            yield from walk(apply(state, action), [*path, action])

    yield from walk(state, [])


def first_hand(game: int) -> HandState:
    return deal(CHECK_RULES, battery_deck(game, 0), dealer=game % 2)


def gin_legal(state: HandState) -> bool:
    hand = state.hand(BOT)
    return any(
        str(a).startswith("knock") and deadwood([c for c in hand if str(c) != str(a)[6:8]]) == 0
        for a in legal_actions(state)
    )


def test_game_0_offers_gin_and_big_gin_on_every_path() -> None:
    paths = list(bot_decisions(first_hand(0), "discard"))
    assert len(paths) >= 3  # take the upcard; pass then take the pile; pass then draw
    for state, path in paths:
        kinds = {str(a).split()[0] for a in legal_actions(state)}
        assert "big_gin" in kinds and gin_legal(state), path
        assert state.dealer == BOT


def test_game_1_offers_a_knock_but_no_gin_on_every_path() -> None:
    paths = list(bot_decisions(first_hand(1), "discard"))
    for state, path in paths:
        kinds = {str(a).split()[0] for a in legal_actions(state)}
        assert "knock" in kinds and not gin_legal(state), path
        assert state.dealer != BOT
    # Passing leads, after the puppet's pass, to the request where only draw_stock is legal.
    assert any(len(path) == 2 and str(path[1]) == "draw_stock" for _, path in paths)


def test_game_2_gives_the_bot_a_draw_decision_on_every_path() -> None:
    paths = list(bot_decisions(first_hand(2), "draw"))
    assert paths
    assert all(state.dealer == BOT for state, _ in paths)


def test_later_hands_are_seeded_deals() -> None:
    assert battery_deck(0, 1) == battery_deck(0, 1) != battery_deck(0, 2)
    assert sorted(battery_deck(BATTERY_GAMES, 0)) == sorted(DECK)


def test_scripted_deck_validates() -> None:
    with pytest.raises(ValueError, match="twice"):
        scripted_deck("2d 4d 6d 8d 3s 5s 8s 2h 4h 6h", "2d 2c 3c 4c 7d 7h 7s 9h Th Jh", "5c")
    with pytest.raises(ValueError, match="ten cards"):
        scripted_deck("2d 4d", "Ac 2c", "5c")
