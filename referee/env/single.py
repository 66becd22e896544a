"""A single-agent Gymnasium environment: one seat learns, a policy plays the other.

The opponent is any :data:`~protocol.policy.Policy` (a callable from the observation dict to
an action number), the same kind of callable :mod:`protocol.policy` runs as a bot. For a bot
process as the opponent, in real matches through the protocol, see
:class:`referee.toolkit.BotOpponentEnv` (it needs the match machinery, above this package).

>>> from protocol.policy import random_policy
>>> single = GinRummySingleEnv(opponent=random_policy(seed=1))
>>> obs, info = single.reset(seed=3)
>>> obs["observation"].shape, single.action_masks().dtype
((331,), dtype('int8'))
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium

from protocol.policy import Policy, Reseedable, random_policy
from referee.env.aec import AGENTS, GinRummyEnv
from referee.env.illegal import check_choice, ended

__all__ = ["GinRummySingleEnv", "Policy", "random_policy"]


class GinRummySingleEnv(gymnasium.Env[dict[str, Any], int]):
    """:class:`~referee.env.aec.GinRummyEnv` from one seat's side.

    ``opponent``: the other seat's policy (default: :func:`~protocol.policy.random_policy`).
    ``seat``: the learner's seat (0 or 1), or None to draw it from the seed at each reset.
    ``illegal_action``, ``illegal_reward``: what an action outside the mask does
    (:mod:`referee.env.illegal`: ``"raise"``, the default, or ``"end"`` the episode).
    The other keyword arguments go to :class:`~referee.env.aec.GinRummyEnv`. The reward of a
    step is what the learner earned from its action to its next decision (or the end).
    ``action_masks()`` gives the mask (the sb3-contrib ``MaskablePPO`` convention); it is
    also ``observation["action_mask"]``. A seeded ``reset(seed=...)`` seeds everything random
    here: the deals, the learner's seat when drawn, and an opponent that is
    :class:`~protocol.policy.Reseedable` (as :func:`~protocol.policy.random_policy` is), so
    one seed and the same actions give the same episode. An episode that the opponent ends
    before the learner's first decision (it takes the first upcard and knocks) has no step to
    give: ``reset`` deals the next one, and ``info["skipped"]`` lists the learner's rewards of
    the episodes it skipped.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}  # noqa: RUF012 (Gymnasium)

    def __init__(
        self,
        *,
        opponent: Policy | None = None,
        seat: int | None = 0,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        **kwargs: Any,
    ) -> None:
        if seat not in (None, 0, 1):
            raise ValueError(f"seat must be 0, 1 or None, not {seat!r}")
        self.illegal_action = check_choice(illegal_action)
        self.illegal_reward = float(illegal_reward)
        self.aec = GinRummyEnv(**kwargs)
        self.opponent = random_policy() if opponent is None else opponent
        self.fixed_seat = seat
        self.seat = 0 if seat is None else seat
        self.agent = AGENTS[self.seat]
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)  # type: ignore[assignment]
        self.render_mode = self.aec.render_mode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new episode; the opponent moves until the learner is to act."""
        super().reset(seed=seed)
        self.aec.reset(seed=seed, options=options)
        if self.fixed_seat is None:
            self.seat = int(self.np_random.integers(2))
            self.agent = AGENTS[self.seat]
        if seed is not None and isinstance(self.opponent, Reseedable):
            self.opponent.reseed(int(self.np_random.integers(2**63)))
        obs, reward, done, _, _ = self._play_opponent()
        skipped: list[float] = []
        while done:  # the opponent ended the episode before the learner's first decision
            skipped.append(reward)
            self.aec.reset()
            obs, reward, done, _, _ = self._play_opponent()
        return obs, {"skipped": skipped} if skipped else {}

    def step(self, action: int) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """The learner's action, then the opponent's until the learner is to act again."""
        number = int(action)
        if self.illegal_action == "end" and not self.aec.is_legal(number):
            return ended(self.aec.observe(self.agent), number, self.illegal_reward)
        self.aec.step(number)
        return self._play_opponent()

    def _play_opponent(self) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        while aec.agent_selection != self.agent and not aec.terminations[self.agent]:
            other = aec.agent_selection
            aec.step(None if aec.terminations[other] else self.opponent(aec.observe(other)))
        reward = aec._cumulative_rewards[self.agent]
        aec._cumulative_rewards[self.agent] = 0.0
        done = aec.terminations[self.agent]
        return aec.observe(self.agent), float(reward), done, False, {}

    def action_masks(self) -> Any:
        """The learner's action mask (all zeros once the episode is over)."""
        return self.aec.observe(self.agent)["action_mask"]

    def render(self) -> str | None:
        """The table as text."""
        return self.aec.render()
