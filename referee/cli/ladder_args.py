"""The ``ladder`` command's arguments: ``run``, ``add``, ``retire``, ``history``, ``deals``,
``rounds`` and ``list`` (docs/ladder.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.cli.confinement import add_require_option
from referee.cli.keys import add_security_options
from referee.cli.logs import add_log_options
from referee.cli.parsers import positive_seconds, spectate_options
from referee.net.limits import parse_size
from referee.tournament.defaults import LEASE_SECONDS

__all__ = ["add_ladder_commands", "lag_seconds"]


def lag_seconds(text: str) -> float:
    """An argparse type: seconds of 0 or more, below a million (``--spectate-lag``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0.0 <= value < 1e6:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds (below 1e6), not {text}")
    return value


def _size(text: str) -> int:
    try:
        return parse_size(text, "--max-size")
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return int(text)


def add_ladder_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``ladder run|add|retire|list|history|deals|rounds`` (docs/ladder.md)."""
    lad = sub.add_parser("ladder", help="a competition that never ends (docs/ladder.md)")
    actions = lad.add_subparsers(dest="action", required=True)
    run = actions.add_parser("run", help="play the ladder until stopped (SIGINT/SIGTERM)")
    run.add_argument("config", type=Path)
    run.add_argument(
        "--bind",
        default="tcp://127.0.0.1:5555",
        help="endpoint remote entrants reach (default tcp://127.0.0.1:5555)",
    )
    add_security_options(run)
    add_require_option(run, strangers=True)
    run.add_argument("--out", type=Path, default=None, help="its directory (store, records)")
    run.add_argument(
        "--store", default=None, help="a postgresql:// URL for its store (default: OUT's file)"
    )
    run.add_argument("--workers", default="1", metavar="N|auto",
                     help="referee processes on this machine: N - 1 workers play the local"
                     " entrants' games (default 1; auto: one per core)")  # fmt: skip
    run.add_argument(
        "--lease",
        type=positive_seconds,
        default=LEASE_SECONDS,
        help=f"seconds a claim lives unrenewed (default {LEASE_SECONDS:g})",
    )
    add_log_options(run)
    spectate_options(run)
    run.add_argument("--spectate-lag", metavar="SECONDS", type=lag_seconds, default=60.0,
                     help="the live page shows the ladder this many seconds late, so that it"
                     " does not tell who plays now (default 60; 0: live)")  # fmt: skip
    add = actions.add_parser("add", help="add an entrant, or a new version of one")
    add.add_argument("dir", type=Path, nargs="?", help="the ladder's directory")
    add.add_argument("name", help="the entrant (its versions are NAME.v1, NAME.v2...)")
    add.add_argument("--command", dest="command_line", default=None, metavar="CMD",
                     help="a local entrant's command line, run in the sandbox in its"
                     " --bot-dir's snapshot")  # fmt: skip
    add.add_argument(
        "--bot-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a local entrant's files: snapshotted now, its version's files",
    )
    add.add_argument(
        "--max-size",
        type=_size,
        default=None,
        metavar="SIZE",
        help="the most bytes its files may hold (default 256M)",
    )
    add.add_argument(
        "--max-files",
        type=_count,
        default=None,
        metavar="N",
        help="the most files, directories and links it may hold (default 20000)",
    )
    add.add_argument("--remote", action="store_true", help="a remote entrant (connects itself)")
    add.add_argument("--public-key", default=None,
                     help="a remote entrant's CURVE public key (Z85 or its .key file)")  # fmt: skip
    add.add_argument("--token", default=None, help="its token (default: drawn and printed)")
    add.add_argument("--json", action="store_true", help="print the version as JSON")
    retire = actions.add_parser("retire", help="retire an entrant (its active version)")
    retire.add_argument("dir", type=Path, nargs="?")
    retire.add_argument("name")
    retire.add_argument("--json", action="store_true")
    history = actions.add_parser("history", help="a player's rating after each of its pairs")
    history.add_argument("dir", type=Path, nargs="?")
    history.add_argument("player", help="a version, NAME.vN")
    history.add_argument("--json", action="store_true")
    deals = actions.add_parser("deals", help="every pair's deal commitment, and its key once"
                               " the pair is closed")  # fmt: skip
    deals.add_argument("dir", type=Path, nargs="?")
    deals.add_argument("--json", action="store_true")
    rounds = actions.add_parser("rounds", help="every round the matchmaker drew, each drawn"
                                " again from its seed and inputs")  # fmt: skip
    rounds.add_argument("dir", type=Path, nargs="?")
    rounds.add_argument("--json", action="store_true")
    listing = actions.add_parser("list", help="every version of every entrant, and the log")
    listing.add_argument("dir", type=Path, nargs="?")
    listing.add_argument("--json", action="store_true", help="with the audit log")
    for admin in (add, retire, history, deals, rounds, listing):
        admin.add_argument("--store", default=None,
                           help="a postgresql:// URL instead of DIR's store")  # fmt: skip
        admin.add_argument("--ladder", default=None, help="the ladder's name in --store")
