"""SPRT validation by simulation: error rates and test length beside fishtest's prediction.

Run: ``python -m bench.bench_sprt [--runs 2000] [--bounds 0:20 0:40] [--seed 2026]``. For each
pair of bounds it plays ``runs`` simulated sequential tests (exact pentanomial GSPRT checked
after every pair, independent games with 5% draws) at the true strengths elo0 and elo1, and
prints the accept / reject rates with their standard errors, the mean and longest number of
games, and the number of games fishtest's SPRT calculator predicts for the same bounds (draw
ratio 5%, RMS bias 0). Figures go to docs/statistics.md ("Validation by simulation").
"""

from __future__ import annotations

import argparse
import math
import random
import time

from referee.tournament.stats import fishtest_prediction, simulate_sprt


def main() -> None:
    """Print one row per (bounds, true Elo)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--bounds", nargs="+", default=["0:20", "0:40"])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--draw-rate", type=float, default=0.05)
    args = parser.parse_args()
    print("| elo0 | elo1 | true Elo | runs | accepted | rejected | mean games | longest "
          "| fishtest: P(accept), expected games | seconds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.bounds:
        elo0, elo1 = (float(x) for x in spec.split(":"))
        for true in (elo0, elo1):
            start = time.perf_counter()
            sim = simulate_sprt(true, args.runs, random.Random(args.seed), elo0=elo0, elo1=elo1,
                                draw_rate=args.draw_rate)  # fmt: skip
            took = time.perf_counter() - start
            pred = fishtest_prediction(true, elo0=elo0, elo1=elo1, draw_ratio=args.draw_rate)

            def rate(r: float) -> str:
                return f"{100 * r:.2f}% ± {100 * math.sqrt(r * (1 - r) / args.runs):.2f}"

            print(f"| {elo0:g} | {elo1:g} | {true:g} | {sim.runs} | {rate(sim.accept_rate)} "
                  f"| {rate(sim.reject_rate)} | {2 * sim.mean_pairs:.0f} | {2 * sim.max_pairs} "
                  f"| {100 * pred.pass_probability:.1f}%, {pred.expected_games:.0f} "
                  f"| {took:.0f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
