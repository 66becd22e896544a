"""Helpers for end-to-end matches: real ZeroMQ on 127.0.0.1, real subprocess bots."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from referee.match_config import MatchConfig, MatchResult
from referee.match_runner import BotSpec, run_match
from referee.match_seat import TimeControl

BOTS = Path(__file__).resolve().parent.parent / "bots"
PY = sys.executable
GREEDY = f"{PY} -m sample_bots.greedy_bot"
RANDOM = f"{PY} -m sample_bots.random_bot"
# heartbeat 0.5 s: an idle bot is a stall after 2.5 s of silence, far from what a busy CI
# machine can pause a healthy bot for (0.2 s gave 1 s).
FAST = TimeControl(move=0.5, bank=0.5, grace=0.05, startup=5.0, heartbeat=0.5)


def bad(mode: str, at: int = 3) -> str:
    """Command line of the misbehaving bot."""
    return f"{PY} {BOTS / 'misbehave.py'} {mode} {at}"


async def play(a: str, b: str, out: Path | None = None, **overrides: object) -> MatchResult:
    """Run one match between two command lines with fast clocks (1 game unless told);
    ``local_ipc=False`` makes the bots connect over TCP instead of the private ipc socket."""
    local_ipc = bool(overrides.pop("local_ipc", True))
    config = replace(MatchConfig(games=1, time=FAST, seed=1), **overrides)  # type: ignore[arg-type]
    specs = (BotSpec.parse(a), BotSpec.parse(b))
    return await run_match(config, specs, out_dir=out, kill_grace=0.5, local_ipc=local_ipc)
