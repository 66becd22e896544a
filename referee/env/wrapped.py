"""PettingZoo's usual wrappers (order enforcing, action bounds) for this environment, with
their checks and errors and without most of their cost.

PettingZoo's wrappers reach every attribute of the environment through ``__getattr__`` (two
wrappers: two failed lookups and two forwards for each ``agent_selection``,
``terminations``... that ``last()`` and ``agent_iter()`` read), and the bounds check calls the
generic ``Discrete.contains``; together about five times the environment's own cost per step.
These subclasses (so ``isinstance`` checks still hold) make the attributes that every step
reads properties that go straight to the environment, raising the same ``AttributeError``
before ``reset()``, and check the bounds of ``Discrete(108)`` directly, with the same
assertion. Everything else is PettingZoo's own code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper

from protocol.encoding import NUM_ACTIONS

__all__ = ["Bounds", "Ordered"]


def _in_bounds(action: Any) -> bool:
    """What ``Discrete(108).contains`` answers (an int, or an integer numpy scalar or 0-d
    array, in 0..107)."""
    if isinstance(action, int):
        return 0 <= action < NUM_ACTIONS
    if isinstance(action, np.generic | np.ndarray):
        return (
            np.issubdtype(action.dtype, np.integer)
            and action.shape == ()
            and 0 <= int(action) < NUM_ACTIONS
        )
    return False


class Bounds(AssertOutOfBoundsWrapper):  # type: ignore[misc]  # pettingzoo has no types
    """PettingZoo's ``AssertOutOfBoundsWrapper``, its check made for ``Discrete(108)``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._core = env.unwrapped

    def step(self, action: Any) -> None:
        """Assert ``action`` is in the action space (None: only for an agent that is done)."""
        core = self._core
        if action is None:
            agent = core.agent_selection
            ok = core.terminations[agent] or core.truncations[agent]
        else:
            ok = _in_bounds(action)
        assert ok, "action is not in action space"
        self.env.step(action)


def _before_reset(name: str) -> property:
    def get(self: Ordered) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._core, name)

    return property(get, doc=f"The environment's ``{name}`` (an error before reset).")


class Ordered(OrderEnforcingWrapper):  # type: ignore[misc]  # pettingzoo has no types
    """PettingZoo's ``OrderEnforcingWrapper``, the attributes each step reads forwarded
    directly (module docstring)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._core = env.unwrapped

    agent_selection = _before_reset("agent_selection")
    agents = _before_reset("agents")
    terminations = _before_reset("terminations")
    truncations = _before_reset("truncations")
    rewards = _before_reset("rewards")
    infos = _before_reset("infos")

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        rewards: dict[str, float] = self._core._cumulative_rewards
        return rewards
