"""Rules-engine speed: deadwood, knock discards and random-vs-random hands per second.

Run: ``python -m bench.bench_rules [--seconds 5]``. If OpenSpiel is importable
(``pip install open_spiel``), its C++ gin_rummy driven from Python is measured in the same
run as the baseline for hands/s. Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from bench.common import calibration_us, machine, percentile, time_each
from referee.rules import STANDARD, apply, deal, legal_actions, shuffled_deck
from referee.rules.melds import (
    _best_packing,
    _knock_discards,
    _knock_discards_exact,
    deadwood_mask,
)


def random_masks(rng: random.Random, size: int, count: int) -> list[int]:
    """``count`` random hands of ``size`` cards as masks."""
    return [sum(1 << i for i in rng.sample(range(52), size)) for _ in range(count)]


def ours_hands_per_second(seconds: float, seed: int) -> tuple[float, float]:
    """Random-vs-random complete hands, legal actions listed at every decision."""
    rng = random.Random(seed)
    hands = decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = deal(STANDARD, shuffled_deck(rng), dealer=hands & 1)
        while not state.is_over:
            legal = legal_actions(state)
            state = apply(state, legal[int(rng.random() * len(legal))])
            decisions += 1
        hands += 1
    elapsed = time.perf_counter() - start
    return hands / elapsed, decisions / hands


def openspiel_hands_per_second(seconds: float, seed: int) -> float | None:
    """The same loop on OpenSpiel's gin_rummy, or None when it is not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    rng = random.Random(seed)
    game = pyspiel.load_game("gin_rummy")
    hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])
        hands += 1
    return hands / (time.perf_counter() - start)


def main() -> None:
    """Run every measurement and print a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--samples", type=int, default=20000)
    args = parser.parse_args()
    rng = random.Random(42)
    calib = calibration_us()
    dw = time_each(deadwood_mask, random_masks(rng, 10, args.samples), _best_packing.cache_clear)
    kd = time_each(
        lambda m: _knock_discards(m, 10),
        random_masks(rng, 11, args.samples),
        _knock_discards_exact.cache_clear,
    )
    ours, per_hand = ours_hands_per_second(args.seconds, 7)
    spiel = openspiel_hands_per_second(args.seconds, 7)
    result = {
        "machine": machine(),
        "cpus": os.cpu_count(),
        "calibration_us": round(calib, 1),
        "deadwood_10_median_us": round(percentile(dw, 0.5), 2),
        "deadwood_10_p99_us": round(percentile(dw, 0.99), 2),
        "knock_discards_11_median_us": round(percentile(kd, 0.5), 2),
        "knock_discards_11_p99_us": round(percentile(kd, 0.99), 2),
        "random_hands_per_s": round(ours, 1),
        "decisions_per_hand": round(per_hand, 1),
        "openspiel_random_hands_per_s": None if spiel is None else round(spiel, 1),
        "ratio_vs_openspiel": None if spiel is None else round(ours / spiel, 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
