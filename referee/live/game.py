"""One game on the live page: its header data as the page shows it, its events as encoded
bytes (:class:`~referee.live.hub.LiveHub` encodes and sends them), and what is still withheld.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.live.public import PublicHand
from referee.live.stream import sse
from referee.rules import RuleSet
from referee.view.replay_data import Clocks

__all__ = ["LiveGame"]


@dataclass(slots=True)
class LiveGame:
    """One game on the page: its events as encoded bytes, and what is still withheld."""

    id: str
    meta: dict[str, Any]
    rules: RuleSet | None = None
    deal_id: str | None = None
    meta_bytes: bytes = b""
    """The full ``match`` event for a new spectator (encoded when first needed)."""
    meta_sent: dict[str, str] = field(default_factory=dict)
    """Each meta key's JSON as last sent (a ``match`` event carries the keys that changed)."""
    hands: dict[str, bytes] = field(default_factory=dict)
    steps: dict[str, list[bytes]] = field(default_factory=dict)
    """Hand id -> the ``steps`` events sent since its ``hand`` event."""
    sent: dict[str, int] = field(default_factory=dict)
    """Hand id -> how many of its steps the spectators have."""
    playing: PublicHand | None = None
    clocks: dict[int, Clocks] = field(default_factory=dict)
    start_clocks: dict[str, Clocks] = field(default_factory=dict)
    withheld: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Hand id (or ``match`` for the fault details) -> what to release, with ``due`` set once
    its delay has passed."""
    details: list[str] = field(default_factory=list)
    over: bool = False
    broken: bool = False

    @classmethod
    def from_header(cls, match_id: str, header: dict[str, Any]) -> LiveGame:
        """A game from its record's header: named as the organiser named the bots (the
        header's ``seats``; what the bots call themselves comes later, ``self_names``)."""
        meta = {
            "match_id": match_id,
            "names": [str(n) for n in header.get("seats", ["seat 0", "seat 1"])],
            "self_names": None,
            "rules": header["rules"],
            "time_control": header.get("time_control"),
            "policy": header.get("policy"),
            "games_planned": header.get("games"),
            "faults": [],
            "games": [],
            "match_end": None,
            "complete": None,
            "status": "playing",
            "at": None,
        }
        return cls(match_id, meta, RuleSet.from_dict(header["rules"]), header.get("deal_id"))

    def hand_events(self, key: str) -> list[bytes]:
        """Hand ``key``'s events as a new spectator gets them: its ``hand`` event, its steps."""
        return [self.hands[key], *self.steps.get(key, ())]

    def events(self, *, hands: bool) -> list[bytes]:
        """The game's events for a new spectator: its ``match`` event in full, then, with
        ``hands`` (the game it watches), every hand's."""
        if not self.meta_bytes:
            self.meta_bytes = sse("match", {"id": self.id, "data": self.meta})
        return [self.meta_bytes, *(e for key in self.hands if hands for e in self.hand_events(key))]

    def last_hand(self) -> bytes:
        """The events of its latest hand (nothing before the first hand)."""
        return b"".join(self.hand_events(next(reversed(self.hands)))) if self.hands else b""
