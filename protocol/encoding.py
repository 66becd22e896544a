"""The learning environment's encodings: a fixed action space and a flat observation vector.

Shared by the in-process environment (:mod:`referee.env`, which fills it from the rules state)
and by the bot adapter (:mod:`protocol.policy`, which fills it from a ``request``), so a policy
sees the very same numbers in training and in a match. It needs numpy (the ``env`` extra);
the rest of :mod:`protocol` does not.

Cards are numbered ``suit * 13 + rank - 1`` with suits ``cdhs`` and the ace low: ``Ac`` is 0,
``Kc`` 12, ``Ad`` 13, ``Ks`` 51 (the rules engine's own card index).

Actions (:data:`NUM_ACTIONS` = 108): ``0`` draw_stock, ``1`` take_discard, ``2`` pass_upcard,
``3 + card`` discard the card, ``55 + card`` knock discarding the card (melds arranged by the
referee from the ten cards kept), ``107`` big_gin.

>>> action_index(WireAction.discard("Ks")), wire_action(3 + 51)
(54, WireAction(kind='discard', card='Ks', melds=None))
>>> CARDS[:2], CARDS[13], OBS_SIZE
(('Ac', '2c'), 'Ad', 331)

The observation (:data:`OBS_SIZE` = 331 values, each 0 or 1, ``int8``), from the point of view
of the seat it is for; each block is :data:`LAYOUT`'s ``(offset, length)``:

=============  ======  =====================================================================
block          length  meaning
=============  ======  =====================================================================
hand           52      the seat's own cards
top            52      the top card of the discard pile (the one that may be taken)
pile           52      the other cards of the discard pile (out of play)
opp_known      52      cards the opponent holds that it took from the pile
taken          52      the card this seat took this turn (it may not discard it)
phase          4       first_upcard, draw, discard, hand_over (one-hot)
to_act         1       this seat is to decide
dealer         1       this seat dealt
opp_eleven     1       the opponent holds eleven cards
doubled        1       the hand's score is multiplied (Oklahoma spade upcard)
knock_limit    11      the knock limit, 0..10 (one-hot; above 10 counts as 10)
stock          32      cards left in the stock, 0..31 (one-hot)
my_score       10      own game score before this hand, in tenths of the target (one-hot)
opp_score      10      the opponent's, likewise
=============  ======  =====================================================================
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from protocol.cards import RANKS, SUITS
from protocol.schema import WireAction, WireView

__all__ = [
    "BIG_GIN",
    "CARDS",
    "CARD_INDEX",
    "DISCARD",
    "DRAW_STOCK",
    "KNOCK",
    "LAYOUT",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "PASS_UPCARD",
    "PHASE_INDEX",
    "TAKE_DISCARD",
    "action_index",
    "encode",
    "encode_view",
    "hand_bits",
    "turn_bits",
    "wire_action",
]

CARDS: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
"""Card strings by index (``suit * 13 + rank - 1``)."""
CARD_INDEX: dict[str, int] = {card: i for i, card in enumerate(CARDS)}
"""Index of each card string."""

DRAW_STOCK = 0
TAKE_DISCARD = 1
PASS_UPCARD = 2
DISCARD = 3
"""First discard action: ``DISCARD + card``."""
KNOCK = 55
"""First knock action: ``KNOCK + card``."""
BIG_GIN = 107
NUM_ACTIONS = 108
"""Size of the fixed action space."""

PHASE_INDEX: dict[str, int] = {"first_upcard": 0, "draw": 1, "discard": 2, "hand_over": 3}
"""Position of each phase in the ``phase`` block."""

LAYOUT: dict[str, tuple[int, int]] = {}
"""Each observation block's ``(offset, length)``."""
_offset = 0
for _name, _length in (
    ("hand", 52), ("top", 52), ("pile", 52), ("opp_known", 52), ("taken", 52),
    ("phase", 4), ("to_act", 1), ("dealer", 1), ("opp_eleven", 1), ("doubled", 1),
    ("knock_limit", 11), ("stock", 32), ("my_score", 10), ("opp_score", 10),
):  # fmt: skip
    LAYOUT[_name] = (_offset, _length)
    _offset += _length
OBS_SIZE = _offset
"""Length of the observation vector."""

_PHASE = LAYOUT["phase"][0]
_TO_ACT = LAYOUT["to_act"][0]
_DEALER = LAYOUT["dealer"][0]
_ELEVEN = LAYOUT["opp_eleven"][0]
_DOUBLED = LAYOUT["doubled"][0]
_LIMIT = LAYOUT["knock_limit"][0]
_STOCK = LAYOUT["stock"][0]
_MY_SCORE = LAYOUT["my_score"][0]
_OPP_SCORE = LAYOUT["opp_score"][0]
_BYTES = (OBS_SIZE + NUM_ACTIONS + 7) // 8

