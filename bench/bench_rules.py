"""Rules-engine speed: deadwood, knock discards and random-vs-random hands per second.

Run: ``python -m bench.bench_rules [--seconds 5] [--rounds 5]``. If OpenSpiel is importable
(``pip install open_spiel``), its C++ gin_rummy driven from Python is measured in the same
run as the baseline for hands/s, and its ``GinRummyUtils`` (``min_deadwood``,
``best_meld_group``) for the meld searches, round by round against ours on the same hands:
the 10-card hands of random self-play (45,300 of them; a third hold a meld) and those of them
that hold a meld. Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench.common import calibration_us, machine, percentile, time_each
from referee.rules import STANDARD, apply, deal, legal_actions, shuffled_deck
from referee.rules.cards import CardSet
from referee.rules.melds import (
    COMPILED,
    _best_packing,
    _knock_discards,
    _knock_discards_exact,
    best_melds,
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


def played_hands(seed: int, count: int) -> list[int]:
    """The 10-card hands held during random self-play, as masks (the first ``count``)."""
    rng = random.Random(seed)
    out: list[int] = []
    hands = 0
    while len(out) < count:
        state = deal(STANDARD, shuffled_deck(rng), dealer=hands & 1)
        while not state.is_over and len(out) < count:
            out.extend(h for h in state.hands if h.bit_count() == 10)
            legal = legal_actions(state)
            state = apply(state, legal[int(rng.random() * len(legal))])
        hands += 1
    return out[:count]


def median_us(
    fn: Callable[[Any], object], inputs: Sequence[Any], before: Callable[[], None] = lambda: None
) -> float:
    """The median microseconds of ``fn(x)`` over ``inputs`` (``before()`` untimed first)."""
    return percentile(time_each(fn, inputs, before), 0.5)


def meld_searches(rounds: int) -> dict[str, object]:
    """Ours and OpenSpiel's ``GinRummyUtils`` on the same played hands, interleaved by round:
    the medians of each round, and each round's ratio (OpenSpiel's time over ours)."""
    try:
        import pyspiel
    except ImportError:
        return {}
    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    masks = played_hands(7, 45_300)
    rich = [m for m in masks if _best_packing(m)[1] > 0]
    groups = [
        (name, xs, [[i for i in range(52) if m >> i & 1] for m in xs], [CardSet(m) for m in xs])
        for name, xs in (("played", masks), ("with_a_meld", rich))
    ]
    for _, xs, lists, _ in groups:  # the same answers before any time counts
        assert all(
            utils.min_deadwood(h) == deadwood_mask(m) for h, m in zip(lists, xs, strict=True)
        )
    rows: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, xs, lists, cardsets in groups:
            ours = median_us(deadwood_mask, xs, _best_packing.cache_clear)
            spiel = median_us(utils.min_deadwood, lists)
            rows.setdefault(f"deadwood_{name}_us", []).append(ours)
            rows.setdefault(f"openspiel_min_deadwood_{name}_us", []).append(spiel)
            rows.setdefault(f"deadwood_{name}_ratio", []).append(spiel / ours)
            ours = median_us(best_melds, cardsets, _best_packing.cache_clear)
            spiel = median_us(utils.best_meld_group, lists)
            rows.setdefault(f"best_melds_{name}_us", []).append(ours)
            rows.setdefault(f"openspiel_best_meld_group_{name}_us", []).append(spiel)
            rows.setdefault(f"best_melds_{name}_ratio", []).append(spiel / ours)
    return {
        key: {
            "median": round(percentile(sorted(v), 0.5), 2),
            "range": [round(min(v), 2), round(max(v), 2)],
        }
        for key, v in rows.items()
    }


def main() -> None:
    """Run every measurement and print a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
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
        "meld_searches_compiled": COMPILED,
        "meld_searches": meld_searches(args.rounds),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
