"""One hand of Gin Rummy as an immutable state machine.

``deal`` builds the first state from an explicit deck order; :func:`legal_actions` lists every
legal action in a canonical order; :func:`apply` checks an action and returns the next state,
raising :class:`IllegalAction` with the reason otherwise. A hand is reproducible from its deck
order, dealer, rules and action list (:func:`replay`).

The deal: cards 0..19 of the deck go alternately to the non-dealer and the dealer (non-dealer
first), card 20 is the first upcard, and the stock is drawn from card 21 on.

>>> import random
>>> from referee.rules.ruleset import STANDARD
>>> state = deal(STANDARD, shuffled_deck(random.Random(7)), dealer=0)
>>> state.phase, state.to_act, legal_actions(state)
(<Phase.FIRST_UPCARD: 'first_upcard'>, 1, (TakeDiscard(), PassUpcard()))
>>> state = apply(state, PASS_UPCARD)
>>> state.to_act
0
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from typing import NamedTuple, cast

from referee.rules.actions import (
    BIG_GIN,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_DISCARD,
    Action,
    BigGin,
    Discard,
    DrawStock,
    Knock,
    PassUpcard,
    TakeDiscard,
    discard_action,
    knock_action,
)
from referee.rules.cards import DECK, Card, CardSet, card_value, iter_bits, mask_value
from referee.rules.errors import IllegalAction
from referee.rules.melds import Meld, _knock_discards, deadwood_mask, meld_kind
from referee.rules.ruleset import RuleSet
from referee.rules.scoring import HandResult, Termination, resolve_knock

__all__ = [
    "HandState",
    "Phase",
    "apply",
    "apply_unchecked",
    "check",
    "deal",
    "is_legal",
    "legal_actions",
    "replay",
    "shuffled_deck",
]

_STOCK_START = 21
_WALL = 2


class Phase(StrEnum):
    """Where the hand is; ``to_act`` says whose decision it is."""

    FIRST_UPCARD = "first_upcard"
    DRAW = "draw"
    DISCARD = "discard"
    HAND_OVER = "hand_over"


# Enum member lookup costs ~200 ns on Python 3.11; the hot paths use these module constants.
_P_FIRST = Phase.FIRST_UPCARD
_P_DRAW = Phase.DRAW
_P_DISCARD = Phase.DISCARD
_P_OVER = Phase.HAND_OVER


class HandState(NamedTuple):
    """An immutable snapshot of one hand. Card collections are 52-bit masks or index tuples.

    A ``NamedTuple`` rather than a frozen dataclass: building the next state is on the hot
    path of every decision and a tuple is built several times faster.
    """

    rules: RuleSet
    """The rule set in force."""
    dealer: int
    """Seat (0/1) that dealt."""
    deck: tuple[int, ...]
    """The deck order as card indices (the deal, the upcard, then the stock)."""
    hands: tuple[int, int]
    """Each seat's hand as a mask."""
    stock_pos: int
    """Index into ``deck`` of the next stock card."""
    discard_pile: tuple[int, ...]
    """Discard pile as card indices, bottom first."""
    phase: Phase
    """Current phase."""
    to_act: int
    """Seat to decide (meaningless once the hand is over)."""
    passes: int = 0
    """Passes on the first upcard so far (0..2)."""
    taken: int = -1
    """Card index taken from the discard pile this turn (may not be discarded), or -1."""
    known: tuple[int, int] = (0, 0)
    """Cards each seat is publicly known to hold (taken from the pile), as masks."""
    turn: int = 0
    """Discards made so far in this hand."""
    knock_limit: int = 10
    """Knock limit in force (fixed by the upcard under Oklahoma)."""
    multiplier: int = 1
    """Score multiplier (2 for an Oklahoma spade upcard)."""
    scores: tuple[int, int] = (0, 0)
    """Game scores by seat before this hand (carried for the players' views)."""
    result: HandResult | None = None
    """How the hand ended, once it has."""

    def hand(self, seat: int) -> CardSet:
        """Seat's hand as a :class:`CardSet`."""
        return CardSet(self.hands[seat])

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return len(self.deck) - self.stock_pos

    @property
    def upcard(self) -> Card:
        """The first upcard of the hand."""
        return DECK[self.deck[20]]

    @property
    def top_discard(self) -> Card | None:
        """Top of the discard pile, if any."""
        return DECK[self.discard_pile[-1]] if self.discard_pile else None

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self.phase is _P_OVER


def shuffled_deck(rng: random.Random) -> tuple[Card, ...]:
    """A deck order shuffled with the injected RNG (never the global one)."""
    order = list(DECK)
    rng.shuffle(order)
    return tuple(order)


