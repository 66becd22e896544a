"""What a spectator may see of a hand still in play: the public projection of its events.

:class:`PublicHand` is built from the match's ``deal`` and ``action`` events alone (see
:data:`referee.match.Observer`) and never from the deck: it holds only what both seats see, so
whatever it sends cannot name a hidden card. Both hands are ``?`` cards (their sizes are
public); the discard pile is public (the first upcard, every discard, the top card a player
takes); a card drawn from the stock and the card a knocker puts face down are not, and neither
are a knocker's declared melds. Its steps have the form of
:func:`referee.view.replay_data.hand_data`, so the replay page's script draws them.
"""

from __future__ import annotations

from typing import Any

from referee.rules import Card
from referee.view.replay_data import Clocks, hand_id, scores_after

__all__ = ["PUBLIC_RESULT", "PublicHand", "packed", "public_result"]

PUBLIC_RESULT = ("termination", "winner", "points", "knocker", "deadwood")
"""The fields of a hand's result shown before its cards are (both seats are told them)."""


def public_result(result: dict[str, Any]) -> dict[str, Any]:
    """A record's hand result without its melds and layoffs (they name cards)."""
    return {key: result.get(key) for key in PUBLIC_RESULT}


def packed(previous: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    """``step`` without its ``pile`` when the page can derive it from ``previous``'s and the
    step's action (a discard adds its card, a take removes the top one; else unchanged): the
    pile is most of a step's bytes."""
    pile, action = list(previous["pile"]), step.get("action") or {}
    verb = str(action.get("text", "")).partition(" ")[0]
    if verb == "discard":
        pile.append(action.get("card"))
    elif verb == "take_discard" and pile:
        pile.pop()
    if pile != step["pile"]:
        return step
    return {key: value for key, value in step.items() if key != "pile"}


class PublicHand:
    """One hand as the spectators see it while its cards are withheld."""

    def __init__(self, deal: dict[str, Any], clocks: Clocks) -> None:
        self.game, self.hand = int(deal["game"]), int(deal["hand"])
        self.id = hand_id(self.game, self.hand)
        self.clocks = clocks
        """The game's clocks (time used and bank left per seat), charged as decisions come."""
        upcard = str(Card.parse(str(deal["upcard"])))
        stock = int(deal["stock"])
        size = (52 - stock - 1) // 2
        self.sizes = [size, size]
        self.pile = [upcard]
        self.scores_before = [int(deal["scores"][0]), int(deal["scores"][1])]
        self.data: dict[str, Any] = {
            "id": self.id,
            "game": self.game,
            "hand": self.hand,
            "dealer": int(deal["dealer"]),
            "upcard": upcard,
            "knock_limit": deal["knock_limit"],
            "multiplier": deal["multiplier"],
            "scores_before": list(self.scores_before),
            "steps": [self._step(deal, None)],
            "over": False,
            "used_ms": [round(ms, 3) for ms in clocks.used_ms],
            "masked": True,
        }

    def _step(self, state: dict[str, Any], action: dict[str, Any] | None) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "pile": list(self.pile),
            "stock": int(state["stock"]),
            "phase": str(state["phase"]),
            "to_act": state["to_act"],
            "action": action,
        }

    def play(self, event: dict[str, Any]) -> dict[str, Any]:
        """Account one ``action`` event; returns the new step (also appended to the data)."""
        seat, text, ms = int(event["seat"]), str(event["action"]), float(event["ms"])
        verb, _, rest = text.partition(" ")
        card: str | None = None
        if verb == "take_discard":
            card = self.pile.pop()
            self.sizes[seat] += 1
        elif verb == "draw_stock":
            self.sizes[seat] += 1
        elif verb == "discard":
            card = str(Card.parse(rest))
            self.pile.append(card)
            self.sizes[seat] -= 1
        elif verb == "knock":
            text = "knock"  # the card goes face down; the melds name the knocker's cards
            self.sizes[seat] -= 1
        elif verb not in ("pass_upcard", "big_gin"):
            raise ValueError(f"unknown action {text!r}")
        self.clocks.charge(seat, ms)
        action: dict[str, Any] = {"seat": seat, "text": text, "ms": round(ms, 3), "card": card}
        action["used_ms"] = round(self.clocks.used_ms[seat], 3)
        if self.clocks.bank_ms is not None:
            action["bank_ms"] = round(self.clocks.bank_ms[seat], 3)
        step = self._step(event, action)
        self.data["steps"].append(step)
        self.data["used_ms"] = [round(used, 3) for used in self.clocks.used_ms]
        return step

    def end(self, result: dict[str, Any]) -> dict[str, Any]:
        """The hand is over (its record line came): the data with the public result."""
        steps = self.data["steps"]
        steps[-1] = {**steps[-1], "to_act": None}
        self.data.update(
            over=True,
            result=public_result(result),
            scores_after=scores_after(self.scores_before, result),
        )
        return self.data
