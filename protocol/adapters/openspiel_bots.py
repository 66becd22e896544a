"""The OpenSpiel bots :mod:`protocol.adapters.openspiel` can run: ``simple``
(``pyspiel.make_simple_gin_rummy_bot``), ``ismcts`` (OpenSpiel's IS-MCTS,
``open_spiel.python.algorithms.ismcts``, with a small simulation budget) and a user's own,
``MODULE:FACTORY`` or ``FILE.py:FACTORY``, called as ``FACTORY(game, player_id)`` like any
OpenSpiel bot constructor.

A factory here is called once per OpenSpiel player (0: the non-dealer, 1: the dealer) in each
match, with a seed derived from the match's ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from protocol.adapters.loading import load_object

__all__ = ["ISMCTS_DEFAULTS", "FilteredISMCTSBot", "IsmctsBudget", "Factory", "factory"]

Factory = Callable[[Any, int, int], Any]
"""``(game, player_id, seed)`` to an OpenSpiel bot (an object with ``step(state)``)."""


@dataclass(frozen=True, slots=True)
class IsmctsBudget:
    """IS-MCTS's search: ``simulations`` per decision, each evaluating a new leaf by
    ``rollouts`` random playouts to the end of the hand, UCT constant ``uct_c``."""

    simulations: int = 100
    rollouts: int = 1
    uct_c: float = 2.0


ISMCTS_DEFAULTS = IsmctsBudget()
"""100 simulations of 1 random rollout each, UCT 2: about 0.2 s a decision on one core."""


def _filtered_ismcts_class() -> type:
    from open_spiel.python.algorithms import ismcts

    class _Filtered(ismcts.ISMCTSBot):  # type: ignore[misc]
        """OpenSpiel's IS-MCTS, never choosing at the root an action of ``referee_forbidden``
        (set by the adapter before each step: the moves OpenSpiel allows and the referee's rules do
        not, such as discarding the card just taken from the pile). The search below the root
        plays OpenSpiel's rules."""

        referee_forbidden: frozenset[int] = frozenset()

        def step(self, state: Any) -> int:
            legal = list(state.legal_actions())
            allowed = [a for a in legal if a not in self.referee_forbidden] or legal
            if len(allowed) == 1:
                return int(allowed[0])
            self.run_search(state)
            node = self.filter_illegals(self._root_node, allowed)
            if node.total_visits <= 0:
                return int(allowed[self._random_state.randint(len(allowed))])
            policy = [(a, p) for a, p in self.get_final_policy(state, node) if a in allowed]
            actions = [a for a, _ in policy]
            probs = np.array([p for _, p in policy], dtype=float)
            if probs.sum() <= 0:
                return int(actions[self._random_state.randint(len(actions))])
            return int(self._random_state.choice(actions, p=probs / probs.sum()))

    return _Filtered


FilteredISMCTSBot: type = _filtered_ismcts_class()
"""IS-MCTS whose root skips the adapter's ``referee_forbidden`` actions (its docstring)."""


def _simple(game: Any, player: int, seed: int) -> Any:
    return pyspiel.make_simple_gin_rummy_bot(game.get_parameters(), player)


def _ismcts(budget: IsmctsBudget) -> Factory:
    from open_spiel.python.algorithms import ismcts, mcts

    def make(game: Any, player: int, seed: int) -> Any:
        rng = np.random.RandomState((seed + player) % 2**32)
        evaluator = mcts.RandomRolloutEvaluator(budget.rollouts, rng)
        return FilteredISMCTSBot(
            game,
            evaluator,
            budget.uct_c,
            budget.simulations,
            random_state=rng,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
            # gin_rummy has no information-state string: IS-MCTS keys its nodes by the
            # observation, and two states of one observation can differ in their legal moves
            # (the first upcard before and after both players passed)
            use_observation_string=True,
            allow_inconsistent_action_sets=True,
        )

    return make


def factory(spec: str, budget: IsmctsBudget = ISMCTS_DEFAULTS) -> Factory:
    """The factory of ``simple``, ``ismcts`` or ``MODULE:FACTORY`` / ``FILE.py:FACTORY``;
    ``ValueError`` for a name that is none of them."""
    if spec == "simple":
        return _simple
    if spec == "ismcts":
        return _ismcts(budget)
    if ":" not in spec:
        raise ValueError(f"{spec!r}: expected simple, ismcts, MODULE:FACTORY or FILE.py:FACTORY")
    user = load_object(spec)
    if not callable(user):
        raise ValueError(f"{spec!r} is not callable: it must be FACTORY(game, player_id)")

    def make(game: Any, player: int, seed: int) -> Any:
        bot = user(game, player)
        if not callable(getattr(bot, "step", None)):
            raise ValueError(f"{spec}(game, {player}) returned {bot!r}, which has no step()")
        return bot

    return make
