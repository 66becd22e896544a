"""An RLCard ``gin-rummy`` agent as a gin-referee bot:
``python -m protocol.adapters.rlcard novice|MODEL_ID|MODULE:ATTR``.

At each request the adapter builds the state RLCard's ``gin-rummy`` environment gives an agent
(``obs``: five planes of 52 cards, the hand, the top of the discard pile, the cards under it,
the cards the opponent took from the pile, the rest; ``legal_actions``: an ``OrderedDict`` of
RLCard's action ids), asks the agent (``eval_step``, as RLCard's evaluation does, else
``step``) and plays the referee's move for the id it chose. RLCard's ids: 2 draw from the stock,
3 pick up the discard, 5 gin, 6-57 discard a card, 58-109 knock with it (cards numbered ace to
king in ``S H D C``).

The legal ids are the referee's legal moves: at the first upcard, taking it is 3 and passing
2 (RLCard's game has no such round: its non-dealer starts with eleven cards); a knock that
leaves no deadwood, and big gin, are RLCard's gin (5), which is then the only legal id, as in
RLCard's game; gin plays as big gin where the rules have it, else as that knock. A knock is
played without melds: the referee arranges the cards kept for the least deadwood, as RLCard
scores them. After the opponent knocks, the referee lays off and arranges the agent's cards.

``novice`` is RLCard's ``gin-rummy-novice-rule`` (``GinRummyNoviceRuleAgent``); ``MODEL_ID`` any
model ``rlcard.models.load`` knows; ``MODULE:ATTR`` or ``FILE.py:ATTR`` an agent, an RLCard
``Model`` (its ``agents``), or a class or callable with no argument making either. The agents'
randomness (numpy's global generator, which the novice agent uses) is seeded from each match's
``seed``.

Needs ``rlcard`` (``pip install rlcard``, the project's ``rlcard`` extra).
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import sys
import types
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from protocol.adapters.loading import REFUSED, load_object, refuse, seed_int
from protocol.adapters.rules_map import RulesMismatch, check_rlcard
from protocol.bot import Bot, run_bot_main
from protocol.cards import ALL_CARDS
from protocol.schema import MatchStart, Request, WireAction

__all__ = ["DRAW", "GIN", "PICK_UP", "RLCardBot", "card_id", "main", "rlcard_state"]

DRAW = 2
PICK_UP = 3
GIN = 5
DISCARD_BASE = 6
KNOCK_BASE = 58
NOVICE = "gin-rummy-novice-rule"
SEED_ENV = "GIN_BOT_SEED"
_SUITS = "shdc"  # RLCard's suit order S H D C, as wire suits


def card_id(card: str) -> int:
    """RLCard's number of a wire card: rank (ace 0 to king 12) + 13 x suit (S H D C).

    >>> card_id("As"), card_id("Kc")
    (0, 51)
    """
    return "A23456789TJQK".index(card[0]) + 13 * _SUITS.index(card[1])


def _plane(cards: Sequence[str]) -> Any:
    plane = np.zeros(52, dtype=int)
    for card in cards:
        plane[card_id(card)] = 1
    return plane


def _is_gin(cards: Sequence[str]) -> bool:
    """Whether ten cards are all in melds (RLCard's own melding)."""
    from rlcard.games.gin_rummy.utils import melding, utils

    hand = [utils.card_from_text(c[0] + c[1].upper()) for c in cards]
    return any(
        utils.get_deadwood_count(hand, cluster) == 0
        for cluster in melding.get_meld_clusters(hand=hand)
    )


def legal_ids(request: Request) -> dict[int, WireAction]:
    """RLCard's legal action ids for ``request``, each with the referee's move it plays
    (module docstring)."""
    hand = request.view.hand
    ids: dict[int, WireAction] = {}
    for action in sorted(request.legal, key=lambda a: a.kind != "big_gin"):
        if action.kind in ("draw_stock", "pass_upcard"):
            ids[DRAW] = action
        elif action.kind == "take_discard":
            ids[PICK_UP] = action
        elif action.kind == "big_gin":
            ids[GIN] = action
        elif action.kind == "discard" and action.card is not None:
            ids[DISCARD_BASE + card_id(action.card)] = action
        elif action.kind == "knock" and action.card is not None:
            if _is_gin([c for c in hand if c != action.card]):
                ids.setdefault(GIN, action)
            else:
                ids[KNOCK_BASE + card_id(action.card)] = action
    if GIN in ids:
        return {GIN: ids[GIN]}
    return dict(sorted(ids.items()))


def rlcard_state(request: Request, ids: Sequence[int]) -> dict[str, Any]:
    """The state RLCard's environment would give the agent at ``request`` (module
    docstring), with the legal action ``ids``."""
    view = request.view
    pile = view.discard_pile
    seen = set(view.hand) | set(pile) | set(view.opponent_known)
    obs = np.array(
        [
            _plane(view.hand),
            _plane(pile[-1:]),
            _plane(pile[:-1]),
            _plane(view.opponent_known),
            _plane([c for c in ALL_CARDS if c not in seen]),
        ]
    )
    legal = OrderedDict((i, None) for i in ids)
    return {"obs": obs, "legal_actions": legal, "raw_legal_actions": list(ids), "raw_obs": obs}


def novice() -> Any:
    """RLCard's ``GinRummyNoviceRuleAgent``, imported without running ``rlcard.models``'s
    ``__init__``: that registers every RLCard model, importing ``rlcard.agents``, whose own
    ``__init__`` runs ``pip freeze`` in a subprocess (a second of start-up, and errors on
    stderr in the referee's sandbox, where pip asks git about the install). The rule agent's
    module needs none of it."""
    import rlcard

    if "rlcard.models" not in sys.modules:
        package = types.ModuleType("rlcard.models")
        package.__path__ = [str(Path(rlcard.__file__).parent / "models")]
        sys.modules["rlcard.models"] = package
    module = importlib.import_module("rlcard.models.gin_rummy_rule_models")
    return module.GinRummyNoviceRuleAgent()


def agents(spec: str) -> list[Any]:
    """The agents ``spec`` names (module docstring), one per RLCard player or one for both;
    ``ValueError`` naming what is wrong."""
    if spec in ("novice", NOVICE):
        return [novice()]
    if ":" not in spec:
        import rlcard.models

        model_id = spec
        try:
            return list(rlcard.models.load(model_id).agents)
        except (KeyError, ValueError) as err:
            raise ValueError(f"{spec!r}: not an RLCard model ({err})") from None
    found = load_object(spec)
    if isinstance(found, type) or (callable(found) and not hasattr(found, "step")):
        found = found()  # a class (of an agent or a Model) or a factory
    if hasattr(found, "agents"):
        found = list(found.agents)
    chosen = found if isinstance(found, list) else [found]
    for agent in chosen:
        if not callable(getattr(agent, "step", None)):
            raise ValueError(f"{spec!r}: {agent!r} has no step(state): not an RLCard agent")
    return chosen


class RLCardBot(Bot):
    """Plays an RLCard agent (module docstring)."""

    def __init__(self, chosen: list[Any], name: str) -> None:
        self.agents = chosen
        self.name = name
        self.seat = 0
        self.refused: SystemExit | None = None
        self._seed(os.environ.get(SEED_ENV))

    @staticmethod
    def _seed(seed: str | None) -> None:
        value = seed_int(seed)
        np.random.seed(value)
        random.seed(value)

    def on_match_start(self, msg: MatchStart) -> None:
        """Refuse rules RLCard's agents cannot follow (the bot then exits at its first
        request); reseed the agents' randomness."""
        self.refused = None
        try:
            check_rlcard(msg.rules)
        except RulesMismatch as err:
            self.refused = refuse(self.name, str(err))
            return
        self.seat = msg.seat
        if msg.seed is not None:
            self._seed(msg.seed)

    def act(self, request: Request) -> WireAction:
        """The agent's choice among RLCard's legal ids, as the referee's move."""
        if self.refused is not None:
            raise self.refused
        if request.decision == "defend":
            return WireAction.defend()
        ids = legal_ids(request)  # the agent is asked at every step, as RLCard's env.run does
        agent = self.agents[self.seat % len(self.agents)]
        state = rlcard_state(request, list(ids))
        eval_step = getattr(agent, "eval_step", None)
        chosen = eval_step(state)[0] if callable(eval_step) else agent.step(state)
        number = int(getattr(chosen, "action_id", chosen))
        if number not in ids:
            raise ValueError(
                f"the RLCard agent chose action {number}, not one of the legal {sorted(ids)}"
            )
        return ids[number]


def main(argv: Sequence[str] | None = None) -> int:
    """Play matches with the RLCard agent named first; the other options are the SDK's."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="python -m protocol.adapters.rlcard",
        description="Run an RLCard gin-rummy agent as a gin-referee bot.",
    )
    parser.add_argument("agent", help="novice, an RLCard model id, MODULE:ATTR or FILE.py:ATTR")
    parser.add_argument("--name", help="the name in the hello (default: rlcard-AGENT)")
    args, rest = parser.parse_known_args(words)
    name = args.name or f"rlcard-{args.agent.rpartition(':')[2] or args.agent}"[:64]
    try:
        import rlcard  # noqa: F401
    except ImportError as err:
        print(
            f"[{name}] RLCard is not installed ({err}): pip install rlcard"
            " (or the project's 'rlcard' extra)",
            file=sys.stderr,
        )
        return REFUSED
    try:
        chosen = agents(args.agent)
    except ValueError as err:
        print(f"[{name}] {err}", file=sys.stderr)
        return REFUSED
    return run_bot_main(RLCardBot(chosen, name), name, rest, multi_match=True)


if __name__ == "__main__":
    raise SystemExit(main())
