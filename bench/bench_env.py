"""Learning-environment speed, side by side: the PettingZoo environment against OpenSpiel's and
RLCard's Gin Rummy, random legal self-play, in one process, interleaved rounds, medians.

Run: ``taskset -c 1 python -m bench.bench_env [--seconds 3] [--rounds 3] [--warmup 0.5]``.
Measured per round, in turn:

- ``env``: :class:`referee.env.GinRummyEnv` through the AEC API (``agent_iter``, ``last()``,
  which encodes the observation and the action mask, ``step``), the action drawn from the mask;
- ``env_wrapped``: the same through :func:`referee.env.env` (PettingZoo's order-enforcing and
  bounds wrappers);
- ``vector64``: :class:`referee.env.GinRummyVectorEnv`, 64 games against its uniform opponent,
  the learners' actions drawn from the batched masks (a step is a learner's decision);
- ``rules``: the plain rules API (``deal``, ``legal_actions``, ``apply``), no observation;
- ``openspiel``: pyspiel's ``gin_rummy``, ``observation_tensor()`` for the player to act at each
  decision (steps/s), and without it (hands/s, as ``rules``);
- ``rlcard``: ``rlcard.make("gin-rummy")``, whose ``step`` builds the next observation;
- with ``--bot CMD``, ``bot_opponent``: :class:`referee.toolkit.BotOpponentEnv` against that
  bot, the learner's seat played at random (a step is one of the learner's decisions; each
  round starts a match, and the time includes the bot's start).

OpenSpiel and RLCard are optional (``pip install open_spiel rlcard``): a missing one is
reported as skipped. A step is one player decision (chance nodes are not counted). Each loop
runs once for ``--warmup`` seconds first. Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import statistics
import time
from collections.abc import Callable

import numpy as np

from bench.bench_rules import ours_hands_per_second
from bench.common import machine
from referee.env import GinRummyEnv, GinRummyVectorEnv, env
from referee.toolkit import BotOpponentEnv

Loop = Callable[[float, int], tuple[float, float]]
"""``(seconds, seed) -> (steps/s, hands/s)``."""


def env_loop(make: Callable[[], object]) -> Loop:
    """Random legal self-play through the AEC API of the environment ``make`` builds."""

    def run(seconds: float, seed: int) -> tuple[float, float]:
        aec = make()
        rng = random.Random(seed)
        steps = hands = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            aec.reset(seed=seed + hands)  # type: ignore[attr-defined]
            for _agent in aec.agent_iter():  # type: ignore[attr-defined]
                obs, _, terminated, truncated, _ = aec.last()  # type: ignore[attr-defined]
                if terminated or truncated:
                    aec.step(None)  # type: ignore[attr-defined]
                    continue
                legal = obs["action_mask"].nonzero()[0]
                aec.step(int(legal[int(rng.random() * len(legal))]))  # type: ignore[attr-defined]
                steps += 1
            hands += 1
        elapsed = time.perf_counter() - start
        return steps / elapsed, hands / elapsed

    return run


def vector_loop(num_envs: int) -> Loop:
    """:class:`referee.env.GinRummyVectorEnv` of ``num_envs`` games against its default
    (uniform) opponent, the learners' actions drawn from the batched masks: the learners'
    steps/s (each of which also plays the opponent's decisions until the learner is to act
    again) and episodes (hands)/s."""

    def run(seconds: float, seed: int) -> tuple[float, float]:
        vec = GinRummyVectorEnv(num_envs, seat=None)
        obs, _ = vec.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps = hands = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            mask = obs["action_mask"]
            obs, _, ended, cut, _ = vec.step(np.argmax(mask * rng.random(mask.shape), axis=1))
            steps += num_envs
            hands += int(ended.sum() + cut.sum())
        elapsed = time.perf_counter() - start
        return steps / elapsed, hands / elapsed

    return run


def rules_loop(seconds: float, seed: int) -> tuple[float, float]:
    """Random legal hands on the plain rules API (bench_rules' loop): steps/s and hands/s."""
    hands_per_second, decisions_per_hand = ours_hands_per_second(seconds, seed)
    return hands_per_second * decisions_per_hand, hands_per_second


def openspiel_loop(observe: bool) -> Loop | str:
    """pyspiel's gin_rummy (``observe``: the acting player's observation tensor each step), or
    why it cannot run."""
    try:
        import pyspiel
    except ImportError as err:
        return f"skipped: OpenSpiel is not installed ({err}; pip install open_spiel)"
    game = pyspiel.load_game("gin_rummy")

    def run(seconds: float, seed: int) -> tuple[float, float]:
        rng = random.Random(seed)
        steps = hands = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
                    continue
                if observe:
                    state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])
                steps += 1
            hands += 1
        elapsed = time.perf_counter() - start
        return steps / elapsed, hands / elapsed

    return run


