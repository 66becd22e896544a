"""Train a linear policy in the environment, then play it as a bot, unchanged (docs/env.md).

The policy scores each legal action with a weight vector over a few features read from the
observation (is it a knock, the deadwood it leaves, the rank it sheds, whether the discard
pile's top card would lower the deadwood...) and plays the best. The weights are learned by
the cross-entropy method, numpy only, against a random opponent in
:class:`referee.env.GinRummySingleEnv`, each candidate scored on the same deals.

    python examples/linear_agent.py train --out weights.json        # about ten seconds
    python examples/linear_agent.py play --weights weights.json     # as a bot (the referee's
                                                                    # GIN_REFEREE_* variables)
    gin-referee match "python examples/linear_agent.py play --weights weights.json" \\
        "python -m sample_bots.random_bot" --games 10
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from protocol.encoding import BIG_GIN, DISCARD, DRAW_STOCK, KNOCK, LAYOUT, TAKE_DISCARD
from protocol.policy import Policy, random_policy, run_policy
from referee.rules import CardSet, deadwood

FEATURES = ("bias_draw", "take", "knock", "big_gin", "deadwood_after", "rank_shed", "take_gain")
_HAND = LAYOUT["hand"][0]
_TOP = LAYOUT["top"][0]


def _mask(bits: npt.NDArray[np.int8]) -> int:
    return sum(1 << int(i) for i in np.flatnonzero(bits))


def features(obs: Mapping[str, Any]) -> tuple[list[int], npt.NDArray[np.float64]]:
    """The legal action numbers and one feature row per action."""
    legal = [int(n) for n in np.flatnonzero(obs["action_mask"])]
    vector = obs["observation"]
    hand = _mask(vector[_HAND : _HAND + 52])
    top = _mask(vector[_TOP : _TOP + 52])
    rows = np.zeros((len(legal), len(FEATURES)))
    now = deadwood(CardSet(hand)) if bin(hand).count("1") == 10 else 0
    for i, n in enumerate(legal):
        row = rows[i]
        if n == DRAW_STOCK:
            row[0] = 1
        elif n == TAKE_DISCARD:
            row[1] = 1
            if top:
                with_top = hand | top
                best = min(
                    deadwood(CardSet(with_top & ~(1 << c))) for c in range(52) if hand >> c & 1
                )
                row[6] = (now - best) / 10
        elif n == BIG_GIN:
            row[3] = 1
        elif n >= DISCARD:
            card = n - (KNOCK if n >= KNOCK else DISCARD)
            row[2] = n >= KNOCK
            row[4] = deadwood(CardSet(hand & ~(1 << card))) / 10
            row[5] = min(card % 13 + 1, 10) / 10
    return legal, rows


def linear_policy(weights: npt.NDArray[np.float64]) -> Policy:
    """The policy that plays the legal action with the highest score (first on ties)."""

    def choose(obs: Mapping[str, Any]) -> int:
        legal, rows = features(obs)
        return legal[int(np.argmax(rows @ weights))]

    return choose


def evaluate(policy: Policy, hands: int, seed: int) -> float:
    """Mean points per hand against a random opponent, seats alternating, deals from ``seed``."""
    from referee.env import GinRummySingleEnv

    total = 0.0
    for i in range(hands):
        single = GinRummySingleEnv(opponent=random_policy(seed + i), seat=i % 2)
        obs, _ = single.reset(seed=seed + i)
        done = False
        while not done:
            obs, reward, done, _, _ = single.step(policy(obs))
            total += float(reward)
    return total / hands


def train(
    *, generations: int, population: int, hands: int, seed: int, log: bool = True
) -> npt.NDArray[np.float64]:
    """Cross-entropy method from zero weights: keep the best fifth, refit the Gaussian."""
    rng = np.random.default_rng(seed)
    mean, std = np.zeros(len(FEATURES)), np.ones(len(FEATURES))
    elite = max(2, population // 5)
    for gen in range(generations):
        candidates = mean + std * rng.standard_normal((population, len(FEATURES)))
        deals = seed + 1000 * gen  # every candidate plays the same deals
        scores = np.array([evaluate(linear_policy(w), hands, deals) for w in candidates])
        best = candidates[np.argsort(scores)[-elite:]]
        mean, std = best.mean(axis=0), best.std(axis=0) + 0.05
        if log:
            print(f"generation {gen}: best {scores.max():+.1f}, mean {scores.mean():+.1f}")
    return mean


def main(argv: list[str] | None = None) -> int:
    """``train`` or ``play``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    learn = sub.add_parser("train", help="learn weights against a random opponent")
    learn.add_argument("--out", type=Path, default=Path("weights.json"))
    learn.add_argument("--generations", type=int, default=8)
    learn.add_argument("--population", type=int, default=16)
    learn.add_argument("--hands", type=int, default=30, help="hands per candidate")
    learn.add_argument("--seed", type=int, default=1)
    learn.add_argument("--eval-hands", type=int, default=200)
    play = sub.add_parser("play", help="play as a bot (run by gin-referee)")
    given = play.add_mutually_exclusive_group(required=True)
    given.add_argument("--weights", type=Path, help="the JSON file train wrote")
    given.add_argument(
        "--weights-inline",
        help="the weights, comma-separated (a sandboxed bot "
        "may not read the file: or give the referee --expose PATH)",
    )
    args, rest = parser.parse_known_args(argv)
    if args.command == "play":
        if args.weights is not None:
            weights = np.array(json.loads(args.weights.read_text())["weights"])
        else:
            weights = np.array([float(w) for w in args.weights_inline.split(",")])
        return run_policy(linear_policy(weights), "linear-agent", rest)
    weights = train(
        generations=args.generations, population=args.population, hands=args.hands, seed=args.seed
    )
    trained = evaluate(linear_policy(weights), args.eval_hands, 10**6)
    baseline = evaluate(random_policy(0), args.eval_hands, 10**6)
    print(f"against random, points per hand: trained {trained:+.1f}, random {baseline:+.1f}")
    args.out.write_text(json.dumps({"features": FEATURES, "weights": weights.tolist()}))
    print(f"weights written to {args.out}: {','.join(f'{w:.4f}' for w in weights)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
