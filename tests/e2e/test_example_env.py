"""examples/linear_agent.py, shortened: it learns to beat a random opponent in the environment,
then plays a real match as a bot, unchanged, and wins it."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import PY, RANDOM, play

pytestmark = [pytest.mark.timeout(120)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "linear_agent.py"


def test_the_example_learns_and_plays_a_match(tmp_path: Path) -> None:
    weights = tmp_path / "weights.json"
    done = subprocess.run(
        [PY, str(EXAMPLE), "train", "--out", str(weights), "--generations", "3",
         "--population", "8", "--hands", "10", "--eval-hands", "60"],
        capture_output=True, text=True, timeout=90, check=True,
    )  # fmt: skip
    found = re.search(r"trained ([-+.\d]+), random ([-+.\d]+)", done.stdout)
    assert found, done.stdout
    trained, baseline = float(found[1]), float(found[2])
    assert trained > baseline + 20, done.stdout
    inline = ",".join(str(w) for w in json.loads(weights.read_text())["weights"])
    bot = f"{PY} {EXAMPLE} play --weights-inline={inline}"  # the sandbox hides tmp_path
    result = asyncio.run(play(bot, RANDOM, tmp_path / "match", games=2, seed=5))
    assert result.reason == "normal" and not any(s.faults for s in result.seats)
    assert result.seats[0].games_won == 2, result
