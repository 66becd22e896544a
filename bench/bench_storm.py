"""The referee's own games during a HELLO storm from one address, with and without the limit
of new connections per address (``TransportConfig.connect_rate``, :mod:`referee.net.ratelimit`).

Run: ``python -m bench.bench_storm [--rounds 5] [--games 10] [--curve] [--parallel 8]``.

One endpoint as a daemon has it: a TCP endpoint that anyone may reach (CURVE with ``--curve``,
else NULL) and the private ``ipc://`` socket of the referee's own bots, on one loop. The own
games: ``--concurrent`` matches of ``--games`` games between two instant bots
(``bench/instant_bot.py``) over the ipc socket, through the real hub, seats, rules and records.
Three conditions, measured in rounds whose order rotates (A, B, C; B, C, A; ...):

* **quiet**: no storm;
* **storm, no limit**: a HELLO storm (``bench/netflood.py hello``: ``--parallel`` connections
  at a time from one address, each writing a greeting and a first handshake command made
  once, reading the referee's answer, dropping the connection and opening the next) against
  the TCP endpoint, with ``connect_rate = 0``;
* **storm, limited**: the same storm with the default ``connect_rate`` and ``connect_burst``.

In each, the bots connect and the storm runs for ``--storm-warmup`` seconds (the bucket is
empty by then) before the timer starts, with the first decision; it stops with the last game.
Each round prints the decisions/s of the own games and what the endpoint served the storm
meanwhile (connections accepted and connections refused by the limit, per second, from the
transport's counters), and the referee's CPU time per storm connection: its CPU during the
games less what the quiet games of that round spent per decision, over the storm's
connections (accepted and refused); the summary gives the medians with [min-max] over the
rounds, and per round the ratio of each storm's rate to that round's quiet rate.

The attacker stands for another machine, so its own CPU must not be the referee's loss: the
referee and its bots run on core 0 and the attacker on core 1 (``--no-pin``: all of them
anywhere, the attacker at ``nice 19`` as in ``bench/bench_boundary.py``; on a machine this
small the attacker then still takes time from the games that no limit in the referee can give
back). ``--ipc`` storms the private socket instead, as a hostile local bot would (its address
is its process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from nacl.bindings import crypto_box_keypair
from zmq.utils import z85

from bench.bench_match import CLOCK, INSTANT
from bench.common import cpu_seconds, machine, summary
from referee.cli.logs import configure
from referee.match.config import MatchConfig
from referee.match.hub import Hub
from referee.match.record import MatchRecorder
from referee.match.runner import play_watched
from referee.net.keys import KeyRing
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import CurveServerKeys, RouterTransport, TransportConfig

CONDITIONS = ("quiet", "storm_unlimited", "storm_limited")


async def own_games(args: argparse.Namespace, condition: str, out: Path) -> dict[str, Any]:
    """One measurement: the own games' decisions/s and what the storm got meanwhile."""
    curve = None
    if args.curve:
        public, secret = crypto_box_keypair()
        curve = CurveServerKeys(public, secret, KeyRing())
    config = TransportConfig(curve=curve, local_ipc=True, heartbeat_timeout_ms=60000)
    if condition == "storm_unlimited":
        config = replace(config, connect_rate=0)
    async with RouterTransport(config) as transport:
        hub = Hub(transport)
        procs: list[BotProcess] = []
        storm: asyncio.subprocess.Process | None = None
        command = replace(BotCommand.parse(INSTANT), sandbox="none")
        try:
            runs = []
            for number in range(args.concurrent):
                links = (hub.open_seat(0, CLOCK), hub.open_seat(1, CLOCK))
                for link in links:
                    env = {
                        "GIN_REFEREE_ENDPOINT": transport.local_endpoint,
                        "GIN_REFEREE_TOKEN": link.token,
                    }
                    procs.append(await BotProcess.start(command, env=env))
                cfg = MatchConfig(games=args.games, time=CLOCK, seed=number, match_id=f"s{number}")
                runs.append((cfg, links, procs[-2:], MatchRecorder(out / f"s{number}.jsonl")))
            await asyncio.gather(*(link.connected for _, links, _, _ in runs for link in links))
            if condition != "quiet":
                target = transport.endpoint
                if args.ipc:
                    target = transport.local_endpoint
                key = [f"--server-key={z85.encode(curve.public).decode()}"] if curve else []
                storm = await asyncio.create_subprocess_exec(
                    *args.attacker_prefix, sys.executable, "-m", "bench.netflood",
                    "hello", target, "600", "--parallel", str(args.parallel), *key,
                    stdout=asyncio.subprocess.DEVNULL,
                )  # fmt: skip
                await asyncio.sleep(args.storm_warmup)
            stats = transport.stats
            before = (stats.accepted, stats.rate_limited)
            cpu0, start = cpu_seconds(resource.RUSAGE_SELF), time.perf_counter()
            results = await asyncio.gather(
                *(play_watched(c, (ls[0], ls[1]), ps, recorder=r) for c, ls, ps, r in runs)
            )
            elapsed = time.perf_counter() - start
            cpu = cpu_seconds(resource.RUSAGE_SELF) - cpu0
            accepted, limited = stats.accepted - before[0], stats.rate_limited - before[1]
        finally:
            if storm is not None:
                storm.kill()
                await storm.wait()
            await asyncio.gather(*(p.terminate(grace=0.5) for p in procs))
    decisions = sum(s.decisions for r in results for s in r.seats)
    return {
        "decisions_per_s": decisions / elapsed,
        "seconds": elapsed,
        "decisions": decisions,
        "referee_cpu_s": cpu,
        "storm_accepted_per_s": accepted / elapsed,
        "storm_refused_per_s": limited / elapsed,
    }


