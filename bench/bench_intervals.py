"""Coverage of the head-to-head 95% interval: how often it contains the true Elo difference.

Run: ``python -m bench.bench_intervals [--elos 0 100 200 300 400 600] [--runs 4000]``. For each
model and true Elo it prints the coverage of ``estimate_pairs`` (or ``estimate_games``) at each
sample size: exact up to ``--exact`` units (every possible sample, weighted by its multinomial
probability: no sampling error), by ``--runs`` simulated samples above (± one standard
error, seed ``--seed``). Beside it, the same for the normal-approximation (Wald) interval the
referee used before, computed here. Figures go to docs/statistics.md ("Coverage").

Models: ``independent`` pairs of two independent games with 5% draws (the SPRT simulation's
model); ``duplicate`` pairs where the deals decide half the pairs (one win each) and the
other half are independent games (Gin's duplicate deals cancel luck this way); ``games``
unpaired games with 5% draws.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import random
import time
from collections.abc import Callable, Sequence

from referee.tournament.stats.elo import (
    GAME_VALUES,
    PAIR_VALUES,
    TAIL,
    Z95,
    elo_bound,
    moments,
)
from referee.tournament.stats.simulate import (
    compositions,
    estimate_counts,
    game_probabilities,
    interval_coverage,
    pentanomial_probabilities,
)

MODELS: dict[str, Callable[[float], Sequence[float]]] = {
    "independent": lambda elo: pentanomial_probabilities(elo, 0.05),
    "duplicate": lambda elo: pentanomial_probabilities(elo, 0.05, luck=0.5),
    "games": lambda elo: game_probabilities(elo, 0.05),
}


def wald(counts: Sequence[int]) -> tuple[float, float]:
    """The interval the referee printed before: elo_bound(m -+ Z95 sqrt(v / N)), v the sample's
    (population) variance, the widest variance m(1 - m) when it is 0; Markov's bound for a
    perfect record."""
    values = PAIR_VALUES if len(counts) == 5 else GAME_VALUES
    n, mean, var = moments(counts, values)
    if mean in (0.0, 1.0):
        bound = elo_bound(TAIL ** (1.0 / n))
        return (bound, math.inf) if mean == 1.0 else (-math.inf, -bound)
    se = math.sqrt((var or mean * (1.0 - mean)) / n)
    return elo_bound(mean - Z95 * se), elo_bound(mean + Z95 * se)


def wald_coverage(probs: Sequence[float], units: int, true_elo: float) -> float:
    """Exact coverage of :func:`wald` (as :func:`interval_coverage`)."""
    log_fact = [math.lgamma(k + 1) for k in range(units + 1)]
    covered = 0.0
    for counts in compositions(units, len(probs)):
        if any(c and not p for c, p in zip(counts, probs, strict=True)):
            continue
        lower, upper = wald(counts)
        if lower <= true_elo <= upper:
            covered += math.exp(
                log_fact[units]
                + sum(
                    c * math.log(p) - log_fact[c] for c, p in zip(counts, probs, strict=True) if c
                )
            )
    return covered


def sampled(
    probs: Sequence[float], units: int, true_elo: float, runs: int, rng: random.Random
) -> tuple[float, float]:
    """Coverage of the referee's and of the Wald interval over ``runs`` simulated samples."""
    cumulative = list(itertools.accumulate(probs))
    cumulative[-1] = 1.0
    ours = old = 0
    for _ in range(runs):
        counts = [0] * len(probs)
        for _ in range(units):
            counts[bisect.bisect_right(cumulative, rng.random())] += 1
        e = estimate_counts(counts)
        ours += e.lower <= true_elo <= e.upper
        lower, upper = wald(counts)
        old += lower <= true_elo <= upper
    return ours / runs, old / runs


def main() -> None:
    """Print one row per (model, true Elo): coverage in % at each sample size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--elos", nargs="+", type=float, default=[0, 100, 200, 300, 400, 600])
    parser.add_argument("--sizes", nargs="+", type=int, default=[2, 3, 4, 5, 6, 8, 10, 15, 30, 100])
    parser.add_argument("--exact", type=int, default=15, help="exact coverage up to this size")
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    error = 100 * math.sqrt(0.95 * 0.05 / args.runs)
    print("coverage of the 95% interval in %, ours (the referee's Wald interval before); sizes "
          f"above {args.exact} by {args.runs} samples, ± {error:.2f}")  # fmt: skip
    print(f"| model | true Elo | {' | '.join(str(n) for n in args.sizes)} | seconds |")
    print(f"|---|---|{'---|' * len(args.sizes)}---|")
    rng = random.Random(args.seed)
    for model in args.models:
        for elo in args.elos:
            try:
                probs = MODELS[model](elo)
            except ValueError:
                continue  # the model cannot reach this Elo (luck caps the score)
            start = time.perf_counter()
            cells = []
            for n in args.sizes:
                if n <= args.exact:
                    ours, old = interval_coverage(probs, n, elo), wald_coverage(probs, n, elo)
                else:
                    ours, old = sampled(probs, n, elo, args.runs, rng)
                cells.append(f"{100 * ours:.1f} ({100 * old:.1f})")
            took = time.perf_counter() - start
            print(f"| {model} | {elo:+g} | {' | '.join(cells)} | {took:.0f} |", flush=True)


if __name__ == "__main__":
    main()
