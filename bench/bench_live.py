"""What the live spectator page costs the games: the referee's loop lag and the time bots are
charged, with and without spectators.

Run: ``python -m bench.bench_live [--rounds 5] [--games 8] [--spectators 32]``.
Each round plays the same small tournament (two instant bots, duplicate deals, concurrency 2,
bots kept; or ``--config TOML``, e.g. examples/tournament.toml with the sample bots, ``--games``
a pairing, run with the virtual environment active) three times, interleaved with the order
alternating: **off** (no live page), **page** (the live page, no spectator: the hub's own cost)
and **on** (the live page, ``--spectators`` readers that behave as the page does, watching the
game it shows, plus one stream that never reads, all in a separate process,
:mod:`bench.live_clients`, connected before the first game); ``--arms on`` runs only that one.
The card delay is ``--delay`` (default 0, so every hand is released at once); a spectator's
queue is ``--queue-mib`` so that readers are not dropped when the shared machine slows their
process (``dropped`` counts those that were, the stalled one included). Measured per run: the
event loop's worst scheduling lag (``TournamentRun.lag_max``, sampled every 100 ms), the mean
time a decision was charged to a bot (time used / decisions, from the stored results: what the
clocks saw), decisions per second, faults; with spectators, the bytes each reader received per
second of its streams (``spectator_kb_per_s``: the mean over readers; the stream's cost for one
spectator).
Reports medians and spread (min-max) per series, after one warm-up round.

Prints one JSON object on stdout and a table on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.bench_tournament import make_config
from referee.cli.logs import configure
from referee.live import LiveConfig, Spectating
from referee.rules import RuleSet
from referee.tournament.config import load_config
from referee.tournament.runner import TournamentRun, schedule
from referee.tournament.store import SqliteStore


async def play(
    config: Any, out: Path, spectators: int, queue: int, delay: float = 0.0
) -> dict[str, Any]:
    """One tournament; with ``spectators`` >= 0, with the live page (and that many clients)."""
    extra: dict[str, Any] = {}
    clients: asyncio.subprocess.Process | None = None
    live = None
    if spectators >= 0:
        limits = LiveConfig(delay=delay, max_spectators=spectators + 8, queue_bytes=queue)
        live = Spectating("127.0.0.1", 0, limits, out / "tournament.sqlite", schedule(config))
        await live.__aenter__()
        if spectators:
            clients = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.live_clients", live.url, str(spectators),
                stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
        while clients is not None and len(live.hub.spectators) < spectators + 1:
            if clients.returncode is not None:
                raise RuntimeError("the spectator clients exited")
            await asyncio.sleep(0.05)
        extra = {"observe": live.observe, "on_game": live.on_game}
    run = TournamentRun(config, out, **extra)
    start = time.perf_counter()
    try:
        await run.run()
    finally:
        seconds = time.perf_counter() - start
        if live is not None:
            stats: dict[str, Any] = {"dropped": live.hub.dropped, "peak": live.hub.peak}
            await live.__aexit__(None, None, None)
        if clients is not None:
            clients.terminate()
            out_text, _ = await clients.communicate()
            got = json.loads(out_text.decode().strip().splitlines()[-1])
            rates = [b / max(t, 1e-3) for b, t in zip(got["bytes"], got["seconds"], strict=True)]
            stats["spectator_kb_per_s"] = round(statistics.mean(rates) / 1000, 1)
            stats["spectator_kb"] = round(statistics.mean(got["bytes"]) / 1000, 1)
    with SqliteStore.open(out / "tournament.sqlite") as store:
        rows = [r.result for r in store.games() if r.result is not None]
        faults = len(store.faults())
    decisions = sum(sum(r["decisions"]) for r in rows)
    used = sum(sum(r["time_used"]) for r in rows)
    figures = {
        "games": len(rows),
        "lag_max_ms": round(run.lag_max * 1000, 2),
        "charged_us_per_decision": round(used / decisions * 1e6, 1),
        "decisions_per_s": round(decisions / seconds),
        "faults": faults,
    }
    if live is not None:
        figures.update(stats)
    return figures


def summary(runs: list[dict[str, Any]], key: str) -> dict[str, float]:
    values = [r[key] for r in runs]
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--spectators", type=int, default=16)
    parser.add_argument("--queue-mib", type=float, default=16.0,
                        help="a spectator's queue (default 16 MiB: readers keep up)")  # fmt: skip
    parser.add_argument("--config", type=Path, help="a tournament's TOML (--games a pairing)")
    parser.add_argument("--delay", type=float, default=0.0, help="the card delay (default 0)")
    parser.add_argument("--arms", default="off,page,on", help="which of off,page,on to run")
    args = parser.parse_args()
    config = make_config(2, args.games, RuleSet.preset("standard"))
    if args.config is not None:
        config = replace(load_config(args.config), games_per_pairing=args.games)
    arms = args.arms.split(",")
    configure(level="warning", json_file=None, console=False)
    series: dict[str, list[dict[str, Any]]] = {"off": [], "page": [], "on": []}
    counts = {"off": -1, "page": 0, "on": args.spectators}
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        for round_no in range(args.rounds + 1):  # round 0 warms up and is not counted
            order = ["off", "page", "on"] if round_no % 2 else ["on", "page", "off"]
            for name in [arm for arm in order if arm in arms]:
                out = Path(tmp) / f"r{round_no}-{name}"
                queue = int(args.queue_mib * 2**20)
                figures = asyncio.run(play(config, out, counts[name], queue, args.delay))
                if round_no:
                    series[name].append(figures)
                print(f"round {round_no} {name}: {figures}", file=sys.stderr)
    keys = ("lag_max_ms", "charged_us_per_decision", "decisions_per_s")
    series = {name: runs for name, runs in series.items() if runs}
    on = series.get("on", [])
    result = {
        "spectators": args.spectators,
        "games": args.games,
        "config": str(args.config or "two instant bots"),
        "delay": args.delay,
        "rounds": args.rounds,
        **{name: {k: summary(runs, k) for k in keys} for name, runs in series.items()},
        "faults": {name: sum(r["faults"] for r in runs) for name, runs in series.items()},
        "dropped": [r["dropped"] for r in on],
        "spectator_kb_per_s": summary(on, "spectator_kb_per_s") if on else None,
        "spectator_kb": summary(on, "spectator_kb") if on else None,
    }
    for key in keys:
        cells = [f"{n} {result[n][key]['median']:>8} ({result[n][key]['min']}-"
                 f"{result[n][key]['max']})" for n in series]  # fmt: skip
        print(f"{key:24} " + "   ".join(cells), file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
