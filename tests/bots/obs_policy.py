"""A deterministic policy written against the environment's observation (docs/env.md), run as a
bot: ``python tests/bots/obs_policy.py``. It reads only the encoded vector and the mask.

Knock (or big gin) when it may, discarding the highest card it may; take the upcard or the
discard when it pairs a rank in the hand; discard the highest-ranked card it may.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from protocol.encoding import BIG_GIN, DISCARD, KNOCK, LAYOUT, PASS_UPCARD, TAKE_DISCARD
from protocol.policy import run_policy

_HAND = LAYOUT["hand"][0]
_TOP = LAYOUT["top"][0]


def _rank_key(card: int) -> tuple[int, int]:
    return card % 13, card


def policy(obs: Mapping[str, Any]) -> int:
    """The action number to play."""
    legal = np.flatnonzero(obs["action_mask"]).tolist()
    vector = obs["observation"]
    if BIG_GIN in legal:
        return BIG_GIN
    knocks = [n - KNOCK for n in legal if KNOCK <= n < BIG_GIN]
    if knocks:
        return KNOCK + max(knocks, key=_rank_key)
    discards = [n - DISCARD for n in legal if DISCARD <= n < KNOCK]
    if discards:
        return DISCARD + max(discards, key=_rank_key)
    if TAKE_DISCARD in legal:
        top = np.flatnonzero(vector[_TOP : _TOP + 52])
        hand = np.flatnonzero(vector[_HAND : _HAND + 52])
        if len(top) and any(card % 13 == top[0] % 13 for card in hand):
            return TAKE_DISCARD
    return PASS_UPCARD if PASS_UPCARD in legal else legal[0]


if __name__ == "__main__":
    sys.exit(run_policy(policy, "obs-policy"))
