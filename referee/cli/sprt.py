"""The ``sprt`` command: duplicate pairs between a candidate and a baseline until the exact
GSPRT decides (docs/tournaments.md, docs/statistics.md); resumable from its output directory."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import TextIO

from referee.cli.inputs import rules_option
from referee.cli.tournament import failed_text, no_start, run_with_signals
from referee.match import FaultPolicy, TimeControl
from referee.net.keys import KeyPair
from referee.tournament.config import BotEntry, TournamentConfig
from referee.tournament.report import estimate_text
from referee.tournament.runner import GameOutcome, TournamentRun
from referee.tournament.stats import Pentanomial, SprtResult, estimate_pairs, sprt_pairs
from referee.tournament.store import SqliteStore, StoreError

__all__ = ["run_sprt", "verdict_text"]

EXIT_OK, EXIT_USAGE, EXIT_NO_START, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 2, 3, 70, 130


def _sprt(args: argparse.Namespace, pairs: Pentanomial) -> SprtResult:
    return sprt_pairs(pairs, elo0=args.elo0, elo1=args.elo1, alpha=args.alpha, beta=args.beta,
                      min_pairs=args.min_pairs, elo_model=args.elo_model)  # fmt: skip


PROGRESS_PAIRS, PROGRESS_SECONDS = 10, 10.0
"""A progress line every this many pairs, or sooner once this many seconds have passed since
the last one (at a pair's end)."""


class SprtProgress:
    """Plain progress lines on ``stream`` (stdout; no carriage return, so a redirected run's
    log shows the test advancing too): where the test stands, every :data:`PROGRESS_PAIRS`
    pairs or :data:`PROGRESS_SECONDS` seconds. Its :meth:`on_game` passes each game on to the
    tracker (a resumed run's games, counted by the tracker alone, print nothing)."""

    def __init__(self, tracker: _SprtTracker, stream: TextIO | None = None) -> None:
        self.tracker = tracker
        self.stream = stream or sys.stdout
        self.last_at = time.monotonic()
        self.last_pairs = tracker.pairs.pairs

    def on_game(self, outcome: GameOutcome) -> None:
        """Account the game; print a line when a pair completes and one is due."""
        self.tracker.on_game(outcome)
        pairs, result, now = self.tracker.pairs, self.tracker.result, time.monotonic()
        if result is None or pairs.pairs == self.last_pairs:
            return
        if pairs.pairs - self.last_pairs < PROGRESS_PAIRS and now - self.last_at < PROGRESS_SECONDS:
            return
        self.last_at, self.last_pairs = now, pairs.pairs
        print(f"sprt: {pairs.games} games ({pairs.pairs} pairs), pentanomial {pairs.counts}, "
              f"score {pairs.mean:.3f}, LLR {result.llr:.2f} (bounds {result.lower_bound:.2f}, "
              f"{result.upper_bound:.2f})", file=self.stream, flush=True)  # fmt: skip


class _SprtTracker:
    """Accumulates complete duplicate pairs and stops the run once the test decides."""

    def __init__(self, args: argparse.Namespace, stop: asyncio.Event) -> None:
        self.args = args
        self.stop = stop
        self.halves: dict[int, list[float]] = defaultdict(list)
        self.pairs = Pentanomial((0, 0, 0, 0, 0))
        """The complete pairs so far (counted once each: the test runs at every pair)."""
        self.result: SprtResult | None = None
        self.unstarted: list[tuple[str, str]] = []
        """The bots that could not start (name, fault detail): the run stops at the first."""

    def resume_from(self, out: Path) -> None:
        """Count the games an earlier, interrupted run of the same test already finished, in
        the order they were recorded: the test follows the same path to the same decision."""
        path = out / "tournament.sqlite"
        if not path.exists():
            return
        store = SqliteStore.open(path)
        try:
            rows = [r for r in store.games() if r.status == "done" and r.result is not None]
        finally:
            store.close()
        rows.sort(key=lambda r: (r.recorded_at or 0.0, r.spec.game_id))
        for row in rows:
            assert row.result is not None
            self.on_game(GameOutcome(row.spec, row.result))

    def on_game(self, outcome: GameOutcome) -> None:
        """Account a finished game; stop the run when the test has decided. A test decides
        once, at the first pair that takes it past a bound: a game that still ends afterwards
        (one finishing as the run stops, or stored after it when the run is resumed) is not
        counted, and cannot take the decision back."""
        if self.unstarted or (self.result is not None and self.result.verdict != "continue"):
            return
        self.unstarted = no_start(outcome.result)
        if self.unstarted:  # no test of a bot that cannot start: stop, as a match does
            self.stop.set()
            return
        winner = outcome.result.get("winner")
        score = 0.5 if winner is None else float(winner == "candidate")
        index = outcome.spec.pair_index
        assert index is not None
        self.halves[index].append(score)
        if len(self.halves[index]) == 2:
            self.pairs = self.pairs.add(sum(self.halves.pop(index)))
            self.result = _sprt(self.args, self.pairs)
            if self.result.verdict != "continue":
                self.stop.set()


def _unstarted_text(unstarted: list[tuple[str, str]], out: Path) -> str:
    """What ``sprt`` says when a bot could not start (no verdict)."""
    lines = [f"gin-referee: sprt stopped, no verdict: the {name} could not start: {detail}"
             for name, detail in unstarted]  # fmt: skip
    lines.append(
        f"(its stderr is in {out / 'stderr'}; once it starts, run again with another --out, "
        f"or delete {out}: its store keeps the game it could not start)"
    )
    return "\n".join(lines)


def verdict_text(result: SprtResult | None, interrupted: bool) -> str:
    """The verdict line: what was decided, in the test's own Elo terms, and where the LLR stands
    against the bounds."""
    if result is None:
        result_llr, lower, upper = 0.0, None, None
    else:
        result_llr, lower, upper = result.llr, result.lower_bound, result.upper_bound
    verdict = "undecided" if result is None or result.verdict == "continue" else result.verdict
    if result is not None and verdict != "undecided":
        e0, e1 = f"{result.elo0:+g}", f"{result.elo1:+g}"
        meaning = (
            f"H1 accepted: the data favour Elo {e1} over {e0}"
            if verdict == "accept"
            else f"H0 accepted: the data favour Elo {e0} over {e1}"
        )
    elif interrupted:
        meaning = "interrupted before a decision; run the same command again to resume"
    else:
        meaning = "no decision within the game limit"
    if lower is None or upper is None:
        where = ""
    elif result_llr >= upper:
        where = f", at or past the upper bound {upper:.2f}"
    elif result_llr <= lower:
        where = f", at or past the lower bound {lower:.2f}"
    else:
        where = f", between the bounds {lower:.2f} and {upper:.2f}"
    return f"verdict: {verdict} ({meaning}); LLR {result_llr:.2f}{where}"


async def run_sprt(args: argparse.Namespace) -> int:
    """``gin-referee sprt --candidate CMD --baseline CMD``."""
    try:
        _sprt(args, Pentanomial((0, 0, 0, 0, 0)))
        games = args.max_games + args.max_games % 2
        config = TournamentConfig(
            name="sprt",
            bots=(BotEntry("candidate", args.candidate), BotEntry("baseline", args.baseline)),
            format="gauntlet",
            games_per_pairing=games,
            duplicate=True,
            seed=args.seed,
            concurrency=args.concurrency,
            rules=rules_option(args.rules),
            time=TimeControl(move=args.move_time, bank=args.bank),
            policy=FaultPolicy.FORFEIT_GAME,
        )
    except ValueError as err:
        print(f"gin-referee: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    stop = asyncio.Event()
    tracker = _SprtTracker(args, stop)
    try:
        tracker.resume_from(args.out)
    except StoreError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    # If an earlier run already decided, ``stop`` is set and no game is started.
    # Its TCP endpoint serves no one (the bots use the private ipc one): a throw-away pair.
    run = TournamentRun(
        config, args.out, stop=stop, on_game=SprtProgress(tracker).on_game, curve=KeyPair.generate()
    )
    try:
        interrupted = await run_with_signals(run, stop)
    except StoreError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    if tracker.unstarted and not run.failed:
        print(_unstarted_text(tracker.unstarted, args.out), file=sys.stderr)
        return EXIT_NO_START
    result = tracker.result
    pairs = tracker.pairs
    decided = result is not None and result.verdict != "continue"
    units = "" if args.elo_model == "logistic" else f" ({args.elo_model} Elo)"
    print(
        f"SPRT elo0={args.elo0:g} elo1={args.elo1:g}{units} alpha={args.alpha:g} "
        f"beta={args.beta:g} (exact GSPRT, pentanomial)"
    )
    print(verdict_text(result, interrupted))
    print(f"games: {2 * pairs.pairs} in {pairs.pairs} duplicate pairs; pentanomial {pairs.counts}")
    score = "n/a" if pairs.pairs == 0 else f"{pairs.mean:.3f}"
    print(f"score: {score}, {estimate_text(estimate_pairs(pairs))}")
    if run.failed:
        print(failed_text(run.failed), file=sys.stderr)
        return EXIT_INTERNAL
    if interrupted and not decided:
        return EXIT_INTERRUPTED
    return EXIT_OK
