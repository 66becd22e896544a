"""Tournament throughput with instant bots as concurrency grows, and the referee's share of it.

Run: ``python -m bench.bench_tournament [--levels 1,2,4,8,16,32] [--games-per-level N]``
(``--bot CMD`` replaces the instant bot). For every concurrency level a two-bot round-robin
(duplicate deals, both bots ``bench.instant_bot``, generous clocks) is played by
:class:`TournamentRun` into a fresh directory, as the ``tournament`` command does (INFO logging
to a JSON file, no console).
Measured per level: aggregate decisions/s (decisions summed from the stored results over the
run's wall time); CPU of this process (the referee) and of the reaped bot processes
(``RUSAGE_CHILDREN``: the runner terminates and reaps every bot; the benchmark's own sampling
below runs on the referee's main thread, and its CPU is measured and subtracted, reported as
``sampling_us_per_decision``), hence the referee's share of
the CPU used, the cores used and the referee's own cores, and both per decision in µs; peak RSS
of this process (sampled every 50 ms) over the RSS before the first run, per concurrent game
(levels run in the given order, both series at each level, so the high-water mark grows with
the level; the growth per added game since the previous level is given too, as the better per-
game estimate); the event loop's worst scheduling lag. Machine-wide busy cores, idle and steal
(``/proc/stat``, tick-sampled) tell a noisy or under-used machine apart from a saturated one.

Every game starts two Python bot processes, so these series are measured and labelled:

- ``with_startup``: standard rules (target 100), short games, start-up cost included; bots
  that ask for ``multi_match`` (the instant bot does) are kept between a pairing's games, as
  ``tournament.reuse_bots`` does by default (``reused`` counts the seats that were);
- ``fresh`` (with ``--fresh``): the same with ``reuse_bots = false``, two new processes for
  every game;
- ``amortised``: the same with a high target (``--long-target``, default 500) so each game
  has ~5x more decisions (~5,000) and process start-up is amortised. (A target above ~1000
  changes nothing: a tournament game stops at ``MatchConfig.max_hands_per_game``, 200 hands.)
- ``amortised_tcp`` (with ``--tcp``): the amortised series with the bots on TCP loopback
  instead of the referee's private ipc:// endpoint;
- ``control`` (unless ``--no-control``): the same bots, as many pairs as amortised games ran
  at once (``min(level, games)``) playing the same games: each pair answers as many requests
  as one of those games had decisions, then goes on with the next game left, as the
  tournament's slots do (so the bots' start-up is amortised alike and the run ends with the
  same tail of fewer games), driven by :mod:`bench.raw_referee`,
  a do-nothing referee (one blocking ROUTER, no rules): the cost of merely routing the
  messages, which a real referee can only approach;
- ``floor`` (with the control): the same do-nothing loop on the referee's own transport
  (:class:`~referee.net.transport.RouterTransport` on asyncio, push style): the least CPU any
  referee built on this transport can spend, with no rules at all. The control table sets
  both beside ``amortised``.

``--sandbox LEVEL`` sets the bots' sandbox (default ``auto``, as the ``tournament`` command):
a sandboxed bot is not reaped by this process, so ``bots us`` counts it only with ``none``.

``--rounds R`` repeats every level R times (levels innermost) and reports per-level medians.
Defaults (levels 1..32, ``max(8, 2 x level)`` short games and ``max(2, level)`` long games
per level, one round, with the control and the floor) take about six minutes on a 2-core machine.

Prints one JSON object on stdout and readable tables on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import os
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import raw_referee
from bench.common import cpu_figures, cpu_seconds, machine, rss_kib, thread_names, thread_seconds
from bench.tournament_tables import add_marginal, control_table, median_rows, table
from referee.cli.logs import configure
from referee.match.clock import TimeControl
from referee.rules import RuleSet
from referee.tournament.config import BotEntry, TournamentConfig
from referee.tournament.runner import TournamentRun
from referee.tournament.store import SqliteStore

INSTANT = f"{sys.executable} -m bench.instant_bot"
CLOCK = TimeControl(move=5.0, bank=60.0, startup=20.0, heartbeat=5.0)
SAMPLE_SECONDS = 0.05
CONTROL_DECISIONS = 5000
"""Requests per bot pair in the control series (an amortised game has ~5,000 decisions)."""


def parse_levels(text: str) -> list[int]:
    """Comma-separated positive concurrency levels, e.g. ``1,2,4``."""
    levels = [int(part) for part in text.split(",") if part.strip()]
    if not levels or min(levels) < 1 or max(levels) > 256:
        raise argparse.ArgumentTypeError("levels must be integers between 1 and 256")
    return levels


def positive(text: str) -> int:
    """A positive integer option value."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def even(count: int) -> int:
    """``count`` rounded up to an even number (duplicate deals play games in pairs)."""
    return count + count % 2


