"""Transitions of a hand: ``check`` an action, ``apply`` it, ``replay`` a record.

:func:`apply` checks an action and returns the next state, raising :class:`IllegalAction` with
the reason otherwise; :func:`apply_unchecked` is the replay path for already-checked records.
Dispatch is by the action's type through small tables (cheaper than ``match`` chains on the
hot path), and the frequent transitions build the next ``HandState`` tuple directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from referee.rules.actions import (
    DRAW_STOCK,
    TAKE_DISCARD,
    Action,
    BigGin,
    Defend,
    Discard,
    DrawStock,
    Knock,
    PassUpcard,
    TakeDiscard,
)
from referee.rules.cards import Card, mask_value
from referee.rules.compiled import compiled_module
from referee.rules.errors import IllegalAction
from referee.rules.melds import Meld, deadwood_mask, meld_kind
from referee.rules.ruleset import RuleSet
from referee.rules.scoring import HandResult, Termination, defend_result, resolve_knock
from referee.rules.state import (
    _P_DISCARD,
    _P_DRAW,
    _P_FIRST,
    _P_OVER,
    _WALL,
    HandState,
    deal,
)

__all__ = [
    "COMPILED",
    "apply",
    "apply_unchecked",
    "check",
    "is_legal",
    "python_apply",
    "python_apply_unchecked",
    "replay",
]


def check(state: HandState, action: Action) -> None:
    """Raise :class:`IllegalAction` with the reason unless ``action`` is legal in ``state``."""
    reason = _illegal_reason(state, action)
    if reason is not None:
        raise IllegalAction(str(action), str(state.phase), reason)


def is_legal(state: HandState, action: Action) -> bool:
    """Whether ``action`` is legal in ``state``."""
    return _illegal_reason(state, action) is None


def _illegal_reason(state: HandState, action: Action) -> str | None:
    if type(action) is Defend:
        return _check_defend(state, action)
    if state.phase is _P_OVER:
        return "the hand is over"
    checker = _CHECKS.get(type(action))
    if checker is None:
        return f"unknown action {action!r}"
    return checker(state, action)


def _check_defend(state: HandState, action: Defend) -> str | None:
    """Legal once, right after a knock (or gin, or big gin), with melds of the defender's own
    cards, each card in one meld at most."""
    result = state.result
    if state.phase is not _P_OVER or result is None or result.knocker is None:
        return "the defender declares its melds only after a knock"
    if result.defended:
        return "the defender has declared its melds already"
    own = state.hands[1 - result.knocker]
    used = 0
    for meld in action.melds:
        if meld.mask & ~own:
            return f"the meld {meld} is not of the defender's cards"
        if meld.mask & used:
            return f"the meld {meld} shares a card with another meld"
        used |= meld.mask
    return None


def _apply_defend(state: HandState, action: Defend) -> HandState:
    assert state.result is not None
    result = defend_result(state.rules, state.result, action.melds, state.multiplier)
    return state._replace(result=result)


def _check_pass(state: HandState, action: Action) -> str | None:
    if state.phase is not _P_FIRST or state.passes >= 2:
        return "passing is only allowed on the first upcard"
    return None


def _check_take(state: HandState, action: Action) -> str | None:
    if state.phase is _P_FIRST:
        if state.passes >= 2:
            return "both players passed the upcard: draw from the stock"
        return None
    if state.phase is not _P_DRAW:
        return "you must discard before drawing again"
    return None


def _check_draw(state: HandState, action: Action) -> str | None:
    if state.phase is _P_FIRST:
        return None if state.passes >= 2 else "take or pass the first upcard first"
    if state.phase is not _P_DRAW:
        return "you must discard before drawing again"
    return None


def _check_discard(state: HandState, action: Discard | Knock) -> str | None:
    if state.phase is not _P_DISCARD:
        return "draw a card first"
    card = action.card
    hand = state.hands[state.to_act]
    if not hand >> card.index & 1:
        return f"{card} is not in your hand"
    if card.index == state.taken:
        return f"{card} was just taken from the discard pile and may not be discarded"
    if type(action) is Knock:
        return _knock_reason(state, hand & ~(1 << card.index), action.melds)
    return None


def _check_big_gin(state: HandState, action: Action) -> str | None:
    if state.phase is not _P_DISCARD:
        return "big gin is declared after drawing"
    if state.rules.big_gin_bonus is None:
        return "big gin is not played under these rules"
    if deadwood_mask(state.hands[state.to_act]) != 0:
        return "big gin needs all eleven cards melded"
    return None


def _knock_reason(state: HandState, rest: int, melds: tuple[Meld, ...] | None) -> str | None:
    limit = state.knock_limit
    if melds is None:
        dw = deadwood_mask(rest)
    else:
        covered = 0
        for meld in melds:
            if meld_kind(meld.mask) is None:
                return f"[{meld}] is not a meld"
            if meld.mask & ~rest:
                return f"meld [{meld}] uses cards not in the hand kept"
            if meld.mask & covered:
                return f"meld [{meld}] overlaps another declared meld"
            covered |= meld.mask
        dw = mask_value(rest & ~covered)
    if dw > limit:
        return f"deadwood {dw} is above the knock limit {limit}"
    return None


def python_apply(state: HandState, action: Action) -> HandState:
    """Check ``action`` and return the next state (raises :class:`IllegalAction`)."""
    reason = _illegal_reason(state, action)
    if reason is not None:
        raise IllegalAction(str(action), str(state.phase), reason)
    return _APPLY[type(action)](state, action)


def python_apply_unchecked(state: HandState, action: Action) -> HandState:
    """Return the next state without checking legality: only for replaying checked records."""
    try:
        step = _APPLY[type(action)]
    except KeyError:
        raise TypeError(f"not an action: {action!r}") from None
    return step(state, action)


_new = tuple.__new__


def _apply_pass(state: HandState, action: Action) -> HandState:
    return state._replace(passes=state.passes + 1, to_act=1 - state.to_act)


def _apply_draw(s: HandState, action: Action) -> HandState:
    seat = s.to_act
    card = s.deck[s.stock_pos]
    hands = (
        (s.hands[0] | 1 << card, s.hands[1]) if seat == 0 else (s.hands[0], s.hands[1] | 1 << card)
    )
    return _new(HandState, (
        s.rules, s.dealer, s.deck, hands, s.stock_pos + 1, s.discard_pile, _P_DISCARD, seat,
        s.passes, -1, s.known, s.turn, s.knock_limit, s.multiplier, s.scores, None,
    ))  # fmt: skip


def _apply_take(s: HandState, action: Action) -> HandState:
    seat = s.to_act
    card = s.discard_pile[-1]
    return _new(HandState, (
        s.rules, s.dealer, s.deck, _with(s.hands, seat, s.hands[seat] | 1 << card),
        s.stock_pos, s.discard_pile[:-1], _P_DISCARD, seat,
        s.passes, card, _with(s.known, seat, s.known[seat] | 1 << card),
        s.turn, s.knock_limit, s.multiplier, s.scores, None,
    ))  # fmt: skip


def _apply_discard(s: HandState, action: Discard) -> HandState:
    seat = s.to_act
    index = action.card.index
    keep = ~(1 << index)
    hands, known = s.hands, s.known
    if seat == 0:
        hands, known = (hands[0] & keep, hands[1]), (known[0] & keep, known[1])
    else:
        hands, known = (hands[0], hands[1] & keep), (known[0], known[1] & keep)
    after: HandState = _new(HandState, (
        s.rules, s.dealer, s.deck, hands, s.stock_pos, (*s.discard_pile, index), _P_DRAW,
        1 - seat, s.passes, -1, known, s.turn + 1, s.knock_limit, s.multiplier, s.scores, None,
    ))  # fmt: skip
    if len(s.deck) - s.stock_pos <= _WALL:
        return _void(after, Termination.WALL)
    if after.turn >= s.rules.turn_cap:
        return _void(after, Termination.TURN_CAP)
    return after


def _apply_knock(state: HandState, action: Knock) -> HandState:
    seat = state.to_act
    kept = state.hands[seat] & ~(1 << action.card.index)
    result = resolve_knock(
        state.rules,
        knocker=seat,
        knocker_hand=kept,
        defender_hand=state.hands[1 - seat],
        knock_limit=state.knock_limit,
        declared=action.melds,
        multiplier=state.multiplier,
    )
    return state._replace(
        hands=_with(state.hands, seat, kept),
        known=_with(state.known, seat, state.known[seat] & ~(1 << action.card.index)),
        discard_pile=(*state.discard_pile, action.card.index),
        phase=_P_OVER,
        taken=-1,
        turn=state.turn + 1,
        result=result,
    )


def _apply_big_gin(state: HandState, action: Action) -> HandState:
    seat = state.to_act
    result = resolve_knock(
        state.rules,
        knocker=seat,
        knocker_hand=state.hands[seat],
        defender_hand=state.hands[1 - seat],
        knock_limit=state.knock_limit,
        declared=None,
        big_gin=True,
        multiplier=state.multiplier,
    )
    return state._replace(phase=_P_OVER, taken=-1, result=result)


# Each takes the action of its type (looked up by ``type(action)``), without a runtime cast.
_CHECKS: dict[type, Callable[[HandState, Any], str | None]] = {
    PassUpcard: _check_pass,
    TakeDiscard: _check_take,
    DrawStock: _check_draw,
    Discard: _check_discard,
    Knock: _check_discard,
    BigGin: _check_big_gin,
    Defend: _check_defend,
}
_APPLY: dict[type, Callable[[HandState, Any], HandState]] = {
    PassUpcard: _apply_pass,
    TakeDiscard: _apply_take,
    DrawStock: _apply_draw,
    Discard: _apply_discard,
    Knock: _apply_knock,
    BigGin: _apply_big_gin,
    Defend: _apply_defend,
}


def _with(pair: tuple[int, int], seat: int, value: int) -> tuple[int, int]:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def _void(state: HandState, termination: Termination) -> HandState:
    result = HandResult(
        termination=termination,
        winner=None,
        points=0,
        hands=(state.hand(0), state.hand(1)),
        deadwood=(deadwood_mask(state.hands[0]), deadwood_mask(state.hands[1])),
    )
    return state._replace(phase=_P_OVER, result=result)


def _compiled() -> tuple[Callable[..., HandState], Callable[..., HandState]] | None:
    """The compiled pair (``referee/rules/_moves.c``), set up with this module's Python
    functions as its fallbacks, or None (not built, or ``GIN_REFEREE_PURE_PYTHON`` set)."""
    module = compiled_module("referee.rules._moves")
    if module is None:
        return None
    fields = HandState._fields
    names = (
        *("rules", "deck", "hands", "stock_pos", "discard_pile", "phase", "to_act"),
        *("taken", "known", "turn"),
    )
    module.setup(
        HandState,
        (*(fields.index(name) for name in names), len(fields)),
        (_P_DRAW, _P_DISCARD),
        DRAW_STOCK,
        TAKE_DISCARD,
        Discard,
        _WALL,
        python_apply,
        python_apply_unchecked,
    )
    return module.apply, module.apply_unchecked


_COMPILED_PAIR = _compiled()
COMPILED = _COMPILED_PAIR is not None
"""Whether :func:`apply` and :func:`apply_unchecked` are the compiled ones."""
apply = python_apply
"""Check an action and return the next state (raises :class:`IllegalAction`): the compiled
function when there is one (the common moves in C, the rest handed to
:func:`python_apply`), else :func:`python_apply`."""
apply_unchecked = python_apply_unchecked
"""The next state without checking legality (only for replaying checked records): compiled
as :func:`apply` is, else :func:`python_apply_unchecked`."""
if _COMPILED_PAIR is not None:
    apply, apply_unchecked = _COMPILED_PAIR


def replay(
    rules: RuleSet,
    deck: Sequence[Card],
    *,
    dealer: int,
    actions: Iterable[Action],
    scores: tuple[int, int] = (0, 0),
) -> HandState:
    """Re-deal and re-apply ``actions`` with full checks; the final state."""
    state = deal(rules, deck, dealer=dealer, scores=scores)
    for action in actions:
        state = apply(state, action)
    return state
