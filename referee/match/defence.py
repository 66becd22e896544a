"""After a knock, the defender's own melds: the ``defend`` request and its answer.

A bot granted ``declare_melds`` (docs/protocol.md, "Declaring the defender's melds") is asked,
once a knock ended the hand, for its own melds: a ``request`` with decision ``defend``, the
knocker's melds as scored, a view of the finished hand, and one legal action, ``defend``
(answered as it is: the referee arranges its cards, as for a bot not granted it; or with
``melds``: scored as declared, :class:`~referee.rules.Defend`). Its ``view`` is built the
general way, from :func:`~referee.rules.observe` (the decision requests' bytes are written
straight from the state, :mod:`referee.match.request`).
"""

from __future__ import annotations

from protocol.codec import encode
from protocol.schema import Request, WireAction, WireView
from referee.rules import (
    Defend,
    HandState,
    InvalidMeld,
    MalformedAction,
    Meld,
    PlayerView,
    observe,
    parse_cards,
)

__all__ = ["DEFEND", "defend_action", "defend_request"]

DEFEND = WireAction("defend")
"""The one legal entry of a ``defend`` request."""


def _wire_view(view: PlayerView) -> WireView:
    """The protocol's view of a rules view (as ``referee.env.spaces.wire_view``, which the
    match cannot import: the learning environment is its own package, with gymnasium)."""
    return WireView(
        seat=view.seat,
        phase=str(view.phase),
        to_act=view.to_act,
        dealer=view.dealer,
        hand=tuple(str(card) for card in view.hand),
        discard_pile=tuple(str(card) for card in view.discard_pile),
        stock_size=view.stock_size,
        opponent_hand_size=view.opponent_hand_size,
        opponent_known=tuple(str(card) for card in view.opponent_known),
        knock_limit=view.knock_limit,
        multiplier=view.multiplier,
        turn=view.turn,
        scores=view.scores,
        taken_card=None if view.taken_card is None else str(view.taken_card),
    )


def defend_request(state: HandState, request_id: int, time_left_ms: int, bank_ms: int) -> bytes:
    """The encoded ``defend`` request to the defender of the knock that ended ``state``."""
    result = state.result
    assert result is not None and result.knocker is not None
    defender = 1 - result.knocker
    knocker_melds = tuple(
        tuple(str(c) for c in meld.cards) for meld in result.melds[result.knocker]
    )
    return encode(
        Request(
            request_id,
            "defend",
            (DEFEND,),
            _wire_view(observe(state, defender)),
            time_left_ms,
            bank_ms,
            knocker_melds=knocker_melds,
        )
    )


def defend_action(wire: WireAction) -> Defend | None:
    """The rules' :class:`Defend` of a ``defend`` answer, or None for one without melds (the
    referee arranges). Raises :class:`MalformedAction` for another kind or a bad meld."""
    if wire.kind != "defend":
        raise MalformedAction(repr(wire.kind), "the answer to a defend request is defend")
    if wire.melds is None:
        return None
    try:
        return Defend(tuple(Meld.from_cards(parse_cards(" ".join(m))) for m in wire.melds))
    except InvalidMeld as err:
        raise MalformedAction("defend", str(err)) from err
