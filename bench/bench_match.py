"""One match between two instant bots against its baselines, interleaved, ipc and tcp.

Run: ``python -m bench.bench_match [--rounds 5] [--games 20] [--endpoints ipc,tcp]``.

For each endpoint kind (``ipc://``, the private socket local bots use, and ``tcp://``
loopback), ``--rounds`` rounds each measure, in an order that rotates from round to round:

* **raw** — a blocking pyzmq socket in round trips with the instant bot
  (:func:`bench.pingpong.raw_pyzmq`): the baseline of goal (a), and its server-side CPU per
  round trip the baseline of goal (b);
* **floor** — the referee's own transport with a do-nothing handler, same bot, same request
  (:func:`bench.pingpong.raw_transport`): the least any referee on this transport spends;
* **minimal** — the same transport and bot with a handler that does the rules' work of each
  decision and nothing else (:func:`bench.pingpong.minimal_referee`: decode the reply, apply
  it to a real hand, list the legal actions, write the next request): the least CPU per
  decision any referee that enforces the rules on this transport spends, in the same
  conditions as the match (the *tight floor* of goal (b)); ``cpu_ratio_minimal_raw`` says how
  far above raw pyzmq that floor already is;
* **match** — one ``--games``-game match between two instant bots (``bench/instant_bot.py``,
  the opponent's moves inside their requests, as the Python SDK asks) through the real hub,
  seats, rules and match record: decisions/s, the referee's CPU per decision.

The baselines time only after the bot has connected and after ``--warmup`` round trips, then
time consecutive segments of ``--lengths`` round trips (their spread shows the estimate does
not depend on the run's length); the match times from its first message, after both bots have
connected, in a process already warmed by an untimed one-game match. Every figure is printed
per round, and as the median with [min-max] over the rounds, together with the per-round
ratios match/raw and match/floor. Then, once: the mean bytes of the match's real requests and
replies (from the warm-up match), and with ``--concurrent N`` the referee's memory per running
match with N matches on one hub.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import pingpong
from bench.common import cpu_seconds, machine, percentile, proc_seconds, rss_kib, summary
from referee.cli.logs import configure
from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.hub import Hub
from referee.match.record import MatchRecorder
from referee.match.runner import play_watched
from referee.match.seat import SeatLink
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import RouterTransport, TransportConfig

INSTANT = f"{sys.executable} -m bench.instant_bot"
CLOCK = TimeControl(move=5.0, bank=60.0, startup=20.0, heartbeat=5.0)


def _count_bytes(transport: RouterTransport, sizes: dict[str, list[int]]) -> None:
    """Record the size of every message sent and delivered (warm-up match only)."""
    send, deliver = transport.send, transport.deliver

    def counted_send(peer: bytes, payload: bytes) -> bool:
        sizes["sent"].append(len(payload))
        return send(peer, payload)

    def counted_deliver(inc: Any) -> None:
        sizes["received"].append(len(inc.payload))
        deliver(inc)

    transport.send = counted_send  # type: ignore[method-assign]
    transport.deliver = counted_deliver  # type: ignore[method-assign]


async def matches(
    count: int, games: int, kind: str, out: Path, *, sizes: dict[str, list[int]] | None = None
) -> dict[str, Any]:
    """Run ``count`` concurrent matches (records in ``out``); wall, decisions, CPU, RSS."""
    endpoint = f"ipc://{out}/m.sock" if kind == "ipc" else "tcp://127.0.0.1:0"
    config = TransportConfig(endpoint=endpoint, heartbeat_timeout_ms=60000)
    async with RouterTransport(config) as transport:
        if sizes is not None:
            _count_bytes(transport, sizes)
        hub = Hub(transport)
        procs: list[BotProcess] = []
        runs = []
        links_all: list[SeatLink] = []
        command = replace(BotCommand.parse(INSTANT), sandbox="none")
        try:
            for number in range(count):
                links = []
                for seat in (0, 1):
                    link = hub.open_seat(seat, CLOCK)
                    env = {
                        "GIN_REFEREE_ENDPOINT": transport.endpoint,
                        "GIN_REFEREE_TOKEN": link.token,
                    }
                    procs.append(await BotProcess.start(command, env=env))
                    links.append(link)
                links_all += links
                cfg = MatchConfig(games=games, time=CLOCK, seed=number, match_id=f"b{number}")
                runs.append((cfg, links, procs[-2:], MatchRecorder(out / f"b{number}.jsonl")))
            await asyncio.gather(*(link.connected for link in links_all))
            peak = 0
            sampler = None
            if count > 1:

                async def sample() -> None:
                    nonlocal peak
                    while True:
                        peak = max(peak, rss_kib())
                        await asyncio.sleep(0.05)

                sampler = asyncio.ensure_future(sample())
            bots0 = sum(proc_seconds(p.pid) or 0.0 for p in procs)
            children0 = cpu_seconds(resource.RUSAGE_CHILDREN)
            cpu0, start = cpu_seconds(resource.RUSAGE_SELF), time.perf_counter()
            results = await asyncio.gather(
                *(play_watched(c, (ls[0], ls[1]), ps, recorder=r) for c, ls, ps, r in runs)
            )
            elapsed = time.perf_counter() - start
            cpu = cpu_seconds(resource.RUSAGE_SELF) - cpu0
            alive = sum(proc_seconds(p.pid) or 0.0 for p in procs)  # reaped: in CHILDREN
            bots = cpu_seconds(resource.RUSAGE_CHILDREN) - children0 + alive - bots0
            if sampler is not None:
                sampler.cancel()
        finally:
            await asyncio.gather(*(p.terminate(grace=0.5) for p in procs))
    decisions = sum(s.decisions for r in results for s in r.seats)
    latencies: list[float] = []
    for number in range(count):
        for line in (out / f"b{number}.jsonl").read_text().splitlines():
            rec = json.loads(line)
            if rec["type"] == "hand":
                latencies += [ms * 1000 for _s, _a, ms in rec["actions"]]
    latencies.sort()
    return {
        "decisions": decisions,
        "per_s": decisions / elapsed,
        "referee_cpu_us": cpu / decisions * 1e6,
        "bots_cpu_us": bots / decisions * 1e6,
        "p50_us": percentile(latencies, 0.5),
        "p99_us": percentile(latencies, 0.99),
        "peak_rss_kib": peak,
    }


def one_match(kind: str, games: int, tmp: Path) -> dict[str, Any]:
    """One timed match in a fresh directory."""
    where = Path(tempfile.mkdtemp(dir=tmp))
    return asyncio.run(matches(1, games, kind, where))


def measure_kind(kind: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Interleaved rounds of raw, floor and match on one endpoint kind."""
    sizes: dict[str, list[int]] = {"sent": [], "received": []}
    asyncio.run(matches(1, 1, kind, Path(tempfile.mkdtemp(dir=tmp)), sizes=sizes))  # warm-up
    series: dict[str, Callable[[], Any]] = {
        "raw": lambda: pingpong.raw_pyzmq(kind, args.warmup, args.lengths),
        "floor": lambda: pingpong.raw_transport(kind, args.warmup, args.lengths),
        "minimal": lambda: pingpong.minimal_referee(kind, args.warmup, args.lengths),
        "match": lambda: one_match(kind, args.games, tmp),
    }
    names = list(series)
    rounds: list[dict[str, Any]] = []
    for number in range(args.rounds):
        order = names[number % len(names) :] + names[: number % len(names)]
        got = {name: series[name]() for name in order}
        raw_rate = statistics.median(s["per_s"] for s in got["raw"])
        floor_rate = statistics.median(s["per_s"] for s in got["floor"])
        raw_cpu = statistics.median(s["server_cpu_us"] for s in got["raw"])
        floor_cpu = statistics.median(s["server_cpu_us"] for s in got["floor"])
        minimal_cpu = statistics.median(s["server_cpu_us"] for s in got["minimal"])
        match = got["match"]
        row = {
            "order": ",".join(order),
            **{f"raw_per_s_{s['round_trips']}": s["per_s"] for s in got["raw"]},
            **{f"floor_per_s_{s['round_trips']}": s["per_s"] for s in got["floor"]},
            **{f"minimal_per_s_{s['round_trips']}": s["per_s"] for s in got["minimal"]},
            "match_per_s": match["per_s"],
            "ratio_match_raw": match["per_s"] / raw_rate,
            "ratio_match_floor": match["per_s"] / floor_rate,
            "raw_server_cpu_us": raw_cpu,
            "floor_server_cpu_us": floor_cpu,
            "match_referee_cpu_us": match["referee_cpu_us"],
            "cpu_ratio_match_raw": match["referee_cpu_us"] / raw_cpu,
            "cpu_ratio_match_floor": match["referee_cpu_us"] / floor_cpu,
            "minimal_server_cpu_us": minimal_cpu,
            "cpu_ratio_minimal_raw": minimal_cpu / raw_cpu,
            "cpu_ratio_match_minimal": match["referee_cpu_us"] / minimal_cpu,
            "raw_bot_cpu_us": statistics.median(s["bot_cpu_us"] for s in got["raw"]),
            "match_bots_cpu_us": match["bots_cpu_us"],
            "match_p50_us": match["p50_us"],
            "match_p99_us": match["p99_us"],
        }
        rounds.append(row)
        print(
            kind,
            number,
            json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}),
            file=sys.stderr,
        )
    keys = [k for k in rounds[0] if k != "order"]
    return {
        "request_bytes_baseline": len(pingpong.REQUEST),
        "match_mean_sent_bytes": round(statistics.mean(sizes["sent"])),
        "match_mean_received_bytes": round(statistics.mean(sizes["received"])),
        "median_[min-max]": {k: summary([r[k] for r in rounds]) for k in keys},
        "orders": [r["order"] for r in rounds],
    }


