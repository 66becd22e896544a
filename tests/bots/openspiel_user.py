"""An OpenSpiel user's own bot, as such a user writes it (nothing of gin-referee in it): a
``pyspiel.Bot`` that takes the upcard when offered, knocks when it may and otherwise plays its
first legal action, and counts what it is told. ``make(game, player_id)`` is its factory:
``python -m protocol.adapters.openspiel tests/bots/openspiel_user.py:make``. It writes to
stderr the number of steps and of ``inform_action`` calls when restarted."""

from __future__ import annotations

import sys
from typing import Any

import pyspiel

KNOCK = 55


class FirstLegalBot(pyspiel.Bot):  # type: ignore[misc]
    """Knock if it may, else the first legal action."""

    def __init__(self, game: Any, player: int) -> None:
        pyspiel.Bot.__init__(self)
        self.player = player
        self.steps = 0
        self.informed = 0

    def restart(self) -> None:
        print(f"player {self.player}: {self.steps} steps, {self.informed} informed",
              file=sys.stderr, flush=True)  # fmt: skip

    def inform_action(self, state: Any, player: int, action: int) -> None:
        self.informed += 1

    def step(self, state: Any) -> int:
        self.steps += 1
        legal = state.legal_actions()
        return KNOCK if KNOCK in legal else int(legal[0])


def make(game: Any, player: int) -> FirstLegalBot:
    """The factory the adapter calls, like any OpenSpiel bot's constructor."""
    return FirstLegalBot(game, player)
