"""N games in one process, batched: a Gymnasium ``VectorEnv`` of the single-agent game.

Each of ``num_envs`` games has a learner's seat and an opponent (one
:data:`~protocol.policy.Policy` for all; by default, uniform among the legal actions), as
:class:`~referee.env.GinRummySingleEnv` has. :meth:`GinRummyVectorEnv.step` takes one action
number per game and returns numpy arrays: ``obs["observation"]`` of shape ``(N, 331)`` and
``obs["action_mask"]`` of ``(N, 108)`` (views of one buffer that each step rewrites in place:
copy what you keep), rewards, terminations and truncations of shape ``(N,)``. A game whose
episode ends is reset in the same step (Gymnasium's ``AutoresetMode.SAME_STEP``): its row is
the next episode's first observation and ``infos["final_obs"]`` holds the last one. An
episode that the opponent ends before the learner's first decision is dealt again, its reward
listed in ``infos["skipped"]`` (as :class:`~referee.env.GinRummySingleEnv` does).

>>> vec = GinRummyVectorEnv(4)
>>> obs, infos = vec.reset(seed=7)
>>> obs["observation"].shape, obs["action_mask"].shape
((4, 331), (4, 108))
>>> import numpy as np
>>> first = [int(np.flatnonzero(row)[0]) for row in obs["action_mask"]]
>>> obs, rewards, terminations, truncations, infos = vec.step(np.array(first))
>>> rewards.shape, terminations.dtype
((4,), dtype('bool'))
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from protocol.encoding import OBS_SIZE
from protocol.policy import Policy, Reseedable
from referee.env.aec import AGENTS, GinRummyEnv
from referee.env.observe import SIZE, fill, observation

__all__ = ["GinRummyVectorEnv"]

Array = npt.NDArray[Any]
Batch = tuple[dict[str, Any], Array, Array, Array, dict[str, Any]]
"""What :meth:`GinRummyVectorEnv.step` returns."""


class GinRummyVectorEnv(VectorEnv[dict[str, Any], npt.NDArray[np.int64], npt.NDArray[Any]]):
    """``num_envs`` games of :class:`~referee.env.GinRummySingleEnv` (module docstring).

    ``seat``: the learner's seat in every game (0 or 1), or None for each game's reset to draw
    it. Other keyword arguments go to :class:`~referee.env.aec.GinRummyEnv` (``rules``,
    ``episode``, ``reward``, ``max_hands``; not ``view``, which is no array).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012 (Gymnasium's)

    def __init__(
        self,
        num_envs: int = 64,
        *,
        opponent: Policy | None = None,
        seat: int | None = 0,
        **kwargs: Any,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs!r}")
        if seat not in (None, 0, 1):
            raise ValueError(f"seat must be 0, 1 or None, not {seat!r}")
        if kwargs.get("view"):
            raise ValueError("the vector environment has no view (it is not an array)")
        self.num_envs = num_envs
        self.games = [GinRummyEnv(**kwargs) for _ in range(num_envs)]
        self.opponent = opponent
        """The opponents' policy; None: uniform among the legal actions, drawn straight from
        the rules' legal set (no observation is made for it: that is the default's speed)."""
        self._random = random.Random()
        self.fixed_seat = seat
        self.seats = [0 if seat is None else seat] * num_envs
        self.single_observation_space = self.games[0].observation_space(AGENTS[0])
        self.single_action_space = self.games[0].action_space(AGENTS[0])
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._buffer = np.zeros((num_envs, SIZE), np.int8)
        self._obs = {
            "observation": self._buffer[:, :OBS_SIZE],
            "action_mask": self._buffer[:, OBS_SIZE:],
        }
        self._rewards = np.zeros(num_envs, np.float64)
        self._terminations = np.zeros(num_envs, np.bool_)
        self._truncations = np.zeros(num_envs, np.bool_)
        self._rng = np.random.default_rng()

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every game anew; ``seed`` (one int: game ``i`` gets ``seed + i``; or one per game)
        seeds the deals, the drawn seats and a :class:`~protocol.policy.Reseedable`
        opponent."""
        seeds: list[int | None]
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
            if seed is not None:
                self._rng = np.random.default_rng(seed)
                self._random.seed(seed)
                if isinstance(self.opponent, Reseedable):
                    self.opponent.reseed(seed)
        else:
            if len(seed) != self.num_envs:
                raise ValueError(f"{len(seed)} seeds for {self.num_envs} games")
            seeds = list(seed)
        infos: dict[str, Any] = {}
        for i, game_seed in enumerate(seeds):
            skipped = self._reset_game(i, game_seed, options)
            if skipped:
                infos = self._add_info(infos, {"skipped": skipped}, i)
        return self._obs, infos

    def step(self, actions: npt.NDArray[np.int64]) -> Batch:
        """One action number per game (see the module docstring for what comes back)."""
        numbers = np.asarray(actions).reshape(-1)
        if len(numbers) != self.num_envs:
            raise ValueError(f"{len(numbers)} actions for {self.num_envs} games")
        infos: dict[str, Any] = {}
        obs = self._obs
        rewards, terminations, truncations = self._rewards, self._terminations, self._truncations
        for i, number in enumerate(numbers.tolist()):
            game = self.games[i]
            learner = AGENTS[self.seats[i]]
            game.step(number)
            self._play_opponent(game, learner)
            rewards[i] = game._cumulative_rewards[learner]
            game._cumulative_rewards[learner] = 0.0
            ended = terminations[i] = game.terminations[learner]
            cut = truncations[i] = game.truncations[learner]
            self._write(i)
            if ended or cut:
                final: dict[str, Any] = {"final_obs": {k: v[i].copy() for k, v in obs.items()}}
                skipped = self._reset_game(i, None, None)
                if skipped:
                    final["skipped"] = skipped
                infos = self._add_info(infos, final, i)
        return self._obs, rewards.copy(), terminations.copy(), truncations.copy(), infos

    def _reset_game(self, i: int, seed: int | None, options: dict[str, Any] | None) -> list[float]:
        """A new episode for game ``i``, dealt again while the opponent ends one before the
        learner's first decision; the learner's rewards of those it skipped."""
        game = self.games[i]
        game.reset(seed=seed, options=options)
        skipped = []
        while True:
            if self.fixed_seat is None:
                self.seats[i] = int(self._rng.integers(2))
            learner = AGENTS[self.seats[i]]
            self._play_opponent(game, learner)
            if not (game.terminations[learner] or game.truncations[learner]):
                break
            skipped.append(float(game._cumulative_rewards[learner]))
            game.reset()
        self._write(i)
        return skipped

    def _play_opponent(self, game: GinRummyEnv, learner: str) -> None:
        opponent = self.opponent
        draw = self._random.randrange
        while game.agent_selection != learner and not game.terminations[learner]:
            if game.truncations[learner]:
                return
            if opponent is None:
                legal = game._legal_mask
                for _ in range(draw(legal.bit_count())):
                    legal &= legal - 1  # drop the lowest legal action
                game.step((legal & -legal).bit_length() - 1)
            else:
                game.step(opponent(game.observe(game.agent_selection)))

    def _write(self, i: int) -> None:
        """Game ``i``'s learner observation into its row (the compiled writer writes in
        place; the Python one is copied)."""
        game = self.games[i]
        seat = self.seats[i]
        args = (game.state, seat, game._stock, game._fixed[seat], game._legal_mask)
        if fill is not None:
            fill(self._buffer[i], *args)
        else:
            obs, mask = observation(*args)
            self._buffer[i, :OBS_SIZE] = obs
            self._buffer[i, OBS_SIZE:] = mask

    def action_masks(self) -> npt.NDArray[np.int8]:
        """Every game's mask, ``(N, 108)`` (sb3-contrib's convention)."""
        mask: npt.NDArray[np.int8] = self._obs["action_mask"]
        return mask

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""
