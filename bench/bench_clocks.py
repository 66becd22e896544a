"""Spurious timeouts under load: instant bots, a tight deadline, many games at once.

Run: ``python -m bench.bench_clocks --games 256 --levels 1,8,32 --move 50 [--grace 0]
[--rounds R] [--ab] [--ab-waits]``. Every round plays, for each level, a two-bot round-robin of
``--games`` games (``bench.instant_bot``, duplicate deals, bots kept between a pairing's
games) with ``move`` ms per decision, no bank and ``grace`` ms: any timeout is spurious,
since the bot answers at once. ``--fresh`` starts two new processes for every game (start-up
under load every game); ``--nice N`` starts the bots N steps below the referee's priority
instead of the default +10 (0: the same priority as the referee and the machine's other
work).

Recorded for every timeout: the request's number within its seat's match (``decision``: 0 is
the seat's first request), the game and hand, how many bot processes were being started at
that moment and in the second before, and the event loop's lag around it (the worst lag seen
by a 5 ms ticker in the deadline's window and 100 ms after). Recorded per run: the decisions,
the timeouts per 1,000 games, the loop's lag (median, p99, max of the ticker), the time
charged per decision (median, p99, max; an instant bot's reply is charged the bot's own
reaction time, the referee's busy time left out), and the machine's load average.

``--ab`` alternates each run with a run whose arrival stamps are the time the loop read the
bytes (:mod:`referee.net.turns` disabled), interleaved, to show what leaving the loop's busy
time out is worth. ``--ab-waits`` alternates each run with one whose clocks ignore a wait in
progress at a deadline (:meth:`RunQueueMeter.runnable` patched to report no runnable task;
referee/match/fairclock.py, "A wait in progress"), to show what that rule is worth.

``--load`` runs everything beside a synthetic host load that the benchmark starts itself
(:mod:`bench.hogs`: ``--hogs`` CPU hogs at nice 0 outside the referee, default twice the
cores, each ending by itself after ``--load-seconds``, and killed when the benchmark ends).
``--attack N`` then plays, without and with that load, N one-hand games (kept processes,
forfeit-game policy) of each of two computing bots against the instant bot: one that computes
100 ms of CPU per decision (``tests/bots/spin_bot.py 0.1``) and one that does the same while 8
threads spin beside it (``spin_bot.py 0.1 8``), against the same deadline: every request they
get should time out, load or not (docs/tournaments.md, "Fair clocks"). The fair clocks' cost
is in ``samples_per_decision`` (how often the counters were read) and ``sample_us`` (what one
reading costs, timed apart on a live bot's seat).

Prints one JSON object on stdout and a summary per run on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import fcntl
import json
import os
import statistics
import sys
import tempfile
import termios
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.bench_tournament import make_config, parse_levels, positive
from bench.common import machine, percentile
from bench.hogs import hogs
from referee.cli.logs import configure
from referee.match.bots import BotSpec
from referee.match.clock import Clock, TimeControl
from referee.match.config import MatchConfig
from referee.match.fairclock import FairClock
from referee.match.faults import FaultKind, FaultPolicy
from referee.match.runner import run_match
from referee.match.seat_base import SeatBase
from referee.net import process, transport
from referee.net.runqueue import RunQueueMeter
from referee.rules import RuleSet
from referee.tournament.runner import TournamentRun

TICK = 0.005


class Probe:
    """Watches one run: loop lag, bot starts, charged times and timeouts."""

    def __init__(self) -> None:
        self.lags: collections.deque[tuple[float, float]] = collections.deque(maxlen=200_000)
        self.starting = 0
        self.started: list[float] = []
        self.charged: list[float] = []
        self.timeouts: list[dict[str, Any]] = []
        self.samples = 0
        self.sample_seconds = 0.0

    async def tick(self) -> None:
        """Record the loop's lag every :data:`TICK` seconds."""
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(TICK)
            now = loop.time()
            self.lags.append((now, max(0.0, now - before - TICK)))

    def lag_around(self, start: float, end: float) -> float:
        """The worst lag the ticker saw between ``start`` and ``end``."""
        return max((lag for at, lag in self.lags if start <= at <= end), default=0.0)


