"""Start-up: ``gin-referee match`` of one short game between the two Python sample bots,
wall time from the command to its exit, and where that time goes.

Run: ``python -m bench.bench_startup [--rounds 5]``. Each round runs, in an order that
rotates from round to round, each of these commands once and times it from ``exec`` to exit:

* ``match`` — ``gin-referee match "python sample_bots/greedy_bot.py" "python
  sample_bots/random_bot.py" --games 1 --target-points 10 --seed 1`` (the sandbox ``auto``);
* ``match_nosandbox`` — the same with ``--sandbox none`` (the difference is the sandbox);
* ``python`` — ``python -c pass``: the interpreter's own start, the floor of any Python step;
* ``referee_imports`` — ``python -c "import referee.cli.main"``: the CLI's imports;
* ``bot_imports`` — ``python -c "import protocol.bot"``: a Python bot's SDK imports.

Prints the median [min-max] of each over the rounds as JSON. ``python -X importtime -c "import
referee.cli.main"`` shows the imports one by one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
GIN = str(Path(PY).with_name("gin-referee"))
BOTS = [f"{PY} sample_bots/greedy_bot.py", f"{PY} sample_bots/random_bot.py"]
SHORT = ["--games", "1", "--target-points", "10", "--seed", "1"]


def commands(out: str) -> dict[str, list[str]]:
    """The timed commands (``out``: a scratch directory)."""
    match = [GIN, "match", *BOTS, *SHORT, "--out"]
    return {
        "match": [*match, f"{out}/a"],
        "match_nosandbox": [*match, f"{out}/b", "--sandbox", "none"],
        "python": [PY, "-c", "pass"],
        "referee_imports": [PY, "-c", "import referee.cli.main"],
        "bot_imports": [PY, "-c", "import protocol.bot"],
    }


def wall(argv: list[str]) -> float:
    """Seconds from exec to exit; the command must succeed."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    """Interleaved rounds; medians and ranges as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.rounds):
            cmds = commands(f"{tmp}/{number}")
            names = list(cmds)
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                times.setdefault(name, []).append(wall(cmds[name]))
    shown = {
        name: f"{statistics.median(v):.3f} s [{min(v):.3f}-{max(v):.3f}]"
        for name, v in times.items()
    }
    print(json.dumps(shown, indent=2))


if __name__ == "__main__":
    main()
