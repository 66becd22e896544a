"""An RLCard user's own agent, as such a user writes it (nothing of gin-referee in it): it
draws from the stock (RLCard's action 2) when it may, else plays the highest legal action id
(gin, then knocks, then discards), and has RLCard's ``step``, ``eval_step`` and ``use_raw``:
``python -m protocol.adapters.rlcard tests/bots/rlcard_user.py:HighestAgent``."""

from __future__ import annotations

from typing import Any

DRAW_CARD = 2


class HighestAgent:
    """Draw, else the highest legal action id."""

    use_raw = False

    def step(self, state: dict[str, Any]) -> int:
        legal = state["legal_actions"]
        return DRAW_CARD if DRAW_CARD in legal else max(legal)

    def eval_step(self, state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self.step(state), {}
