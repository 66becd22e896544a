"""The sandbox line each command that starts bots prints, and its refusal to run weaker than
required (:mod:`referee.net.requirement`; docs/security.md, "Levels")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from referee.net import requirement

if TYPE_CHECKING:
    from referee.tournament.config import TournamentConfig

__all__ = ["add_require_option", "gate", "gate_config"]

EXIT_USAGE = 2


def add_require_option(parser: argparse.ArgumentParser, *, strangers: bool) -> None:
    """``--require-sandbox LEVEL``: the weakest level the command's bots may run at."""
    default = (
        "namespaces unless --sandbox names a weaker level"
        if strangers
        else "none: the level is printed and recorded"
    )
    parser.add_argument(
        "--require-sandbox",
        choices=requirement.LEVELS,
        default=None,
        metavar="LEVEL",
        help=f"refuse to start bots below this sandbox level ({', '.join(requirement.LEVELS)}; "
        f"default {default}); docs/security.md",
    )


def gate(requested: Iterable[str], required: str | None, *, strangers: bool = False) -> int | None:
    """Print the level the bots asked to run at ``requested`` (one value per local bot) will
    have, on stderr; when one must not start here, print why and return the exit code."""
    asked = sorted(set(requested))
    if not asked:
        return None
    for level in asked:
        why = requirement.check(level, required, strangers=strangers)
        if why is not None:
            print(f"gin-referee: error: {why}", file=sys.stderr)
            return EXIT_USAGE
    lines = dict.fromkeys(requirement.describe(level) for level in asked)
    for line in lines:
        print(line, file=sys.stderr)
    return None


def gate_config(config: TournamentConfig, required: str | None) -> int | None:
    """:func:`gate` for a run of strangers' bots: a tournament's, a worker's or a ladder's
    (its ``play``) local bots, ``required`` (``--require-sandbox``) over the file's
    ``require_sandbox``."""
    asked = [b.sandbox for b in config.bots if b.command is not None]
    return gate(asked, required or config.require_sandbox, strangers=True)
