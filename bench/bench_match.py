"""Referee throughput and latency with two instant bots, against a raw pyzmq baseline.

Run: ``python -m bench.bench_match [--games 20] [--rounds 3] [--concurrent 8]``. Each round
measures, back to back: (1) raw REQ/REP ping-pong of the same payload size between two
processes; (2) one match between two instant bots (decisions/s, p50/p99 of the per-decision
latency the referee measures), the bots taking the opponent's moves inside their requests
(``inline_events``, the Python SDK's default); (3) the same with bots asking for separate
``event`` messages. (1)-(3) are repeated ``--rounds`` times and the medians of the per-round
figures and ratios are reported (this machine is noisy). Then, once: (4) (2) with per-decision
DEBUG logging to a JSON file; (5) referee memory per running match with N concurrent matches
on one hub.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import pingpong
from bench.common import machine, percentile
from protocol.codec import encode
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
SEPARATE = f"{INSTANT} --separate-events"
CLOCK = TimeControl(move=5.0, bank=60.0, startup=20.0, heartbeat=5.0)


def rss_kib() -> int:
    """Resident set size of this process in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def matches(
    count: int, games: int, out: Path | None, bot: str = INSTANT
) -> tuple[float, int, list[float], int]:
    """Run ``count`` concurrent matches; return (seconds, decisions, latencies_us, peak_rss)."""
    async with RouterTransport(TransportConfig(heartbeat_timeout_ms=60000)) as transport:
        hub = Hub(transport)
        procs: list[BotProcess] = []
        runs = []
        links_all: list[SeatLink] = []
        try:
            for number in range(count):
                links = []
                for seat in (0, 1):
                    link = hub.open_seat(seat, CLOCK)
                    env = {
                        "GIN_REFEREE_ENDPOINT": transport.endpoint,
                        "GIN_REFEREE_TOKEN": link.token,
                    }
                    procs.append(await BotProcess.start(BotCommand.parse(bot), env=env))
                    links.append(link)
                links_all += links
                config = MatchConfig(games=games, time=CLOCK, seed=number, match_id=f"b{number}")
                recorder = None if out is None else MatchRecorder(out / f"b{number}.jsonl")
                runs.append((config, links, procs[-2:], recorder))
            await asyncio.gather(*(link.connected for link in links_all))
            peak = 0

            async def sample() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, rss_kib())
                    await asyncio.sleep(0.05)

            sampler = asyncio.ensure_future(sample())
            start = time.perf_counter()
            results = await asyncio.gather(
                *(play_watched(c, (ls[0], ls[1]), ps, recorder=r) for c, ls, ps, r in runs)
            )
            elapsed = time.perf_counter() - start
            sampler.cancel()
        finally:
            await asyncio.gather(*(p.terminate(grace=0.5) for p in procs))
    decisions = sum(s.decisions for r in results for s in r.seats)
    latencies: list[float] = []
    if out is not None:
        for number in range(count):
            for line in (out / f"b{number}.jsonl").read_text().splitlines():
                rec = json.loads(line)
                if rec["type"] == "hand":
                    latencies += [ms * 1000 for _s, _a, ms in rec["actions"]]
    latencies.sort()
    return elapsed, decisions, latencies, peak


def typical_request_size() -> int:
    """Bytes of a mid-hand discard request, for a fair ping-pong payload."""
    from protocol.schema import Request, WireAction, WireView

    cards = ("As", "2c", "3d", "4h", "5s", "6c", "7d", "8h", "9s", "Tc", "Jd")
    view = WireView(
        0, "discard", 0, 1, cards, cards[:8], 20, 10, ("Kd",), 10, 1, 12, (30, 45), None
    )
    legal = tuple(WireAction("discard", c) for c in cards)
    return len(encode(Request(123, "discard", legal, view, 30000, 29000)))


def one_round(size: int, games: int, out: Path) -> dict[str, float]:
    """Raw ping-pong, then a match with inline events, then one with separate events."""
    raw = pingpong.run(size, 10000)
    figures = {
        "raw_pingpong_per_s": raw["round_trips_per_s"],
        "raw_p50_us": raw["p50_us"],
        "raw_p99_us": raw["p99_us"],
    }
    for label, bot in (("inline", INSTANT), ("separate", SEPARATE)):
        where = out / label
        where.mkdir(parents=True)
        secs, decisions, lat, _ = asyncio.run(matches(1, games, where, bot))
        rate = decisions / secs
        figures[f"{label}_decisions_per_s"] = rate
        figures[f"{label}_ratio_to_raw"] = rate / raw["round_trips_per_s"]
        figures[f"{label}_p50_us"] = percentile(lat, 0.5)
        figures[f"{label}_p99_us"] = percentile(lat, 0.99)
        figures[f"{label}_p99_ratio_to_raw"] = percentile(lat, 0.99) / raw["p99_us"]
    return figures


def main() -> None:
    """Run all measurements and print a JSON summary (medians over the rounds)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20, help="games per benchmark match")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of raw + both matches")
    parser.add_argument("--concurrent", type=int, default=8)
    args = parser.parse_args()
    size = typical_request_size()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        configure(level="info", json_file=out / "info.jsonl", console=False)
        rounds = [one_round(size, args.games, out / f"r{n}") for n in range(args.rounds)]
        inline_rate = statistics.median(r["inline_decisions_per_s"] for r in rounds)
        configure(level="debug", json_file=out / "debug.jsonl", console=False)
        dsecs, ddecisions, _, _ = asyncio.run(matches(1, args.games, None))
        configure(level="info", json_file=out / "info2.jsonl", console=False)
        base = rss_kib()
        csecs, cdecisions, _, peak = asyncio.run(
            matches(args.concurrent, max(1, args.games // 4), None)
        )
        logging.shutdown()
    result: dict[str, object] = {
        "machine": machine(),
        "request_bytes": size,
        "rounds": args.rounds,
        "median": {
            key: round(statistics.median(r[key] for r in rounds), 3 if "ratio" in key else 1)
            for key in rounds[0]
        },
        "per_round": [
            {k: round(v, 3 if "ratio" in k else 1) for k, v in r.items()} for r in rounds
        ],
        "debug_logging_decisions_per_s": round(ddecisions / dsecs),
        "debug_logging_cost_ratio": round((ddecisions / dsecs) / inline_rate, 3),
        "concurrent_matches": args.concurrent,
        "concurrent_decisions_per_s": round(cdecisions / csecs),
        "rss_per_match_kib": round((peak - base) / args.concurrent),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