def rlcard_loop() -> Loop | str:
    """RLCard's gin-rummy environment, or why it cannot run."""
    try:
        import rlcard
    except ImportError as err:
        return f"skipped: RLCard is not installed ({err}; pip install rlcard)"

    def run(seconds: float, seed: int) -> tuple[float, float]:
        game = rlcard.make("gin-rummy", config={"seed": seed})
        rng = random.Random(seed)
        steps = hands = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            state, _ = game.reset()
            while not game.is_over():
                legal = list(state["legal_actions"])
                state, _ = game.step(legal[int(rng.random() * len(legal))])
                steps += 1
            hands += 1
        elapsed = time.perf_counter() - start
        return steps / elapsed, hands / elapsed

    return run


def spread(values: list[float], digits: int = 0) -> dict[str, float]:
    """Median, minimum and maximum of the rounds' values."""
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


RATIOS = {
    "env_steps_vs_openspiel": ("env", "openspiel_observed", 0),
    "env_wrapped_steps_vs_openspiel": ("env_wrapped", "openspiel_observed", 0),
    "rules_hands_vs_openspiel": ("rules", "openspiel_plain", 1),
    "env_wrapped_steps_vs_env": ("env_wrapped", "env", 0),
    "vector_steps_vs_openspiel": ("vector64", "openspiel_observed", 0),
    "vector_hands_vs_openspiel": ("vector64", "openspiel_observed", 1),
    "env_steps_vs_rlcard": ("env", "rlcard", 0),
    "env_wrapped_steps_vs_rlcard": ("env_wrapped", "rlcard", 0),
}
"""Each ratio: (numerator loop, denominator loop, 0 for steps/s or 1 for hands/s)."""


def bot_loop(command: str) -> Loop:
    """Random legal play of the learner's seat of :class:`referee.toolkit.BotOpponentEnv`
    against the bot ``command`` (a step is one of the learner's decisions; one match per
    round, its start included)."""

    def run(seconds: float, seed: int) -> tuple[float, float]:
        single = BotOpponentEnv(shlex.split(command))
        rng = random.Random(seed)
        steps = hands = 0
        start = time.perf_counter()
        deadline = start + seconds
        try:
            obs, _ = single.reset(seed=seed)
            while time.perf_counter() < deadline:
                legal = obs["action_mask"].nonzero()[0]
                obs, _, terminated, truncated, _ = single.step(
                    int(legal[int(rng.random() * len(legal))])
                )
                steps += 1
                if terminated or truncated:
                    hands += 1
                    obs, _ = single.reset()
        finally:
            single.close()
        elapsed = time.perf_counter() - start
        return steps / elapsed, hands / elapsed

    return run


def main(argv: list[str] | None = None) -> None:
    """Run the interleaved rounds after a warm-up and print a JSON summary: each loop's
    median, min and max over the rounds, and each ratio computed round by round (the loops of
    one round ran back to back, so they met about the same load) with its median, min, max."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per loop per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds per loop, not counted")
    parser.add_argument("--bot", help="also a bot command as BotOpponentEnv's opponent")
    args = parser.parse_args(argv)
    loops: dict[str, Loop | str] = {
        "env": env_loop(GinRummyEnv),
        "env_wrapped": env_loop(env),
        "vector64": vector_loop(64),
        "rules": rules_loop,
        "openspiel_observed": openspiel_loop(observe=True),
        "openspiel_plain": openspiel_loop(observe=False),
        "rlcard": rlcard_loop(),
    }
    if args.bot:
        loops["bot_opponent"] = bot_loop(args.bot)
    for loop in loops.values():
        if not isinstance(loop, str) and args.warmup > 0:
            loop(args.warmup, 1)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in loops}
    for round_no in range(args.rounds):
        for name, loop in loops.items():
            if not isinstance(loop, str):
                runs[name].append(loop(args.seconds, 1000 * round_no + 7))
    result: dict[str, object] = {"machine": machine(), "cpus": os.cpu_count(), **vars(args)}
    for name, loop in loops.items():
        if isinstance(loop, str):
            result[name] = loop
            continue
        result[name] = {
            "steps_per_s": spread([s for s, _ in runs[name]]),
            "hands_per_s": spread([h for _, h in runs[name]], 1),
        }
    ratios = {}
    for label, (top, bottom, which) in RATIOS.items():
        if runs[top] and runs[bottom]:
            per_round = [a[which] / b[which] for a, b in zip(runs[top], runs[bottom], strict=True)]
            ratios[label] = spread(per_round, 2)
    result["ratios"] = ratios
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
