"""Learning-environment speed, side by side: the PettingZoo environment against OpenSpiel's and
RLCard's Gin Rummy, random legal self-play, in one process, interleaved rounds, medians.

Run: ``python -m bench.bench_env [--seconds 3] [--rounds 3]``. Measured per round, in turn:

- ``env``: :class:`referee.env.GinRummyEnv` through the AEC API (``agent_iter``, ``last()``,
  which encodes the observation and the action mask, ``step``), the action drawn from the mask;
- ``env_wrapped``: the same through :func:`referee.env.env` (PettingZoo's order-enforcing and
  bounds wrappers);
- ``rules``: the plain rules API (``deal``, ``legal_actions``, ``apply``), no observation;
- ``openspiel``: pyspiel's ``gin_rummy``, ``observation_tensor()`` for the player to act at each
  decision (steps/s), and without it (hands/s, as ``rules``);
- ``rlcard``: ``rlcard.make("gin-rummy")``, whose ``step`` builds the next observation.

OpenSpiel and RLCard are optional (``pip install open_spiel rlcard``): a missing one is
reported as skipped. A step is one player decision (chance nodes are not counted). Figures go
to docs/env.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable

from bench.common import machine
from referee.env import GinRummyEnv, env
from referee.rules import STANDARD, apply, deal, legal_actions, shuffled_deck

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


def rules_loop(seconds: float, seed: int) -> tuple[float, float]:
    """Random legal hands on the plain rules API."""
    rng = random.Random(seed)
    steps = hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = deal(STANDARD, shuffled_deck(rng), dealer=hands & 1)
        while not state.is_over:
            legal = legal_actions(state)
            state = apply(state, legal[int(rng.random() * len(legal))])
            steps += 1
        hands += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, hands / elapsed


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


def main(argv: list[str] | None = None) -> None:
    """Run the interleaved rounds and print a JSON summary (medians over rounds)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per loop per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    loops: dict[str, Loop | str] = {
        "env": env_loop(GinRummyEnv),
        "env_wrapped": env_loop(env),
        "rules": rules_loop,
        "openspiel_observed": openspiel_loop(observe=True),
        "openspiel_plain": openspiel_loop(observe=False),
        "rlcard": rlcard_loop(),
    }
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in loops}
    for round_no in range(args.rounds):
        for name, loop in loops.items():
            if not isinstance(loop, str):
                runs[name].append(loop(args.seconds, 1000 * round_no + 7))
    result: dict[str, object] = {"machine": machine(), "cpus": os.cpu_count(), **vars(args)}
    median: dict[str, tuple[float, float]] = {}
    for name, loop in loops.items():
        if isinstance(loop, str):
            result[name] = loop
            continue
        steps = statistics.median(s for s, _ in runs[name])
        hands = statistics.median(h for _, h in runs[name])
        median[name] = (steps, hands)
        result[name] = {"steps_per_s": round(steps), "hands_per_s": round(hands, 1)}
    ratios = {}
    if "openspiel_observed" in median:
        ratios["env_steps_vs_openspiel"] = median["env"][0] / median["openspiel_observed"][0]
        ratios["env_wrapped_steps_vs_openspiel"] = (
            median["env_wrapped"][0] / median["openspiel_observed"][0]
        )
        ratios["rules_hands_vs_openspiel"] = median["rules"][1] / median["openspiel_plain"][1]
    if "rlcard" in median:
        ratios["env_steps_vs_rlcard"] = median["env"][0] / median["rlcard"][0]
        ratios["env_wrapped_steps_vs_rlcard"] = median["env_wrapped"][0] / median["rlcard"][0]
    result["ratios"] = {k: round(v, 2) for k, v in ratios.items()}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
