"""What the bots' sandbox costs: per bot start, and per decision.

Run: ``python -m bench.bench_sandbox [--starts 15] [--rounds 5] [--games 3]``. Each round
measures, for each level (``none`` and the strongest this machine allows, in alternating
order, so that the machine's changing load falls on both alike):

1. spawn to exit of ``/bin/true`` (``BotProcess.start`` to reaped), at the referee's own
   priority (``nice=0``: a niced chain would measure the machine's load): the wrappers' cost;
2. spawn to hello of the raw-pyzmq instant bot (``bench/instant_bot.py``) over the private
   ``ipc://`` endpoint: what a seat waits for;
3. one match of ``--games`` games between two instant bots: decisions/s and the p50/p99 of
   the per-decision time the referee measures.

Reports medians over every sample (1, 2) or round (3) with the 10th-90th percentile spread,
and the median of the per-round differences (sandbox minus none).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import machine, percentile
from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.hub import Hub
from referee.match.play import play_match
from referee.match.record import MatchRecorder
from referee.net.process import BotCommand, BotProcess
from referee.net.sandbox import detect
from referee.net.transport import RouterTransport, TransportConfig

INSTANT = (sys.executable, "-m", "bench.instant_bot")
CLOCK = TimeControl(move=5.0, bank=60.0, startup=20.0, heartbeat=5.0)


async def spawn_to_exit(level: str) -> float:
    """Milliseconds from ``BotProcess.start`` of ``/bin/true`` to its reaped exit."""
    start = time.perf_counter()
    bot = await BotProcess.start(BotCommand(("/bin/true",), sandbox=level), nice=0)
    await bot.wait()
    elapsed = time.perf_counter() - start
    await bot.terminate(grace=0)
    return elapsed * 1000


async def spawn_to_hello(level: str) -> float:
    """Milliseconds from ``BotProcess.start`` of the instant bot to its hello."""
    async with RouterTransport(TransportConfig(local_ipc=True)) as transport:
        hub = Hub(transport)
        link = hub.open_seat(0, CLOCK)
        env = {"GIN_REFEREE_ENDPOINT": transport.local_endpoint, "GIN_REFEREE_TOKEN": link.token}
        start = time.perf_counter()
        bot = await BotProcess.start(BotCommand(INSTANT, sandbox=level), env=env)
        try:
            await link.connected
            return (time.perf_counter() - start) * 1000
        finally:
            link.close()
            await bot.terminate(grace=0.5)
            hub.close_seat(link)


async def one_match(level: str, games: int, out: Path) -> dict[str, float]:
    """Decisions/s and per-decision p50/p99 (µs) of one match between two instant bots."""
    async with RouterTransport(TransportConfig(local_ipc=True)) as transport:
        hub = Hub(transport)
        links = [hub.open_seat(seat, CLOCK) for seat in (0, 1)]
        procs = []
        try:
            for link in links:
                env = {
                    "GIN_REFEREE_ENDPOINT": transport.local_endpoint,
                    "GIN_REFEREE_TOKEN": link.token,
                }
                bot = await BotProcess.start(BotCommand(INSTANT, sandbox=level), env=env)
                procs.append(bot)
            await asyncio.gather(*(link.connected for link in links))
            config = MatchConfig(games=games, time=CLOCK, seed=1, match_id=level)
            recorder = MatchRecorder(out / f"{level}.jsonl")
            start = time.perf_counter()
            result = await play_match(config, (links[0], links[1]), recorder=recorder)
            elapsed = time.perf_counter() - start
            recorder.close()
        finally:
            await asyncio.gather(*(p.terminate(grace=0.5) for p in procs))
            for link in links:
                hub.close_seat(link)
    latencies = sorted(
        ms * 1000
        for line in (out / f"{level}.jsonl").read_text().splitlines()
        if (rec := json.loads(line))["type"] == "hand"
        for _seat, _action, ms in rec["actions"]
    )
    decisions = sum(s.decisions for s in result.seats)
    return {
        "decisions_per_s": decisions / elapsed,
        "p50_us": percentile(latencies, 0.5),
        "p99_us": percentile(latencies, 0.99),
    }


def spread(values: list[float]) -> str:
    """``median [p10-p90]`` of a list."""
    ordered = sorted(values)
    return (
        f"{statistics.median(ordered):8.1f} [{percentile(ordered, 0.1):.1f}-"
        f"{percentile(ordered, 0.9):.1f}]"
    )


def main() -> None:
    """Interleaved A/B rounds; prints a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=15, help="spawns per level and round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (each level per round)")
    parser.add_argument("--games", type=int, default=3, help="games of each round's match")
    args = parser.parse_args()
    strongest = str(detect().level)
    levels = ["none", strongest]
    print(f"machine: {machine()}; sandbox levels: none vs {strongest} ({detect().reason or 'ok'})")
    samples: dict[str, dict[str, list[float]]] = {level: {} for level in levels}
    diffs: dict[str, list[float]] = {}

    def add(level: str, key: str, value: float) -> None:
        samples[level].setdefault(key, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(args.rounds):
            order = levels if round_no % 2 == 0 else levels[::-1]
            per_round: dict[str, dict[str, float]] = {}
            for level in order:
                exits = [asyncio.run(spawn_to_exit(level)) for _ in range(args.starts)]
                hellos = [asyncio.run(spawn_to_hello(level)) for _ in range(args.starts)]
                for value in exits:
                    add(level, "spawn_to_exit_ms", value)
                for value in hellos:
                    add(level, "spawn_to_hello_ms", value)
                out = Path(tmp) / f"r{round_no}"
                out.mkdir(exist_ok=True)
                match = asyncio.run(one_match(level, args.games, out))
                for key, value in match.items():
                    add(level, key, value)
                per_round[level] = {
                    "spawn_to_exit_ms": statistics.median(exits),
                    "spawn_to_hello_ms": statistics.median(hellos),
                    **match,
                }
            for key, value in per_round[strongest].items():
                diffs.setdefault(key, []).append(value - per_round["none"][key])
    print(f"{'figure':<20} {'none':>26} {strongest:>26}   {'diff (median of rounds)':>24}")
    for key in samples["none"]:
        print(
            f"{key:<20} {spread(samples['none'][key]):>26} {spread(samples[strongest][key]):>26}"
            f"   {statistics.median(diffs[key]):>+24.1f}"
        )
    print(f"({args.rounds} rounds; {args.starts} starts per level and round; medians [p10-p90])")


if __name__ == "__main__":
    main()
