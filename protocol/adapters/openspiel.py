"""An OpenSpiel ``gin_rummy`` bot as a gin-referee bot:
``python -m protocol.adapters.openspiel simple|ismcts|MODULE:FACTORY``.

At ``match_start`` the match's rules become the parameters of OpenSpiel's game
(:func:`~protocol.adapters.rules_map.openspiel_params`), or the bot refuses them: a line on
stderr naming the rule, exit status 2. At each request the hand so far is replayed into an
OpenSpiel state (:mod:`protocol.adapters.openspiel_state`: the bot's own cards, the upcard,
the opponent's discards and pickups; cards it cannot see are drawn from the unseen ones), the
bot's ``step`` is asked, and its action goes back as the referee's: OpenSpiel's knock, its
discard and the melds it lays become one ``knock`` with those melds declared. After the
opponent knocks, the referee lays off and arranges the bot's cards for the least deadwood.

Where OpenSpiel allows a move the referee's rules do not (discarding the card just taken from
the pile, as a plain discard or a knock's), the move is replaced by the legal one leaving the
least deadwood, and a line on stderr says so; IS-MCTS is kept from such moves at its root. A
hand that OpenSpiel's game would have ended (its 50th draw of an upcard) is played on that way
too. docs/existing-bots.md has the commands; bench/bench_adapters.py measures the bots.

    python -m protocol.adapters.openspiel ismcts --simulations 100 [--endpoint ... --token ...]

Needs ``pyspiel`` (``pip install open_spiel``, the project's ``openspiel`` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from protocol.adapters import openspiel_state as st
from protocol.adapters.hand_log import HandLog
from protocol.adapters.loading import REFUSED, hand_order, refuse, seed_int
from protocol.adapters.rules_map import RulesMismatch, openspiel_params
from protocol.bot import Bot, run_bot_main
from protocol.schema import Event, HandStart, MatchStart, Request, WireAction

__all__ = ["OpenSpielBot", "main"]

SEED_ENV = "GIN_BOT_SEED"


class OpenSpielBot(Bot):
    """Plays the bots that ``factory`` makes (:mod:`protocol.adapters.openspiel_bots`)."""

    def __init__(self, factory: Any, name: str) -> None:
        import pyspiel

        self.pyspiel = pyspiel
        self.cards = st.Cards()
        self.factory = factory
        self.name = name
        self.game: Any = None
        self.initial: Any = None
        self.seat = 0
        self.seed = seed_int(os.environ.get(SEED_ENV))
        self.bots: dict[int, Any] = {}
        self.bot: Any = None
        self.player = 0
        self.log = HandLog((), "As")
        self.order: list[str] = []
        self.informed = 0
        self.diverged = False
        self.refused: SystemExit | None = None

    def say(self, text: str) -> None:
        """A line on stderr."""
        print(f"[{self.name}] {text}", file=sys.stderr, flush=True)

    def on_match_start(self, msg: MatchStart) -> None:
        """Map the rules to OpenSpiel's game, or refuse them (the bot then exits at its first
        request: :func:`~protocol.adapters.loading.refuse`); new bots for the match."""
        self.refused = None
        try:
            params = openspiel_params(msg.rules)
        except RulesMismatch as err:
            self.refused = refuse(self.name, str(err))
            return
        self.game = self.pyspiel.load_game("gin_rummy", params)
        self.initial = self.game.new_initial_state()
        self.seat = msg.seat
        if msg.seed is not None:
            self.seed = seed_int(msg.seed)
        self.bots = {}

    def on_hand_start(self, msg: HandStart) -> None:
        """A new log; the bot of this seat's OpenSpiel player (0 for the non-dealer)."""
        if self.refused is not None:
            return
        if self.game is None:  # no match_start seen: the referee's defaults
            self.game = self.pyspiel.load_game("gin_rummy")
            self.initial = self.game.new_initial_state()
        self.log = HandLog(msg.hand_cards, msg.upcard)
        self.player = 1 if msg.dealer == self.seat else 0
        self.order = hand_order(self.seed, msg.game, msg.hand)
        if self.player not in self.bots:
            self.bots[self.player] = self.factory(self.game, self.player, self.seed)
        self.bot = self.bots[self.player]
        restart = getattr(self.bot, "restart", None)
        if callable(restart):
            restart()
        self.informed = 0
        self.diverged = False

    def on_event(self, msg: Event) -> None:
        """Log the opponent's move."""
        if msg.seat != self.seat:
            self.log.opponent(msg.action.kind, msg.action.card)

    def act(self, request: Request) -> WireAction:
        """The bot's move, through OpenSpiel's state (module docstring)."""
        if self.refused is not None:
            raise self.refused
        if request.decision == "defend":
            return WireAction.defend()
        view = request.view
        self.log.sync(view.hand, view.discard_pile, view.opponent_known)
        action = self._choose(request)
        self.log.mine(action.kind, action.card)
        return action

    def _inform(self, index: int, state: Any, player: int, action: int) -> None:
        if index >= self.informed:
            self.informed = index + 1
            inform = getattr(self.bot, "inform_action", None)
            if callable(inform):
                inform(state, player, action)

    def _choose(self, request: Request) -> WireAction:
        if not self.diverged:
            try:
                state = st.replay(
                    self.initial, self.cards, self.log, self.player, self.order, self._inform
                )
            except st.Diverged as err:
                self.say(f"{err}: the rest of this hand is played greedily")
                self.diverged = True
        if self.diverged:
            return st.fallback(self.cards, request, knock=True)
        chosen = self._step(state, request)
        if request.decision != "discard":
            kind = {st.DRAW_UPCARD: "take_discard", st.DRAW_STOCK: "draw_stock"}.get(chosen)
            kind = "pass_upcard" if chosen == st.PASS else kind
            for action in request.legal:
                if action.kind == kind:
                    return action
            return self._replaced(request, state, chosen, knock=False)
        if chosen == st.KNOCK:
            return self._knock(state, request)
        discard = WireAction.discard(self.cards.text(chosen))
        if discard in request.legal:
            return discard
        return self._replaced(request, state, chosen, knock=False)

    def _knock(self, state: Any, request: Request) -> WireAction:
        """OpenSpiel's knock, then the bot's discard and melds, as one referee knock."""
        state.apply_action(st.KNOCK)
        discard = self._step(state, request)
        state.apply_action(discard)
        melds: list[tuple[str, ...]] = []
        while True:
            chosen = self._step(state, request)
            if chosen == st.PASS:
                break
            melds.append(self.cards.meld(chosen))
            state.apply_action(chosen)
        card = self.cards.text(discard)
        if WireAction.knock(card) not in request.legal:
            return self._replaced(request, state, discard, knock=True)
        return WireAction.knock(card, tuple(melds) or None)

    def _allowed(self, action: int, phase: Any, request: Request) -> bool:
        """Whether OpenSpiel's ``action`` in ``phase`` is one the referee's rules allow."""
        phases = self.cards.phases
        legal = request.legal
        if phase == phases.DISCARD:
            if action == st.KNOCK:
                return any(a.kind == "knock" for a in legal)
            return WireAction.discard(self.cards.text(action)) in legal
        if phase == phases.KNOCK and action < st.DRAW_UPCARD:
            return WireAction.knock(self.cards.text(action)) in legal
        return True

    def _step(self, state: Any, request: Request) -> int:
        """The bot's action at ``state``, checked against OpenSpiel's legal actions."""
        legal = list(state.legal_actions())
        if hasattr(self.bot, "referee_forbidden"):
            phase = state.current_phase()
            self.bot.referee_forbidden = frozenset(
                a for a in legal if not self._allowed(a, phase, request)
            )
        chosen = int(self.bot.step(state))
        if chosen not in legal:
            raise RuntimeError(
                f"the OpenSpiel bot chose action {chosen}, not legal in its state "
                f"(legal: {legal}):\n{state}"
            )
        return chosen

    def _replaced(self, request: Request, state: Any, chosen: int, *, knock: bool) -> WireAction:
        action = st.fallback(self.cards, request, knock=knock)
        what = state.action_to_string(self.player, chosen).split("Action: ")[-1]
        self.say(
            f"the bot chose {what!r}{' for its knock' if knock else ''}, which the rules "
            f"forbid here (taken card: {request.view.taken_card}): playing {action} instead"
        )
        return action


