"""One hand of Gin Rummy as an immutable state machine.

``deal`` builds the first state from an explicit deck order; :func:`legal_actions` lists every
legal action in a canonical order. The transitions (``check``, ``apply``, ``replay``) are in
:mod:`referee.rules.moves`. A hand is reproducible from its deck order, dealer, rules and
action list.

The deal: cards 0..19 of the deck go alternately to the non-dealer and the dealer (non-dealer
first), card 20 is the first upcard, and the stock is drawn from card 21 on.

>>> import random
>>> from referee.rules.ruleset import STANDARD
>>> state = deal(STANDARD, shuffled_deck(random.Random(7)), dealer=0)
>>> state.phase, state.to_act, legal_actions(state)
(<Phase.FIRST_UPCARD: 'first_upcard'>, 1, (TakeDiscard(), PassUpcard()))
>>> from referee.rules.moves import apply
>>> state = apply(state, PASS_UPCARD)
>>> state.to_act
0
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import NamedTuple

from referee.rules.actions import (
    BIG_GIN,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_DISCARD,
    Action,
    discard_action,
    knock_action,
)
from referee.rules.cards import DECK, Card, CardSet, mask_table
from referee.rules.compiled import compiled_module
from referee.rules.melds import _knock_discards, _knock_discards_exact, deadwood_mask
from referee.rules.ruleset import RuleSet
from referee.rules.scoring import HandResult

__all__ = [
    "COMPILED",
    "HandState",
    "Phase",
    "deal",
    "discard_options",
    "legal_actions",
    "python_discard_options",
    "python_legal_actions",
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
    def actor(self) -> int:
        """The seat whose move may come next: ``to_act``, or once a knock ended the hand the
        defender, who may still declare its melds (:class:`~referee.rules.Defend`)."""
        result = self.result
        if result is not None and result.knocker is not None and not result.defended:
            return 1 - result.knocker
        return self.to_act

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return len(self.deck) - self.stock_pos

    @property
    def upcard(self) -> Card:
        """The first upcard of the hand."""
        return DECK[self.deck[20]]

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


def _first_row_discards(mask: int) -> tuple[Action, ...]:
    """:data:`_row_discards` on its first call: builds the table (4 x 8,192 rows, about 10 ms,
    which a bot that imports the rules only to count deadwood never needs), puts its lookup
    in the module's name, then answers."""
    global _row_discards  # noqa: PLW0603 (built once; the hot path then calls the lookup)
    _row_discards = mask_table(_DISCARDS)
    return _row_discards(mask)


_row_discards: Callable[[int], tuple[Action, ...]] = _first_row_discards
"""The :class:`Discard` of every card of a mask, in index order (the table's lookup once the
first call has built it: no check on the hot path)."""


def python_legal_actions(state: HandState) -> tuple[Action, ...]:
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


def python_discard_options(state: HandState) -> tuple[int, int, bool]:
    """The legal actions of a discard phase as masks, for callers that number actions
    themselves (the learning environment's action mask): ``(discards, knocks, big_gin)``, the
    cards that may be discarded, those that may be discarded with a knock (the engine choosing
    the melds), and whether big gin may be declared. :func:`legal_actions` lists the same.
    Only for a state in the discard phase.
    """
    hand = state.hands[state.to_act]
    allowed = hand & ~(1 << state.taken) if state.taken >= 0 else hand
    found = _knock_discards(hand, state.knock_limit)
    if not found:
        return allowed, 0, False
    knocks = 0
    for i in found:
        knocks |= 1 << i
    big = state.rules.big_gin_bonus is not None and deadwood_mask(hand) == 0
    return allowed, knocks & allowed, big


def _compiled() -> (
    tuple[Callable[..., tuple[Action, ...]], Callable[..., tuple[int, int, bool]]] | None
):
    """The compiled pair (``referee/rules/_legal.c``), set up with this module's tables, or
    None (not built, or ``GIN_REFEREE_PURE_PYTHON`` set). Pure computation, as here."""
    module = compiled_module("referee.rules._legal")
    if module is None:
        return None
    fields = HandState._fields
    names = ("rules", "hands", "phase", "to_act", "passes", "taken", "knock_limit")
    module.setup(
        tuple(fields.index(name) for name in names),
        (_P_FIRST, _P_DRAW, _P_DISCARD, _P_OVER),
        (_FIRST_UPCARD, _STOCK_ONLY, _DRAW, ()),
        _DISCARDS,
        _KNOCKS,
        BIG_GIN,
        _knock_discards_exact,
        deadwood_mask,
    )
    return module.legal_actions, module.discard_options


_COMPILED_PAIR = _compiled()
COMPILED = _COMPILED_PAIR is not None
"""Whether :func:`legal_actions` and :func:`discard_options` are the compiled ones."""
legal_actions = python_legal_actions
"""Every legal action for ``state.to_act``, in canonical order (empty once over): the compiled
function when there is one, else :func:`python_legal_actions` (see it)."""
discard_options = python_discard_options
"""A discard phase's options as masks: the compiled function when there is one, else
:func:`python_discard_options` (see it)."""
if _COMPILED_PAIR is not None:
    legal_actions, discard_options = _COMPILED_PAIR