def deal(
    rules: RuleSet,
    deck: Sequence[Card],
    *,
    dealer: int,
    scores: tuple[int, int] = (0, 0),
) -> HandState:
    """Deal a hand from an explicit deck order (all 52 cards, each once)."""
    if dealer not in (0, 1):
        raise ValueError(f"dealer must be 0 or 1, not {dealer!r}")
    order = tuple(card.index for card in deck)
    if len(order) != 52 or len(set(order)) != 52:
        raise ValueError("a deck order must hold each of the 52 cards exactly once")
    hands = [0, 0]
    for i in range(20):
        hands[(1 - dealer) if i % 2 == 0 else dealer] |= 1 << order[i]
    upcard = DECK[order[20]]
    limit, multiplier = rules.knock_limit, 1
    if rules.oklahoma:
        limit = 0 if upcard.rank == 1 else min(upcard.value, rules.knock_limit)
    if rules.spade_doubles and upcard.suit == 3:
        multiplier = 2
    return HandState(
        rules=rules,
        dealer=dealer,
        deck=order,
        hands=(hands[0], hands[1]),
        stock_pos=_STOCK_START,
        discard_pile=(order[20],),
        phase=_P_FIRST,
        to_act=1 - dealer,
        knock_limit=limit,
        multiplier=multiplier,
        scores=scores,
    )


_FIRST_UPCARD = (TAKE_DISCARD, PASS_UPCARD)
_STOCK_ONLY = (DRAW_STOCK,)
_DRAW = (DRAW_STOCK, TAKE_DISCARD)
_DISCARDS = tuple(discard_action(card) for card in DECK)
_KNOCKS = tuple(knock_action(card) for card in DECK)


def _build_row_discards(suit: int) -> tuple[tuple[Action, ...], ...]:
    """For one suit, the tuple of :class:`Discard` actions of every 13-bit row."""
    base = 13 * suit
    return tuple(
        tuple(_DISCARDS[base + i] for i in range(13) if row >> i & 1) for row in range(8192)
    )


_RD0, _RD1, _RD2, _RD3 = (_build_row_discards(suit) for suit in range(4))


def _row_discards(mask: int) -> tuple[Action, ...]:
    """The :class:`Discard` of every card in ``mask`` in index order, from per-row tables."""
    return _RD0[mask & 8191] + _RD1[mask >> 13 & 8191] + _RD2[mask >> 26 & 8191] + _RD3[mask >> 39]


def legal_actions(state: HandState) -> tuple[Action, ...]:
    """Every legal action for ``state.to_act``, in canonical order (empty once over).

    Knocks are listed with ``melds=None``; a knock declaring its own melds is also legal when
    the declared arrangement is valid and within the knock limit (see :func:`check`).
    """
    phase = state.phase
    if phase is _P_DRAW:
        return _DRAW
    if phase is _P_DISCARD:
        hand = state.hands[state.to_act]
        allowed = hand & ~(1 << state.taken) if state.taken >= 0 else hand
        discards = _row_discards(allowed)
        knocks = _knock_discards(hand, state.knock_limit)
        if not knocks:
            return discards
        # Big gin implies a discard that leaves 0 deadwood, so it is only looked for here.
        actions: list[Action] = [*discards, *(_KNOCKS[i] for i in knocks if allowed >> i & 1)]
        if state.rules.big_gin_bonus is not None and deadwood_mask(hand) == 0:
            actions.append(BIG_GIN)
        return tuple(actions)
    if phase is _P_FIRST:
        return _STOCK_ONLY if state.passes >= 2 else _FIRST_UPCARD
    return ()


def check(state: HandState, action: Action) -> None:
    """Raise :class:`IllegalAction` with the reason unless ``action`` is legal in ``state``."""
    reason = _illegal_reason(state, action)
    if reason is not None:
        raise IllegalAction(str(action), str(state.phase), reason)


def is_legal(state: HandState, action: Action) -> bool:
    """Whether ``action`` is legal in ``state``."""
    return _illegal_reason(state, action) is None


def _illegal_reason(state: HandState, action: Action) -> str | None:
    if state.phase is _P_OVER:
        return "the hand is over"
    checker = _CHECKS.get(type(action))
    if checker is None:
        return f"unknown action {action!r}"
    return checker(state, action)


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


def _check_discard(state: HandState, action: Action) -> str | None:
    action = cast(Discard | Knock, action)
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


def apply(state: HandState, action: Action) -> HandState:
    """Check ``action`` and return the next state (raises :class:`IllegalAction`)."""
    reason = _illegal_reason(state, action)
    if reason is not None:
        raise IllegalAction(str(action), str(state.phase), reason)
    return _APPLY[type(action)](state, action)


def apply_unchecked(state: HandState, action: Action) -> HandState:
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


def _apply_discard(s: HandState, action: Action) -> HandState:
    seat = s.to_act
    index = cast(Discard, action).card.index
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


def _apply_knock(state: HandState, action: Action) -> HandState:
    action = cast(Knock, action)
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


_CHECKS: dict[type, Callable[[HandState, Action], str | None]] = {
    PassUpcard: _check_pass,
    TakeDiscard: _check_take,
    DrawStock: _check_draw,
    Discard: _check_discard,
    Knock: _check_discard,
    BigGin: _check_big_gin,
}
_APPLY: dict[type, Callable[[HandState, Action], HandState]] = {
    PassUpcard: _apply_pass,
    TakeDiscard: _apply_take,
    DrawStock: _apply_draw,
    Discard: _apply_discard,
    Knock: _apply_knock,
    BigGin: _apply_big_gin,
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


def total_value(state: HandState, seat: int) -> int:
    """Total card value of a seat's hand (helper for views and tests)."""
    return sum(card_value(i) for i in iter_bits(state.hands[seat]))