def main(argv: Sequence[str] | None = None) -> int:
    """Play matches with the OpenSpiel bot named first; the other options are the SDK's."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="python -m protocol.adapters.openspiel",
        description="Run an OpenSpiel gin_rummy bot as a gin-referee bot.",
    )
    parser.add_argument("bot", help="simple, ismcts, MODULE:FACTORY or FILE.py:FACTORY")
    parser.add_argument("--name", help="the name in the hello (default: openspiel-BOT)")
    parser.add_argument("--simulations", type=int, default=100, help="IS-MCTS: per decision")
    parser.add_argument("--rollouts", type=int, default=1, help="IS-MCTS: random playouts a leaf")
    parser.add_argument("--uct-c", type=float, default=2.0, help="IS-MCTS: UCT constant")
    args, rest = parser.parse_known_args(words)
    name = args.name or f"openspiel-{args.bot.rpartition(':')[2] or args.bot}"[:64]
    try:
        import pyspiel  # noqa: F401
    except ImportError as err:
        print(
            f"[{name}] OpenSpiel is not installed ({err}): pip install open_spiel"
            " (or the project's 'openspiel' extra)",
            file=sys.stderr,
        )
        return REFUSED
    from protocol.adapters.openspiel_bots import IsmctsBudget, factory

    if min(args.simulations, args.rollouts) < 1:
        print(f"[{name}] --simulations and --rollouts must be at least 1", file=sys.stderr)
        return REFUSED
    try:
        make = factory(args.bot, IsmctsBudget(args.simulations, args.rollouts, args.uct_c))
    except ValueError as err:
        print(f"[{name}] {err}", file=sys.stderr)
        return REFUSED
    return run_bot_main(OpenSpielBot(make, name), name, rest, multi_match=True)


if __name__ == "__main__":
    raise SystemExit(main())
