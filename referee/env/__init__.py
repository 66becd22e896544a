"""Gin Rummy as a learning environment: PettingZoo AEC and a single-agent Gymnasium wrapper.

Needs the ``env`` extra (``pip install gin-referee[env]``: pettingzoo, gymnasium, numpy).
The environment runs :mod:`referee.rules` in process and encodes each seat's view with
:mod:`protocol.encoding`, which :mod:`protocol.policy` uses to run the same policy as a bot.
See docs/env.md.
"""

from __future__ import annotations

import gymnasium

from referee.env.aec import ACTIONS, AGENTS, GinRummyEnv, env, raw_env
from referee.env.parallel import GinRummyParallelEnv, parallel_env
from referee.env.single import GinRummySingleEnv, Policy, random_policy
from referee.env.vector import GinRummyVectorEnv

SINGLE_ID = "gin_referee/GinRummy-v0"
"""The single-agent environment's Gymnasium id: ``gymnasium.make(SINGLE_ID, **options)``."""

if SINGLE_ID not in gymnasium.registry:
    gymnasium.register(SINGLE_ID, entry_point="referee.env.single:GinRummySingleEnv")

__all__ = [
    "ACTIONS",
    "AGENTS",
    "GinRummyEnv",
    "GinRummyParallelEnv",
    "GinRummySingleEnv",
    "GinRummyVectorEnv",
    "SINGLE_ID",
    "Policy",
    "env",
    "parallel_env",
    "random_policy",
    "raw_env",
]