def main() -> None:
    """Interleaved rounds of the three conditions; per-round lines on stderr, JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=10, help="games per match per measurement")
    parser.add_argument("--concurrent", type=int, default=1, help="own matches at once")
    parser.add_argument("--curve", action="store_true", help="the TCP endpoint requires CURVE")
    parser.add_argument("--parallel", type=int, default=8, help="storm connections at a time")
    parser.add_argument("--storm-warmup", type=float, default=1.0, help="seconds before timing")
    parser.add_argument("--no-pin", action="store_true", help="no cores of their own")
    parser.add_argument("--ipc", action="store_true", help="storm the private ipc socket")
    args = parser.parse_args()
    if args.no_pin or len(os.sched_getaffinity(0)) < 2:
        args.attacker_prefix = ["nice", "-n", "19"]
    else:
        first, second = sorted(os.sched_getaffinity(0))[:2]
        os.sched_setaffinity(0, {first})  # the bots started from here inherit it
        args.attacker_prefix = ["taskset", "-c", str(second)]
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        configure(level="info", json_file=tmp / "info.jsonl", console=False)
        asyncio.run(own_games(replace_games(args, 1), "quiet", Path(tempfile.mkdtemp(dir=tmp))))
        for number in range(args.rounds):
            shift = number % len(CONDITIONS)
            order = CONDITIONS[shift:] + CONDITIONS[:shift]
            row: dict[str, Any] = {"order": ",".join(order)}
            for condition in order:
                where = Path(tempfile.mkdtemp(dir=tmp))
                got = asyncio.run(own_games(args, condition, where))
                row |= {f"{condition}_{key}": value for key, value in got.items()}
            quiet = row["quiet_decisions_per_s"]
            per_decision = row["quiet_referee_cpu_s"] / row["quiet_decisions"]
            for condition in CONDITIONS[1:]:
                row[f"{condition}_ratio"] = row[f"{condition}_decisions_per_s"] / quiet
                extra = row[f"{condition}_referee_cpu_s"]
                extra -= per_decision * row[f"{condition}_decisions"]
                served = row[f"{condition}_storm_accepted_per_s"]
                served += row[f"{condition}_storm_refused_per_s"]
                served *= row[f"{condition}_seconds"]
                row[f"{condition}_referee_us_per_storm_connection"] = extra / served * 1e6
            rounds.append(row)
            shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}
            print(number, json.dumps(shown), file=sys.stderr, flush=True)
        logging.shutdown()
    skip = ("_seconds", "_decisions", "_cpu_s")
    keys = [k for k in rounds[0] if k != "order" and not k.endswith(skip)]
    result = {
        "machine": machine(),
        "rounds": args.rounds,
        "games": args.games,
        "concurrent": args.concurrent,
        "curve": args.curve,
        "ipc": args.ipc,
        "parallel": args.parallel,
        "pinned": not args.no_pin,
        "median_[min-max]": {k: summary([r[k] for r in rounds]) for k in keys},
        "median_seconds": round(statistics.median(r["quiet_seconds"] for r in rounds), 2),
    }
    print(json.dumps(result, indent=2))


def replace_games(args: argparse.Namespace, games: int) -> argparse.Namespace:
    """``args`` with another number of games (the untimed warm-up)."""
    return argparse.Namespace(**{**vars(args), "games": games})


if __name__ == "__main__":
    main()
