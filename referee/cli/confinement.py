"""The sandbox line each command that starts bots prints, and its refusal to run weaker than
required (:mod:`referee.net.requirement`; docs/security.md, "Levels")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from referee.net import mounts, requirement, sandbox
from referee.net.botuid import bot_range
from referee.net.sandbox import SandboxLevel

__all__ = ["add_require_option", "gate"]

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


def gate(requested: Iterable[str], required: str | None, *, strangers: bool) -> int | None:
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


def demo_sandbox(python: str) -> list[str]:
    """``demo``'s sandbox options: none, so that its bots get the strongest level there is,
    except where that level cannot run them (a root referee at ``rlimits`` whose interpreter
    lies behind a directory strangers cannot enter): the sample bots are ours, so they then
    run unconfined, and one line says what real entrants would need."""
    found = sandbox.detect()
    if found.level is not SandboxLevel.RLIMITS or not sandbox.own_uids(found.level):
        return []
    try:
        mounts.check_reachable([python], None, None, bot_range().start)
    except mounts.UnreachableError as exc:
        print(
            f"demo: the sample bots (ours) run unsandboxed: this machine gives no namespaces "
            f"({found.reason}), and {exc}. Strangers' bots need the namespaces level; to "
            f"get it: {requirement.fix_for(found)}",
            file=sys.stderr,
        )
        return ["--sandbox", "none"]
    return []
