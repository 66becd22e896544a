"""The compiled request writer against the Python one: warm, and in a tournament at its peak.

Run: ``python -m bench.bench_writer [--rounds 6] [--warm-only]``.

- **warm**: both writers over the same 20,000 requests of random hands, in one process,
  interleaved rounds; µs per request.
- **tournament**: ``bench.bench_tournament`` at its peak (8 games at once, 24 long games, with
  its do-nothing control), one round per run, run alternately with the compiled writer and
  with ``GIN_REFEREE_PURE_PYTHON=1`` (the order rotating each pair); per variant, the
  referee's CPU per decision, the decisions/s and the ratio to the same run's control.

Prints one JSON object on stdout (medians [min-max]) and the rounds on stderr. The compiled
variant needs the extension built (``pip install .`` with a C compiler).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from typing import Any

from bench.common import summary
from referee.match.request import COMPILED, python_request_bytes, request_bytes
from referee.rules import STANDARD, HandState, apply, deal, legal_actions
from referee.rules.state import shuffled_deck

TOURNAMENT = [
    *("-m", "bench.bench_tournament", "--rounds", "1", "--levels", "8"),
    *("--games-per-level", "8", "--long-games-per-level", "24"),
]


def warm(rounds: int) -> dict[str, str]:
    """µs per request of each writer over the same requests, interleaved rounds."""
    rng = random.Random(1)
    steps: list[tuple[HandState, Any]] = []
    while len(steps) < 20_000:
        state = deal(STANDARD, shuffled_deck(rng), dealer=len(steps) % 2)
        while not state.is_over:
            legal = legal_actions(state)
            steps.append((state, legal))
            state = apply(state, rng.choice(legal))
    times: dict[str, list[float]] = {"compiled": [], "python": []}
    writers = {"compiled": request_bytes, "python": python_request_bytes}
    for r in range(rounds):
        for name in ("compiled", "python") if r % 2 == 0 else ("python", "compiled"):
            write = writers[name]
            start = time.perf_counter()
            for state, legal in steps:
                write(state, legal, 1234, 5000, 60000, ())
            times[name].append((time.perf_counter() - start) / len(steps) * 1e6)
    return {name: summary(values) for name, values in times.items()}


def tournament(rounds: int) -> dict[str, dict[str, str]]:
    """The tournament's peak, alternately with each writer (one run per round and variant)."""
    got: dict[str, dict[str, list[float]]] = {
        name: {"referee_us_per_decision": [], "decisions_per_s": [], "ratio_to_control": []}
        for name in ("compiled", "python")
    }
    for r in range(rounds):
        for name in ("compiled", "python") if r % 2 == 0 else ("python", "compiled"):
            env = {**os.environ, "GIN_REFEREE_PURE_PYTHON": "1" if name == "python" else "0"}
            out = subprocess.run(
                [sys.executable, *TOURNAMENT], env=env, capture_output=True, check=True
            ).stdout
            series = json.loads(out)["series"]
            level = series["amortised"]["levels"][0]
            control = series["control"]["levels"][0]
            row = got[name]
            row["referee_us_per_decision"].append(level["referee_us_per_decision"])
            row["decisions_per_s"].append(level["decisions_per_s"])
            row["ratio_to_control"].append(level["decisions_per_s"] / control["decisions_per_s"])
            print(f"round {r} {name}: {json.dumps({k: v[-1] for k, v in row.items()})}",
                  file=sys.stderr)  # fmt: skip
    return {name: {k: summary(v) for k, v in row.items()} for name, row in got.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="rounds of each variant")
    parser.add_argument("--warm-only", action="store_true", help="skip the tournament")
    args = parser.parse_args()
    if not COMPILED:
        print("the compiled writer is not built here (or GIN_REFEREE_PURE_PYTHON is set)",
              file=sys.stderr)  # fmt: skip
        return 2
    result: dict[str, Any] = {"warm_us_per_request": warm(max(args.rounds, 3))}
    if not args.warm_only:
        result["tournament"] = tournament(args.rounds)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
