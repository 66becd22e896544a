"""Helpers for end-to-end matches: real ZeroMQ on 127.0.0.1, real subprocess bots."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match.bots import BotSpec
from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.result import MatchResult
from referee.match.runner import run_match
from referee.net.keys import KeyPair

BOTS = Path(__file__).resolve().parent.parent / "bots"
PY = sys.executable
GREEDY = f"{PY} -m sample_bots.greedy_bot"
RANDOM = f"{PY} -m sample_bots.random_bot"
# Margins a busy CI machine cannot eat (found by running the suite beside two busy loops): a
# healthy bot may be descheduled for a good fraction of a second, so it gets 1 s per move plus
# a 2 s bank, and an idle bot is a stall only after 2.5 s of silence (heartbeat 0.5 s). Start-up
# gets 15 s: under a load average of 10 on 2 cores, the greedy bot's imports alone took 1.4-3.3 s
# (tests of the start-up fault set their own, shorter limit).
FAST = TimeControl(move=1.0, bank=2.0, grace=0.05, startup=15.0, heartbeat=0.5)


def bad(mode: str, at: int = 3) -> str:
    """Command line of the misbehaving bot."""
    return f"{PY} {BOTS / 'misbehave.py'} {mode} {at}"


async def play(a: str, b: str, out: Path | None = None, **overrides: object) -> MatchResult:
    """Run one match between two command lines with fast clocks (1 game unless told);
    ``local_ipc=False`` makes the bots connect over TCP instead of the private ipc socket,
    with CURVE when ``curve`` (the referee's key pair) is given; ``stop`` is the match's stop
    event."""
    local_ipc = bool(overrides.pop("local_ipc", True))
    stop = overrides.pop("stop", None)
    curve = overrides.pop("curve", None)
    assert curve is None or isinstance(curve, KeyPair)
    # Built afresh (not ``replace``d): ``seed=None`` then means a secret deal, not seed 1's.
    config = MatchConfig(**({"games": 1, "time": FAST, "seed": 1} | overrides))  # type: ignore[arg-type]
    specs = (BotSpec.parse(a), BotSpec.parse(b))
    return await run_match(
        config,
        specs,
        out_dir=out,
        kill_grace=0.5,
        local_ipc=local_ipc,
        stop=stop,  # type: ignore[arg-type]
        curve=curve,
    )


NODE_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "node"
BOT_JS = NODE_DIR / "bot.js"
INSTALL = f"cd {NODE_DIR} && npm ci"


def node_bot() -> str:
    """Command line of the Node bot; fails the test if Node or its packages are missing."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"`node` is not on PATH: install Node.js >= 18, then run: {INSTALL}")
    for package in ("zeromq", "@msgpack/msgpack"):
        if not (NODE_DIR / "node_modules" / package).is_dir():
            pytest.fail(f"the Node bot's package {package!r} is not installed; run: {INSTALL}")
    return f"{shlex.quote(node)} {shlex.quote(str(BOT_JS))}"


C_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "c"
C_INSTALL = "apt-get install -y build-essential pkg-config libzmq3-dev libmsgpack-dev"
CPP_DIR = C_DIR.parent / "cpp"
CPP_INSTALL = "apt-get install -y g++ make pkg-config libzmq3-dev cppzmq-dev libmsgpack-cxx-dev"


def _built(folder: Path, program: str, install: str) -> str:
    """Command line of a starter bot built with its Makefile (a no-op when up to date);
    fails the test, naming the packages to install, if it cannot be built."""
    make = shutil.which("make")
    if make is None:
        pytest.fail(f"`make` is not on PATH; run: {install}")
    built = subprocess.run(
        [make, "-s", "-C", str(folder)], check=False, capture_output=True, text=True
    )
    if built.returncode != 0:
        pytest.fail(f"{program} does not build ({built.stderr.strip()[-400:]}); run: {install}")
    return shlex.quote(str(folder / program))


def c_bot() -> str:
    """Command line of the C starter bot (built if needed)."""
    return _built(C_DIR, "gin-bot", C_INSTALL)


def cpp_bot() -> str:
    """Command line of the C++ starter bot (built if needed)."""
    return _built(CPP_DIR, "gin-bot-cpp", CPP_INSTALL)
