"""Elo of the OpenSpiel and RLCard bots (protocol.adapters) against the sample bots.

Writes a tournament configuration, plays it with ``gin-referee tournament`` (duplicate deals,
the ``eaai`` rules: OpenSpiel's game is the closest to them) and prints ``gin-referee results``
(ratings with 95% intervals, head to head). Two fields:

- ``round-robin`` (default): OpenSpiel's simple bot, RLCard's novice rule agent and the
  sample bots (random, greedy, C, C++, Java, Node), every pairing ``--games`` games;
- ``ismcts``: a gauntlet of OpenSpiel's IS-MCTS (``--simulations`` per decision) against
  random, greedy, the simple bot and the novice agent, ``--games`` games each (IS-MCTS costs
  about a tenth of a second a decision, so it plays fewer games).

    python -m bench.bench_adapters --games 100 --out runs/bench-adapters
    python -m bench.bench_adapters --field ismcts --games 10 --simulations 50 \
        --out runs/bench-ismcts

Needs the ``openspiel`` and ``rlcard`` extras, the built C, C++ and Java bots and the Node
bot's packages (``.ci/run`` makes them). Figures: docs/performance.md, "Existing bots".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

PY = sys.executable
REFEREE = str(Path(PY).with_name("gin-referee"))
ADAPTERS = {
    "os-simple": f"{PY} -m protocol.adapters.openspiel simple",
    "rlcard-novice": f"{PY} -m protocol.adapters.rlcard novice",
}
SAMPLES = {
    "random": f"{PY} -m sample_bots.random_bot",
    "greedy": f"{PY} -m sample_bots.greedy_bot",
    "c": "sample_bots/c/gin-bot",
    "cpp": "sample_bots/cpp/gin-bot-cpp",
    "java": "java -cp sample_bots/java/build gin.StarterBot",
    "node": "node sample_bots/node/bot.js",
}


def config(field: str, games: int, simulations: int, seed: int) -> str:
    """The tournament's TOML."""
    if field == "ismcts":
        bots = {
            "os-ismcts": f"{PY} -m protocol.adapters.openspiel ismcts --simulations {simulations}",
            "random": SAMPLES["random"],
            "greedy": SAMPLES["greedy"],
            **ADAPTERS,
        }
        head = 'format = "gauntlet"\ncandidate = "os-ismcts"\n'
    else:
        bots = {**ADAPTERS, **SAMPLES}
        head = 'format = "round-robin"\n'
    lines = [
        'rules = "eaai"',
        "",
        "[tournament]",
        f'name = "bench-adapters-{field}"',
        head.rstrip(),
        f"games_per_pairing = {games}",
        "duplicate = true",
        f"seed = {seed}",
        "concurrency = 1",
        "",
        "[time]",
        "move = 2.0",
        "bank = 60.0",
    ]
    for name, command in bots.items():
        lines += ["", "[[bots]]", f'name = "{name}"', f'command = "{command}"']
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Play the field's tournament and print its results."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_adapters", description=__doc__)
    parser.add_argument("--field", choices=("round-robin", "ismcts"), default="round-robin")
    parser.add_argument("--games", type=int, default=100, help="games per pairing (even)")
    parser.add_argument("--simulations", type=int, default=50, help="IS-MCTS's budget")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--prior-draws",
        type=int,
        default=1,
        help="virtual draws per pairing for the ratings (random loses every game: without "
        "them no rating is finite)",
    )
    parser.add_argument("--out", type=Path, required=True, help="a new directory")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True)
    toml = args.out / "bench.toml"
    toml.write_text(config(args.field, args.games, args.simulations, args.seed))
    played = subprocess.run(
        [REFEREE, "tournament", str(toml), "--out", str(args.out / "run")], check=False
    )
    if played.returncode != 0:
        return played.returncode
    results = [REFEREE, "results", str(args.out / "run"), "--prior-draws", str(args.prior_draws)]
    return subprocess.run(results, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
