"""What an action outside the mask does in the single-agent environments: raise (the default,
so a learner's bug is found at once) or end the episode, for checkers that sample actions
without the mask (Gymnasium's ``check_env``).

``illegal_action="end"`` on :class:`~referee.env.GinRummySingleEnv` or
:class:`~referee.toolkit.BotOpponentEnv`: such an action ends the episode (``terminated``),
earns ``illegal_reward`` (default -1), leaves the game as it was (the observation is the last
one, with an empty mask) and is named in ``info["illegal_action"]``; the next ``reset``
starts afresh.

>>> from referee.env import GinRummySingleEnv
>>> single = GinRummySingleEnv(illegal_action="end")
>>> obs, info = single.reset(seed=2)
>>> illegal = int((obs["action_mask"] == 0).nonzero()[0][0])
>>> obs, reward, terminated, truncated, info = single.step(illegal)
>>> reward, terminated, info["illegal_action"] == illegal, int(obs["action_mask"].sum())
(-1.0, True, True, 0)
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

__all__ = ["IllegalAction", "check_choice", "ended"]

IllegalAction = Literal["raise", "end"]
"""What an action outside the mask does (module docstring)."""


def check_choice(choice: str) -> IllegalAction:
    """``choice`` if it is ``"raise"`` or ``"end"``; ValueError otherwise."""
    if choice == "raise":
        return "raise"
    if choice == "end":
        return "end"
    raise ValueError(f"illegal_action must be 'raise' or 'end', not {choice!r}")


def ended(
    last: dict[str, Any], number: int, reward: float
) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
    """The step that ends an episode on the illegal action ``number``: a fresh copy of the
    last observation with an empty mask, ``reward``, terminated."""
    obs = {**last, "observation": last["observation"].copy()}
    obs["action_mask"] = np.zeros_like(last["action_mask"])
    return obs, float(reward), True, False, {"illegal_action": number}
