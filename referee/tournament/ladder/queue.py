"""The pairs drawn and not yet started, and the order they are played in (docs/ladder.md,
"Matchmaking"). Pure: the caller says who is present and who is ready.

A player is **present** if it can be reached: a local entrant always; a remote one while it is
connected (waiting in the lobby, or in a pair being played). It is **ready** if it can start a
pair now: present and in no pair being played.

- A player plays its drawn pairs **in the order they were drawn**, skipping only a pair whose
  other player is away: a pair waits for an absent player (it is *held*, never drawn again),
  and nobody else waits for it. So a player cannot choose its opponents by choosing when it is
  there: while the opponent of its first pair is present (even busy), that pair comes first.
- The next pair to play is the first, in the order of the draws, whose two players are ready
  and have no earlier pair that waits for a present player.
- A new round is drawn when no pair waits whose two players are both present: every drawn pair
  is being played, or is held for an away player. A player that is away and holds a pair is
  left out of the draw (its held pairs are enough), so an absent entrant is drawn once, then
  waits.

The globally first pair whose two players are present is always playable once they are ready,
so the order never deadlocks.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Drawn", "PairQueue"]

Is = Callable[[str], bool]


@dataclass(frozen=True, slots=True, order=True)
class Drawn:
    """A drawn pair: its round, its index in the round, its two players (seat order)."""

    round: int
    index: int
    players: tuple[str, str]


class PairQueue:
    """The drawn pairs not yet started, in the order they were drawn (see the module)."""

    def __init__(self, items: Iterable[Drawn] = ()) -> None:
        self.items: list[Drawn] = sorted(items)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, drawn: Drawn) -> None:
        """Queue a drawn pair."""
        bisect.insort(self.items, drawn)

    def remove(self, drawn: Drawn) -> None:
        """Drop a pair (started, or voided)."""
        self.items.remove(drawn)

    def of(self, name: str) -> list[Drawn]:
        """The pairs of ``name``, in order."""
        return [d for d in self.items if name in d.players]

    def holds(self, name: str) -> bool:
        """Whether a pair of ``name`` waits."""
        return any(name in d.players for d in self.items)

    def next_playable(self, present: Is, ready: Is) -> Drawn | None:
        """The pair to start now, or None (see the module)."""
        blocked: set[str] = set()
        for drawn in self.items:
            a, b = drawn.players
            if a not in blocked and b not in blocked and ready(a) and ready(b):
                return drawn
            if present(b):
                blocked.add(a)  # a waits for this pair before its later ones
            if present(a):
                blocked.add(b)
        return None

    def needs_round(self, present: Is) -> bool:
        """Whether to draw a new round: no pair waits whose two players are present."""
        return not any(present(a) and present(b) for a, b in (d.players for d in self.items))
