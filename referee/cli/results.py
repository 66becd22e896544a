"""The ``results`` command: the standings of a tournament directory or a PostgreSQL store,
with its deal commitment (and its key once every game is played)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from referee.tournament.dealkey import deal_status
from referee.tournament.report import compute_standings, render
from referee.tournament.store import StoreError, is_url, open_store

__all__ = ["results_text", "run_results"]

EXIT_OK, EXIT_USAGE = 0, 2


def results_text(
    out: Path,
    fmt: str,
    prior_draws: float = 0.0,
    *,
    location: str | None = None,
    name: str | None = None,
) -> str:
    """Standings of the tournament stored in ``out`` (or at ``location``), with its deal
    commitment (and, once every game is played and ``out`` holds the key, the deal key:
    ``csv`` has the standings only)."""
    store = open_store(location or out / "tournament.sqlite", tournament=name)
    try:
        text = render(compute_standings(store.games(), prior_draws=prior_draws), fmt)
        deals = deal_status(out, store)
    finally:
        store.close()
    if fmt == "json":
        return json.dumps({**json.loads(text), "deals": deals.to_dict()}, indent=2)
    if fmt == "table":
        return "\n".join([text, *deals.lines()])
    return text


def run_results(args: argparse.Namespace) -> int:
    """``gin-referee results DIR`` (or ``--store URL``)."""
    if args.store is not None and not is_url(args.store):
        print(f"gin-referee: --store must be a postgresql:// URL, not {args.store!r}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    if args.dir is None and args.store is None:
        print("gin-referee: results: give a tournament directory or --store URL", file=sys.stderr)
        return EXIT_USAGE
    path = (args.dir or Path(".")) / "tournament.sqlite"
    if args.store is None and not path.exists():
        print(f"gin-referee: {path}: no tournament store here", file=sys.stderr)
        return EXIT_USAGE
    if args.ladder:
        return _ladder_results(args, path)
    if not 0.0 <= args.prior_draws < float("inf"):
        print(f"gin-referee: --prior-draws must be >= 0, got {args.prior_draws:g}", file=sys.stderr)
        return EXIT_USAGE
    try:
        print(results_text(args.dir or Path("."), args.format, args.prior_draws,
                           location=args.store, name=args.tournament))  # fmt: skip
    except StoreError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _ladder_results(args: argparse.Namespace, path: Path) -> int:
    """``results DIR --ladder``: the leaderboard, as a table or JSON."""
    from referee.tournament.ladder import ladder_board, leaderboard_text

    if args.format == "csv":
        print("gin-referee: --ladder prints a table or --format json", file=sys.stderr)
        return EXIT_USAGE
    if args.store is not None and not args.tournament:
        print("gin-referee: --ladder --store URL takes --tournament NAME (the ladder's name)",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    try:
        board = ladder_board(args.store or path, name=args.tournament)
    except StoreError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(board, indent=2) if args.format == "json" else leaderboard_text(board))
    return EXIT_OK
