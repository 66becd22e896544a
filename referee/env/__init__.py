"""Gin Rummy as a learning environment: PettingZoo AEC and a single-agent Gymnasium wrapper.

Needs the ``env`` extra (``pip install gin-referee[env]``: pettingzoo, gymnasium, numpy).
The environment runs :mod:`referee.rules` in process and encodes each seat's view with
:mod:`protocol.encoding`, which :mod:`protocol.policy` uses to run the same policy as a bot.
See docs/env.md.
"""

from __future__ import annotations

from referee.env.aec import ACTIONS, AGENTS, GinRummyEnv, env, raw_env
from referee.env.single import GinRummySingleEnv, Policy, random_policy

__all__ = [
    "ACTIONS",
    "AGENTS",
    "GinRummyEnv",
    "GinRummySingleEnv",
    "Policy",
    "env",
    "random_policy",
    "raw_env",
]