def memory(concurrent: int, games: int, tmp: Path) -> dict[str, Any]:
    """Referee RSS per running match with ``concurrent`` matches on one hub."""
    base = rss_kib()
    got = asyncio.run(matches(concurrent, games, "ipc", Path(tempfile.mkdtemp(dir=tmp))))
    return {
        "concurrent_matches": concurrent,
        "concurrent_decisions_per_s": round(got["per_s"]),
        "rss_per_match_kib": round((got["peak_rss_kib"] - base) / concurrent),
    }


def main() -> None:
    """Run all measurements and print a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20, help="games per benchmark match")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per endpoint")
    parser.add_argument("--warmup", type=int, default=1000, help="untimed round trips")
    parser.add_argument("--lengths", type=pingpong.parse_lengths, default=[2000, 8000])
    parser.add_argument("--endpoints", default="ipc,tcp")
    parser.add_argument("--concurrent", type=int, default=0, help="memory run (0: skip)")
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": machine(), "rounds": args.rounds, "games": args.games}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        configure(level="info", json_file=tmp / "info.jsonl", console=False)
        for kind in args.endpoints.split(","):
            result[kind] = measure_kind(kind, args, tmp)
        if args.concurrent:
            result["memory"] = memory(args.concurrent, max(1, args.games // 4), tmp)
        logging.shutdown()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