def _in_reply() -> bool:
    """Whether the timeout being recorded was found measuring a reply (not at a deadline)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "_fair_elapsed":
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _bot_tasks(fair: FairClock | None) -> list[str]:
    """Each task of the timed-out seat at that moment: its state and where it sleeps
    (``/proc/PID/task/TID/stat`` and ``wchan``), to tell a bot waiting for input from one
    blocked on something else."""
    meter = None if fair is None else getattr(fair, "_meter", None)
    if not isinstance(meter, RunQueueMeter):
        return []
    found = []
    for tid, task in meter.tasks():
        try:
            with open(f"{task}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0].decode()
            with open(f"{task}/wchan") as wchan:
                found.append(f"{tid} {state} {wchan.read() or '-'}")
        except OSError:
            continue
    return found


def _socket_queues(seat: SeatBase) -> dict[str, Any]:
    """The seat's connection at the timeout: bytes the kernel holds for the referee to read
    (``SIOCINQ``), bytes the bot has not read yet (``SIOCOUTQ``), what the referee's transport
    still buffers to write, and whether its reading is paused."""
    outbox = seat._outbox
    router = getattr(outbox._send_bytes, "__self__", None)
    conn = None if router is None else getattr(router, "_peers", {}).get(outbox.peer)
    transport = None if conn is None else conn.transport
    if conn is None or transport is None:
        return {}
    sock = transport.get_extra_info("socket")
    found: dict[str, Any] = {"write_buffer": transport.get_write_buffer_size(),
                             "paused": getattr(conn, "_paused", None),
                             "parse_buffered": conn.conn.buffered}  # fmt: skip
    queues = (("unread_by_referee", termios.FIONREAD), ("unread_by_bot", termios.TIOCOUTQ))
    for name, request in queues:
        try:
            found[name] = int.from_bytes(fcntl.ioctl(sock.fileno(), request, b"\0\0\0\0"), "little")
        except OSError as err:
            found[name] = str(err)
    return found


@contextlib.contextmanager
def probing(
    probe: Probe, stamps: bool, nice: int | None = None, *, waits: bool = True
) -> Iterator[None]:
    """Patch the referee to report to ``probe`` (and, unless ``stamps``, stamp arrivals
    when the loop reads the bytes; with ``nice``, start bots that many steps below the
    referee's priority instead of the default; unless ``waits``, let the clocks see no wait
    in progress); undone on exit."""
    saved_fault, saved_charge = SeatBase.record_fault, Clock.charge
    saved_start, saved_arrival = process.BotProcess.start, transport.RouterTransport.arrival
    saved_sample, saved_runnable = FairClock._sample, RunQueueMeter.runnable

    def record_fault(self: SeatBase, kind: FaultKind, detail: str, **kw: Any) -> Any:
        if kind is FaultKind.TIMEOUT and self.fault is None:
            now = time.monotonic()
            window = self.clock.time_left + self.control.grace
            recent = sum(1 for at in probe.started if now - at <= 1.0)
            probe.timeouts.append(
                {"at": now, "decision": self.clock.decisions, "game": self.game,
                 "hand": self.hand, "starting": probe.starting, "started_last_s": recent,
                 "window": (now - window - 0.01, now + 0.1), "detail": detail,
                 "found": "at a reply" if _in_reply() else "at the deadline",
                 "bot_tasks": _bot_tasks(getattr(self, "fair", None)),
                 "socket": _socket_queues(self)}
            )  # fmt: skip
        return saved_fault(self, kind, detail, **kw)

    def charge(self: Clock, elapsed: float) -> None:
        probe.charged.append(elapsed)
        saved_charge(self, elapsed)

    def sample(self: FairClock) -> Any:
        probe.samples += 1
        started = time.perf_counter()
        try:
            return saved_sample(self)
        finally:
            probe.sample_seconds += time.perf_counter() - started

    async def start(*args: Any, **kwargs: Any) -> Any:
        probe.starting += 1
        probe.started.append(time.monotonic())
        if nice is not None:
            kwargs["nice"] = nice
        try:
            return await saved_start(*args, **kwargs)
        finally:
            probe.starting -= 1

    def read_time(self: transport.RouterTransport) -> float:
        return self.loop.time()

    def no_runnable(self: RunQueueMeter) -> int:
        return 0

    SeatBase.record_fault = record_fault  # type: ignore[method-assign]
    Clock.charge = charge  # type: ignore[method-assign]
    FairClock._sample = sample  # type: ignore[method-assign]
    process.BotProcess.start = start  # type: ignore[method-assign]
    if not stamps:
        transport.RouterTransport.arrival = read_time  # type: ignore[method-assign]
    if not waits:
        RunQueueMeter.runnable = no_runnable  # type: ignore[method-assign]
    try:
        yield
    finally:
        SeatBase.record_fault = saved_fault  # type: ignore[method-assign]
        Clock.charge = saved_charge  # type: ignore[method-assign]
        FairClock._sample = saved_sample  # type: ignore[method-assign]
        process.BotProcess.start = saved_start  # type: ignore[method-assign]
        transport.RouterTransport.arrival = saved_arrival  # type: ignore[method-assign]
        RunQueueMeter.runnable = saved_runnable  # type: ignore[method-assign]


async def play(run: TournamentRun, probe: Probe) -> None:
    """Play the tournament with the lag ticker running."""
    ticker = asyncio.ensure_future(probe.tick())
    try:
        await run.run()
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker


def ms(values: list[float], fraction: float) -> float:
    """A percentile of ``values`` (seconds) in ms, 0 when empty."""
    return round(percentile(sorted(values), fraction) * 1000, 2) if values else 0.0


def measure(
    level: int, args: argparse.Namespace, *, stamps: bool, waits: bool = True
) -> dict[str, Any]:
    """One tournament at concurrency ``level``; its figures."""
    control = TimeControl(
        move=args.move / 1000, bank=0.0, grace=args.grace / 1000, startup=30.0, heartbeat=5.0
    )
    config = make_config(level, args.games, RuleSet.preset("standard"), reuse=not args.fresh)
    config = dataclasses.replace(config, time=control, seed=args.seed)
    probe = Probe()
    load = os.getloadavg()[0]
    patched = probing(probe, stamps, args.nice, waits=waits)
    with tempfile.TemporaryDirectory(prefix="bench-clocks-") as tmp, patched:
        configure(level="info", json_file=Path(tmp) / "referee.log.jsonl", console=False)
        run = TournamentRun(config, Path(tmp))
        started = time.perf_counter()
        asyncio.run(play(run, probe))
        seconds = time.perf_counter() - started
    lags = [lag for _, lag in probe.lags]
    timeouts = [
        {k: v for k, v in t.items() if k not in ("at", "window")}
        | {"lag_around_ms": round(probe.lag_around(*t["window"]) * 1000, 1)}
        for t in probe.timeouts
    ]
    games = config.games_per_pairing
    return {
        "level": level,
        "stamps": "turns" if stamps else "read",
        "waits": "counted" if waits else "ignored",
        "nice": "default (+10)" if args.nice is None else args.nice,
        "games": games,
        "seconds": round(seconds, 1),
        "decisions": len(probe.charged),
        "load": args.hogs_running,
        "timeouts": len(timeouts),
        "samples_per_decision": round(probe.samples / max(1, len(probe.charged)), 3),
        "sample_us": round(1e6 * probe.sample_seconds / max(1, probe.samples), 1),
        "timeouts_per_1000_games": round(1000 * len(timeouts) / games, 1),
        "first_two_requests": sum(1 for t in timeouts if t["decision"] < 2),
        "lag_ms": {"median": ms(lags, 0.5), "p99": ms(lags, 0.99), "max": ms(lags, 1.0)},
        "charged_ms": {
            "median": ms(probe.charged, 0.5),
            "p99": ms(probe.charged, 0.99),
            "max": ms(probe.charged, 1.0),
        },
        "load_before": round(load, 1),
        "load_after": round(os.getloadavg()[0], 1),
        "timeout_details": timeouts[:50],
    }


SPIN_BOT = Path(__file__).resolve().parent.parent / "tests" / "bots" / "spin_bot.py"
ATTACKERS = {"computes_100ms": "0.1", "computes_100ms_8_threads": "0.1 8"}


def attack(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """``args.attack`` one-hand games of the computing bot ``name`` against the instant bot:
    how many of its requests timed out and how many it answered in time (should be none)."""
    control = TimeControl(
        move=args.move / 1000, bank=0.0, grace=args.grace / 1000, startup=30.0, heartbeat=5.0
    )
    config = MatchConfig(
        games=args.attack, time=control, seed=args.seed, policy=FaultPolicy.FORFEIT_GAME,
        max_hands_per_game=1,
    )  # fmt: skip
    specs = (
        BotSpec.parse(f"{sys.executable} {SPIN_BOT} {ATTACKERS[name]}"),
        BotSpec.parse(f"{sys.executable} -m bench.instant_bot --sdk"),
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-clocks-") as tmp:
        configure(level="warning", json_file=Path(tmp) / "referee.log.jsonl", console=False)
        result = asyncio.run(run_match(config, specs, out_dir=None, kill_grace=0.5))
    seat = result.seats[0]
    timeouts = [f for f in seat.faults if f.kind is FaultKind.TIMEOUT]
    return {
        "bot": name,
        "load": args.hogs_running,
        "deadline_ms": args.move + args.grace,
        "games": result.games_played,
        "requests_timed_out": len(timeouts),
        "requests_answered": seat.decisions,
        "other_faults": len(seat.faults) - len(timeouts),
        "seconds": round(time.perf_counter() - started, 1),
        "details": [f.detail for f in timeouts[:5]],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; JSON on stdout, a summary per run on stderr."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--levels", type=parse_levels, default=[1, 8, 32])
    parser.add_argument("--games", type=positive, default=64, help="games per run")
    parser.add_argument("--move", type=positive, default=50, help="ms per decision")
    parser.add_argument("--grace", type=int, default=0, help="grace ms added to the deadline")
    parser.add_argument("--rounds", type=positive, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fresh", action="store_true", help="new bot processes every game")
    parser.add_argument("--ab", action="store_true", help="also runs with read-time stamps")
    parser.add_argument(
        "--ab-waits", action="store_true", help="also runs that ignore a wait in progress"
    )
    parser.add_argument("--nice", type=int, help="bots' nice steps below the referee")
    parser.add_argument("--load", action="store_true", help="run beside CPU hogs at nice 0")
    parser.add_argument("--hogs", type=positive, help="hogs with --load (default 2 x cores)")
    parser.add_argument("--load-seconds", type=positive, default=900, help="hogs' lifetime")
    parser.add_argument("--attack", type=int, default=0, help="games per computing bot")
    args = parser.parse_args(argv)
    args.hogs_running = 0
    attacks: list[dict[str, Any]] = []
    if args.attack:
        for name in ATTACKERS:
            attacks.append(attack(name, args))
            print(f"no load: {attacks[-1]}", file=sys.stderr)
    with contextlib.ExitStack() as stack:
        if args.load:
            args.hogs_running = stack.enter_context(hogs(args.hogs, seconds=args.load_seconds))
        runs = levels(args)
        if args.attack and args.load:
            for name in ATTACKERS:
                attacks.append(attack(name, args))
                print(f"load: {attacks[-1]}", file=sys.stderr)
    summary: dict[str, Any] = {}
    for row in runs:
        key = f"c{row['level']}-{row['stamps']}-waits-{row['waits']}"
        summary.setdefault(key, []).append(row["timeouts"])
    report = {
        "machine": machine(),
        "deadline_ms": args.move + args.grace,
        "games_per_run": args.games,
        "hogs": args.hogs_running,
        "timeouts_per_run": summary,
        "median_timeouts": {k: statistics.median(v) for k, v in summary.items()},
        "runs": runs,
        "attacks": attacks,
    }
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


def variants(args: argparse.Namespace) -> list[tuple[bool, bool]]:
    """(stamps, waits) of the runs at each level: the referee as it is first, then its
    read-time twin (``--ab``) and its twin that ignores a wait in progress (``--ab-waits``)."""
    runs = [(True, True)]
    if args.ab:
        runs.append((False, True))
    if args.ab_waits:
        runs.append((True, False))
    return runs


def levels(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every round's run at every level (and its twins, :func:`variants`)."""
    runs: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for level in args.levels:
            for stamps, waits in variants(args):
                row = measure(level, args, stamps=stamps, waits=waits)
                runs.append(row)
                print(
                    f"c={level:<3} {row['stamps']:<5} waits {row['waits']} games={row['games']} "
                    f"hogs={row['load']} timeouts={row['timeouts']} samples/decision "
                    f"{row['samples_per_decision']} ({row['sample_us']} us) "
                    f"(first two requests {row['first_two_requests']})"
                    f" lag ms {row['lag_ms']} charged ms {row['charged_ms']} "
                    f"load {row['load_before']}->{row['load_after']} {row['seconds']} s",
                    file=sys.stderr,
                )
    return runs


if __name__ == "__main__":
    sys.exit(main())
