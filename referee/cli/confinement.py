"""The sandbox line each command that starts bots prints, its refusal to run weaker than
required (:mod:`referee.net.requirement`; docs/security.md, "Levels"), and the sandbox options
of the commands that start one bot."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from referee.net import requirement
from referee.net.sandbox import SANDBOX_CHOICES

if TYPE_CHECKING:
    from referee.tournament.config import TournamentConfig

__all__ = ["add_bot_options", "add_require_option", "gate", "gate_config"]

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


def add_bot_options(p: argparse.ArgumentParser) -> None:
    """The sandbox options of ``check`` and ``replay --feed``, as ``match`` has them."""
    p.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        default="auto",
        help="confinement of the bot (as for match; docs/security.md)",
    )
    add_require_option(p, strangers=False)
    p.add_argument(
        "--limit", action="append", default=[], metavar="KEY=VALUE", help="a resource limit"
    )
    p.add_argument(
        "--pass-env", action="append", default=[], metavar="NAME", help="a variable to pass on"
    )
    p.add_argument(
        "--expose",
        action="append",
        default=[],
        metavar="PATH",
        help="a host path the bot may read besides its own files (as for match)",
    )
    p.add_argument(
        "--bot-uids",
        metavar="FIRST-LAST",
        help="host uids for the bot of a root referee (as for match; default 60100-60999)",
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
