"""A test bot that rebuilds the discard pile from its own moves and the opponent's events.

At every request it checks its pile against the view and the opponent's known cards against
``opponent_known``; a mismatch (an event lost, duplicated or out of order) exits with status
1 and a message on stderr, which the referee records as a crash. It plays randomly.
``python tracker.py [inline|separate]`` asks for events inside requests or as messages.
"""

from __future__ import annotations

import os
import random
import sys

from protocol.bot import Bot, run_bot
from protocol.schema import Event, HandStart, Request, WireAction


class EventMismatch(Exception):
    """The events received do not add up to the view."""


class Tracker(Bot):
    """Random play, strict bookkeeping of the public cards."""

    def __init__(self) -> None:
        self.rng = random.Random(7)
        self.pile: list[str] = []
        self.opponent_known: set[str] = set()
        self.events = 0

    def on_hand_start(self, msg: HandStart) -> None:
        """A new deal: the pile holds the upcard only."""
        self.pile = [msg.upcard]
        self.opponent_known = set()

    def _apply(self, action: WireAction, mine: bool) -> None:
        if action.kind == "take_discard":
            taken = self.pile.pop()
            if not mine:
                if action.card != taken:
                    raise EventMismatch(f"opponent took {action.card}, the pile top was {taken}")
                self.opponent_known.add(taken)
        elif action.kind == "discard" and action.card is not None:
            self.pile.append(action.card)
            if not mine:
                self.opponent_known.discard(action.card)

    def on_event(self, msg: Event) -> None:
        """The opponent's move."""
        self.events += 1
        if self.events == 1:
            print("tracker: events are flowing", file=sys.stderr, flush=True)
        self._apply(msg.action, mine=False)

    def act(self, request: Request) -> WireAction:
        """Check the bookkeeping, then play a random legal action."""
        view = request.view
        if tuple(self.pile) != view.discard_pile:
            raise EventMismatch(f"pile {self.pile} but the view says {list(view.discard_pile)}")
        if self.opponent_known != set(view.opponent_known):
            raise EventMismatch(f"known {self.opponent_known} vs {set(view.opponent_known)}")
        action = self.rng.choice(request.legal)
        self._apply(action, mine=True)
        return action


def main() -> int:
    """Play one match; ``inline`` (default) or ``separate`` events."""
    mode = sys.argv[1] if len(sys.argv) > 1 else "inline"
    scheme = os.environ.get("GIN_REFEREE_ENDPOINT", "").partition("://")[0]
    print(f"tracker: connecting over {scheme}", file=sys.stderr, flush=True)
    bot = Tracker()
    return run_bot(bot, name=f"tracker-{mode}", inline_events=mode == "inline")


if __name__ == "__main__":
    sys.exit(main())
