"""One policy, both worlds: run a policy written for the learning environment as a bot.

A :data:`Policy` is a callable from an observation dict to an action number, exactly what the
environment (:mod:`referee.env`, docs/env.md) gives an agent: ``observation`` and
``action_mask`` from :mod:`protocol.encoding`, plus ``view`` (the request's
:class:`~protocol.schema.WireView`). :class:`PolicyBot` builds that dict from each
``request`` and answers with the action the policy chose, so the same function trains in
process and plays a match::

    def my_policy(obs):
        return int(np.flatnonzero(obs["action_mask"])[0])

    if __name__ == "__main__":
        raise SystemExit(run_policy(my_policy, "my-policy"))

Needs numpy (the ``env`` extra), not the referee.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from protocol.bot import Bot, run_bot_main
from protocol.encoding import encode_view, wire_action
from protocol.schema import MatchStart, Request, WireAction

__all__ = ["Policy", "PolicyBot", "RandomPolicy", "Reseedable", "random_policy", "run_policy"]

Policy = Callable[[Mapping[str, Any]], int]
"""A policy: the observation dict (``observation``, ``action_mask``, maybe ``view``) to an
action number of :mod:`protocol.encoding`."""

SEED_ENV = "GIN_BOT_SEED"


@runtime_checkable
class Reseedable(Protocol):
    """A policy with randomness of its own that can be reseeded: the environment's seeded
    ``reset(seed=...)`` calls :meth:`reseed` on such an opponent (docs/env.md, "Seeds"), and
    :class:`PolicyBot` with each match's seed."""

    def reseed(self, seed: int | str) -> None:
        """Start the policy's randomness over from ``seed``."""


class RandomPolicy:
    """A policy that picks uniformly among the legal action numbers (numpy's generator);
    :meth:`reseed` starts it over, so a seeded environment replays it exactly."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = np.random.default_rng(None if seed is None else _seed_int(seed))

    def reseed(self, seed: int | str) -> None:
        """Start over from ``seed``."""
        self.rng = np.random.default_rng(_seed_int(seed))

    def __call__(self, obs: Mapping[str, Any]) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[self.rng.integers(len(legal))])


def random_policy(seed: int | str | None = None) -> RandomPolicy:
    """A policy that picks uniformly among the legal action numbers (:class:`RandomPolicy`)."""
    return RandomPolicy(seed)


def _seed_int(seed: int | str) -> int:
    if isinstance(seed, int):
        return seed
    return int.from_bytes(seed.encode()[:32].ljust(8, b"\0"), "little")


class PolicyBot(Bot):
    """A :class:`~protocol.bot.Bot` that asks a :data:`Policy`.

    ``reseed`` (optional) is called with each ``match_start``'s seed, so a policy with its own
    randomness plays a replayed match the same way (as :mod:`sample_bots.random_bot` does).
    """

    def __init__(self, policy: Policy, *, reseed: Callable[[str], None] | None = None) -> None:
        self.policy = policy
        self.reseed = reseed
        self.target = 100

    def on_match_start(self, msg: MatchStart) -> None:
        """Note the rules' game target (the score blocks of the observation use it)."""
        target = msg.rules.get("target", 100)
        self.target = target if isinstance(target, int) and target > 0 else 100
        if self.reseed is not None and msg.seed is not None:
            self.reseed(msg.seed)

    def observation(self, request: Request) -> dict[str, Any]:
        """The observation dict the environment would give for this request."""
        obs, mask = encode_view(request.view, request.legal, target=self.target)
        return {"observation": obs, "action_mask": mask, "view": request.view}

    def act(self, request: Request) -> WireAction:
        """The policy's choice, checked against the mask."""
        obs = self.observation(request)
        number = int(self.policy(obs))
        if not 0 <= number < len(obs["action_mask"]) or not obs["action_mask"][number]:
            raise ValueError(f"the policy chose action {number}, which is not legal here")
        return wire_action(number)


def run_policy(
    policy: Policy,
    name: str,
    argv: Sequence[str] | None = None,
    *,
    reseed: Callable[[str], None] | None = None,
) -> int:
    """Play matches with ``policy`` as the bot ``name`` (:func:`protocol.bot.run_bot_main`)."""
    if reseed is not None and SEED_ENV in os.environ:
        reseed(os.environ[SEED_ENV])
    return run_bot_main(PolicyBot(policy, reseed=reseed), name, argv, multi_match=True)
