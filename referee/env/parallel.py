"""The PettingZoo parallel API over the same game: every live agent gives an action each
step, and the one whose turn it is plays it.

Gin Rummy is a game of turns, so one agent acts per step: the agent to act has its legal
actions in ``action_mask``; the other's mask is all zeros and whatever it gives is ignored
(PettingZoo's ``parallel_api_test`` samples it from the empty mask, Gymnasium's ``Discrete``
answers 0). Rewards, terminations and truncations are the AEC environment's
(:class:`~referee.env.aec.GinRummyEnv`, whose options this takes), given in the step that
earns them; once the episode is over, ``agents`` is empty. ``illegal_action="end"`` (for
checkers that sample without the mask, as PettingZoo's ``parallel_seed_test`` does): an action
outside the mask ends the episode, the agent that gave it earning ``illegal_reward`` (default
-1) and the other 0, as PettingZoo's classic games end on one; the default, ``"raise"``,
raises :class:`~referee.rules.IllegalAction`.

>>> par = parallel_env()
>>> obs, infos = par.reset(seed=1)
>>> sorted(int(o["action_mask"].sum()) for o in obs.values())
[0, 2]
"""

from __future__ import annotations

from typing import Any

import gymnasium
from pettingzoo import ParallelEnv

from referee.env.aec import AGENTS, GinRummyEnv
from referee.env.illegal import check_choice

__all__ = ["GinRummyParallelEnv", "parallel_env"]

Step = tuple[
    dict[str, dict[str, Any]],
    dict[str, float],
    dict[str, bool],
    dict[str, bool],
    dict[str, dict[str, Any]],
]


class GinRummyParallelEnv(ParallelEnv):  # type: ignore[misc]  # pettingzoo has no types
    """:class:`~referee.env.aec.GinRummyEnv` through the parallel API (module docstring)."""

    metadata = {  # noqa: RUF012 (PettingZoo's convention: a class attribute)
        "name": "gin_rummy_referee_parallel_v0",
        "render_modes": ["ansi", "human"],
        "is_parallelizable": True,
    }

    def __init__(
        self, *, illegal_action: str = "raise", illegal_reward: float = -1.0, **kwargs: Any
    ) -> None:
        self.illegal_action = check_choice(illegal_action)
        self.illegal_reward = float(illegal_reward)
        self.aec = GinRummyEnv(**kwargs)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.render_mode = self.aec.render_mode

    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        """The AEC environment's (the same object every call)."""
        return self.aec.observation_space(agent)

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        """``Discrete(108)``, as in the AEC environment."""
        return self.aec.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        """A new episode (the AEC environment's ``reset``): every agent's observation."""
        self.aec.reset(seed=seed, options=options)
        self.agents = list(AGENTS)
        return {a: self.aec.observe(a) for a in AGENTS}, {a: {} for a in AGENTS}

    def step(self, actions: dict[str, Any]) -> Step:
        """The acting agent's action from ``actions`` (the others' are ignored)."""
        aec = self.aec
        if not self.agents:
            raise RuntimeError("the episode is over: call reset()")
        agent = aec.agent_selection
        if agent not in actions:
            raise ValueError(f"{agent} is to act and was given no action")
        number = int(actions[agent])
        if self.illegal_action == "end" and not aec.is_legal(number):
            return self._ended(agent, number)
        aec.step(number)
        rewards = {a: float(aec.rewards[a]) if aec._rewarded else 0.0 for a in self.agents}
        terminations = {a: bool(aec.terminations[a]) for a in self.agents}
        truncations = {a: bool(aec.truncations[a]) for a in self.agents}
        observations = {a: aec.observe(a) for a in self.agents}
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        if any(terminations.values()) or any(truncations.values()):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _ended(self, agent: str, number: int) -> Step:
        observations = {a: self.aec.observe(a) for a in self.agents}
        for obs in observations.values():
            obs["action_mask"][:] = 0
        rewards = {a: self.illegal_reward if a == agent else 0.0 for a in self.agents}
        done = {a: True for a in self.agents}
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        infos[agent]["illegal_action"] = number
        self.agents = []
        return observations, rewards, done, {a: False for a in done}, infos

    def render(self) -> str | None:
        """The table as text (the AEC environment's)."""
        return self.aec.render()

    def close(self) -> None:
        """Nothing to release."""


def parallel_env(**kwargs: Any) -> GinRummyParallelEnv:
    """The parallel environment (options: :class:`~referee.env.aec.GinRummyEnv`'s)."""
    return GinRummyParallelEnv(**kwargs)