_SIMPLE = {"draw_stock": DRAW_STOCK, "take_discard": TAKE_DISCARD, "pass_upcard": PASS_UPCARD}
_WIRE: tuple[WireAction, ...] = (
    WireAction.draw_stock(),
    WireAction.take_discard(),
    WireAction.pass_upcard(),
    *(WireAction.discard(card) for card in CARDS),
    *(WireAction.knock(card) for card in CARDS),
    WireAction.big_gin(),
)


def action_index(action: WireAction) -> int:
    """The action space's number for a wire action (a knock's declared melds are ignored)."""
    kind = action.kind
    simple = _SIMPLE.get(kind)
    if simple is not None:
        return simple
    if kind == "big_gin":
        return BIG_GIN
    if action.card is None:
        raise ValueError(f"a {kind} needs a card")
    base = DISCARD if kind == "discard" else KNOCK
    return base + CARD_INDEX[action.card]


def wire_action(index: int) -> WireAction:
    """The wire action of an action number (a knock leaves the melds to the referee)."""
    if not 0 <= index < NUM_ACTIONS:
        raise ValueError(f"action {index} is outside 0..{NUM_ACTIONS - 1}")
    return _WIRE[index]


def _score_band(score: int, target: int) -> int:
    return min(10 * score // target, 9) if target > 0 else 9


def encode(
    hand: int,
    top: int,
    pile: int,
    opp_known: int,
    taken: int,
    phase: int,
    misc: int,
    legal: int,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """The observation and the action mask from card masks (bit ``i`` is card ``i``).

    ``top``/``pile``: the top card of the discard pile and the rest of it; ``taken``: the card
    taken this turn (0 for none); ``phase``: :data:`PHASE_INDEX`'s number; ``misc``: the bits
    of the blocks after ``phase``, shifted to start at 0 (:func:`hand_bits` ``|``
    :func:`turn_bits`); ``legal``: the
    legal actions as a mask over the action numbers. Both arrays share one fresh buffer.
    """
    value = (
        hand
        | top << 52
        | pile << 104
        | opp_known << 156
        | taken << 208
        | 1 << (_PHASE + phase)
        | misc << _TO_ACT
        | legal << OBS_SIZE
    )
    bits = np.unpackbits(
        np.frombuffer(value.to_bytes(_BYTES, "little"), np.uint8), bitorder="little"
    ).view(np.int8)
    return bits[:OBS_SIZE], bits[OBS_SIZE : OBS_SIZE + NUM_ACTIONS]


def hand_bits(
    *, dealer: bool, doubled: bool, knock_limit: int, scores: tuple[int, int], target: int
) -> int:
    """The blocks that stay the same through a hand, for :func:`encode`'s ``misc``
    (``scores``: own, then the opponent's)."""
    return (
        dealer << (_DEALER - _TO_ACT)
        | doubled << (_DOUBLED - _TO_ACT)
        | 1 << (_LIMIT - _TO_ACT + min(knock_limit, 10))
        | 1 << (_MY_SCORE - _TO_ACT + _score_band(scores[0], target))
        | 1 << (_OPP_SCORE - _TO_ACT + _score_band(scores[1], target))
    )


def turn_bits(to_act: bool, opp_eleven: bool, stock_size: int) -> int:
    """The blocks that change from turn to turn, for :func:`encode`'s ``misc``."""
    return (
        to_act | opp_eleven << (_ELEVEN - _TO_ACT) | 1 << (_STOCK - _TO_ACT + min(stock_size, 31))
    )


def _mask(cards: Iterable[str]) -> int:
    value = 0
    for card in cards:
        value |= 1 << CARD_INDEX[card]
    return value


def encode_view(
    view: WireView, legal: Iterable[WireAction], *, target: int = 100
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """The observation and action mask of a ``request``'s view and legal actions (``target``:
    the rules' game target, from ``match_start``)."""
    seat = view.seat
    pile = view.discard_pile
    legal_mask = 0
    for action in legal:
        legal_mask |= 1 << action_index(action)
    misc = hand_bits(
        dealer=view.dealer == seat,
        doubled=view.multiplier > 1,
        knock_limit=view.knock_limit,
        scores=(view.scores[seat], view.scores[1 - seat]),
        target=target,
    ) | turn_bits(
        view.to_act == seat and view.phase != "hand_over",
        view.opponent_hand_size == 11,
        view.stock_size,
    )
    return encode(
        _mask(view.hand),
        _mask(pile[-1:]),
        _mask(pile[:-1]),
        _mask(view.opponent_known),
        _mask(() if view.taken_card is None else (view.taken_card,)),
        PHASE_INDEX[view.phase],
        misc,
        legal_mask,
    )
