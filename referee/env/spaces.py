"""The protocol's view as an observation: :class:`ViewSpace` and :func:`wire_view`.

:func:`wire_view` is the ``view`` map of the ``request`` a bot gets for the same state (the
referee writes those bytes straight from the state, ``referee.match.request``; this builds the
same value the general way, from :func:`~referee.rules.observe`).
"""

from __future__ import annotations

from typing import Any

import gymnasium

from protocol.schema import WireView
from referee.rules import PlayerView

__all__ = ["ViewSpace", "wire_view"]


def wire_view(view: PlayerView) -> WireView:
    """The protocol's :class:`~protocol.schema.WireView` of a rules view."""
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


class ViewSpace(gymnasium.Space[WireView]):
    """The space of :class:`~protocol.schema.WireView` values (not sampled: a view is only
    ever observed)."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a view."""
        return isinstance(x, WireView)

    def sample(self, mask: Any = None, probability: Any = None) -> WireView:
        """Not supported: views come from states, not from a distribution."""
        raise NotImplementedError("a view cannot be sampled; observe an environment instead")

    @property
    def is_np_flattenable(self) -> bool:
        """No: a view is structured data."""
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ViewSpace)

    def __hash__(self) -> int:
        return hash(ViewSpace)

    def __repr__(self) -> str:
        return "ViewSpace()"