def make_config(
    level: int,
    games: int,
    rules: RuleSet,
    bot: str = INSTANT,
    *,
    reuse: bool = True,
    sandbox: str = "auto",
) -> TournamentConfig:
    """Two copies of ``bot`` (default: the instant bot), round-robin with duplicate deals,
    ``games`` games, ``level`` at once, bots kept between games unless ``reuse`` is False."""
    return TournamentConfig(
        name=f"bench-c{level}",
        bots=(BotEntry("alpha", bot, sandbox=sandbox), BotEntry("beta", bot, sandbox=sandbox)),
        format="round-robin",
        games_per_pairing=even(games),
        duplicate=True,
        seed=level,
        concurrency=level,
        rules=rules,
        time=CLOCK,
        reuse_bots=reuse,
    )


def machine_ticks() -> tuple[int, int, int]:
    """Machine-wide (total, idle + iowait, steal) CPU ticks from ``/proc/stat`` (0s elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0, 0, 0
    ticks = [int(value) for value in fields[:8]]
    return sum(ticks), ticks[3] + ticks[4], ticks[7]


async def run_sampled(run: TournamentRun) -> tuple[int, dict[str, float], float]:
    """Run the tournament while sampling this process's RSS and its threads' CPU; return the
    peak RSS in KiB, the CPU seconds of the main thread (``main``) and of libzmq's threads
    (``ZMQbg/IO/0``, ``ZMQbg/Reaper``: counted up to their last sample, at most 50 ms before
    they end), and the CPU seconds the sampling itself took on the main thread, which the
    caller subtracts from the referee's. Only those threads are read: reading every thread
    (one idle ``waitpid`` thread per bot process, from asyncio's child watcher) cost more than
    2 ms per sample at 32 games."""
    main_id = threading.get_native_id()
    before = set(thread_names())
    watched = {main_id: "main"}
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    peak = rss_kib()
    cost = 0.0

    def take() -> None:
        nonlocal peak, cost
        began = time.thread_time()
        peak = max(peak, rss_kib())
        if len(watched) < 3:  # libzmq's two threads not seen yet: look for them
            for tid, name in thread_names().items():
                if name.startswith("ZMQbg/") and tid not in before:
                    watched.setdefault(tid, name)
        for tid in watched:
            seconds = thread_seconds(tid)
            if seconds is not None:
                first.setdefault(tid, seconds if tid == main_id else 0.0)
                last[tid] = seconds
        cost += time.thread_time() - began

    async def sample() -> None:
        while True:
            take()
            await asyncio.sleep(SAMPLE_SECONDS)

    sampler = asyncio.ensure_future(sample())
    try:
        await run.run()
    finally:
        sampler.cancel()
    take()
    threads = {watched[tid]: last[tid] - first[tid] for tid in last}
    threads["main"] -= cost
    return peak, threads, cost


def measure(
    config: TournamentConfig, out: Path, base_rss: int, local_ipc: bool = True
) -> dict[str, Any]:
    """Play one tournament into ``out`` and return its figures (see the module docstring)."""
    gc.collect()
    transport = "ipc" if local_ipc else "tcp"
    run = TournamentRun(dataclasses.replace(config, local_transport=transport), out)
    self0, children0 = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
    ticks0 = machine_ticks()
    start = time.perf_counter()
    peak, threads, sampling = asyncio.run(run_sampled(run))
    seconds = time.perf_counter() - start
    total, idle, steal = (b - a for a, b in zip(ticks0, machine_ticks(), strict=True))
    cpus = os.cpu_count() or 1
    referee = cpu_seconds(resource.RUSAGE_SELF) - self0 - sampling
    bots = cpu_seconds(resource.RUSAGE_CHILDREN) - children0
    with SqliteStore.open(out / "tournament.sqlite") as store:
        rows = store.games()
        faults = len(store.faults())
    undone = [row.spec.game_id for row in rows if row.status != "done" or row.result is None]
    if undone:
        raise RuntimeError(f"concurrency {config.concurrency}: games not played: {undone}")
    lengths = [sum(row.result["decisions"]) for row in rows if row.result is not None]
    decisions = sum(lengths)
    level = config.concurrency
    return {
        "concurrency": level,
        "games": len(rows),
        "decisions": decisions,
        "game_decisions": lengths,
        **cpu_figures(referee, bots, decisions, seconds),
        "cores_used": round((referee + bots) / seconds, 2),
        "referee_cores": round(referee / seconds, 2),
        "rss_per_game_kib": round((peak - base_rss) / level),
        "rss_peak_kib": peak,
        "lag_max_ms": round(run.lag_max * 1000, 1),
        "machine_busy_cores": round(cpus * (total - idle - steal) / total, 2) if total else None,
        "machine_idle": round(idle / total, 3) if total else None,
        "machine_steal": round(steal / total, 3) if total else None,
        "faults": faults,
        "reused": run.reused,
        "sampling_us_per_decision": round(sampling / decisions * 1e6, 2),
        "referee_threads_us_per_decision": {
            name: round(seconds / decisions * 1e6, 1) for name, seconds in sorted(threads.items())
        },
    }


def main() -> None:
    """Run both series over every level and print the JSON summary and the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--levels", type=parse_levels, default=[1, 2, 4, 8, 16, 32])
    parser.add_argument(
        "--games-per-level",
        type=positive,
        default=None,
        help="games per level in the with_startup series (default max(8, 2 x level))",
    )
    parser.add_argument(
        "--long-games-per-level",
        type=int,
        default=None,
        help="games per level in the amortised series (default max(2, level); 0 skips it)",
    )
    parser.add_argument("--long-target", type=positive, default=500, help="amortised series target")
    parser.add_argument(
        "--bot",
        default=INSTANT,
        help="bot command for both seats (default: the instant bot; e.g. a sample bot)",
    )
    parser.add_argument(
        "--tcp",
        action="store_true",
        help="also run the amortised series with local bots on TCP loopback (amortised_tcp)",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="also run the with_startup series with two new bot processes per game (fresh)",
    )
    parser.add_argument(
        "--sandbox",
        default="auto",
        help="the bots' sandbox level (default auto); with none, the bots' CPU is counted too"
        " (a sandbox's bots are not reaped by this process, so their CPU shows as 0)",
    )
    parser.add_argument(
        "--rounds", type=positive, default=1, help="repeat every level; medians are reported"
    )
    parser.add_argument(
        "--no-control",
        action="store_true",
        help="skip the control series (bench.raw_referee: same bots, a do-nothing referee)",
    )
    args = parser.parse_args()
    if args.long_games_per_level is not None and args.long_games_per_level < 0:
        parser.error("--long-games-per-level must be 0 (skip) or positive")
    standard = RuleSet.preset("standard")

    def short_games(level: int) -> int:
        return int(args.games_per_level or max(8, 2 * level))

    # label -> (rules, games per level, local bots over ipc, keep bots between games)
    series: dict[str, tuple[RuleSet, Callable[[int], int], bool, bool]] = {
        "with_startup": (standard, short_games, True, True),
    }
    if args.fresh:
        series["fresh"] = (standard, short_games, True, False)
    if args.long_games_per_level != 0:
        long_rules = dataclasses.replace(standard, target=args.long_target)

        def long_games(level: int) -> int:
            return int(args.long_games_per_level or max(2, level))

        series["amortised"] = (long_rules, long_games, True, True)
        if args.tcp:
            series["amortised_tcp"] = (long_rules, long_games, False, True)
    controls = {} if args.no_control else {"control": "blocking", "floor": "referee"}
    runs: dict[str, list[list[dict[str, Any]]]] = {label: [] for label in [*series, *controls]}
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        root = Path(tmp)
        configure(level="info", json_file=root / "referee.log.jsonl", console=False)
        gc.collect()
        base_rss = rss_kib()
        for rnd in range(args.rounds):
            for per_round in runs.values():
                per_round.append([])
            # Levels outermost: the RSS high-water mark then grows with the level in both
            # series (memory figures are taken from the first round only).
            for level in args.levels:
                for label, (rules, games, ipc, reuse) in series.items():
                    config = make_config(
                        level, games(level), rules, args.bot, reuse=reuse, sandbox=args.sandbox
                    )
                    out = root / f"{label}-c{level}-r{rnd}"
                    row = measure(config, out, base_rss, local_ipc=ipc)
                    runs[label][-1].append(row)
                    print(
                        f"round {rnd} {label} c={level}: {row['decisions_per_s']} decisions/s "
                        f"in {row['seconds']:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
                pairs, per_pair = control_shape(level, runs.get("amortised"))
                for label, transport in controls.items():
                    endpoint = f"ipc://{root}/{label}-c{level}-r{rnd}.sock"
                    row = raw_referee.run(pairs, per_pair, args.bot, endpoint, transport)
                    runs[label][-1].append(row)
                    print(
                        f"round {rnd} {label} c={level}: {row['decisions_per_s']} decisions/s",
                        file=sys.stderr,
                        flush=True,
                    )
    rows = {label: median_rows(per_round) for label, per_round in runs.items()}
    control, floor = rows.pop("control", []), rows.pop("floor", [])
    result: dict[str, Any] = {
        "machine": machine(),
        "cpus": os.cpu_count(),
        "bot": args.bot,
        "clock": CLOCK.to_wire(),
        "rss_base_kib": base_rss,
        "rounds": args.rounds,
        "series": {},
    }
    for label, (rules, *_rest) in series.items():
        add_marginal(rows[label])
        rules_text = f"{rules.name} target {rules.target}"
        result["series"][label] = {"rules": rules_text, "levels": rows[label]}
        print(table(f"{label}: {rules_text}", rows[label]), file=sys.stderr)
    if control:
        result["series"]["control"] = {"rules": "none (bench.raw_referee)", "levels": control}
        result["series"]["floor"] = {
            "rules": "none (bench.raw_referee --transport referee)",
            "levels": floor,
        }
        print(control_table(control, floor, rows.get("amortised", [])), file=sys.stderr)
    print(json.dumps(result, indent=2))


def control_shape(
    level: int, amortised: list[list[dict[str, Any]]] | None
) -> tuple[int, int | list[int]]:
    """Pairs and their work for the control at ``level``: from this round's amortised row at
    this level, as many pairs as those games ran at once and the games' own lengths (each
    pair answers as many requests as a game had decisions, and goes on with the next game
    left, as the tournament's slots do), so the control plays the same workload, its tail
    included; ``level`` pairs of :data:`CONTROL_DECISIONS` without that series."""
    if not amortised or not amortised[-1] or amortised[-1][-1]["concurrency"] != level:
        return level, CONTROL_DECISIONS
    row = amortised[-1][-1]
    return min(level, row["games"]), list(row["game_decisions"])


if __name__ == "__main__":
    main()
