"""``gin-referee demo``: a match between the sample bots, which plays on every machine.

Its bots are ours, so where the machine gives only ``rlimits`` and a bot's uid cannot reach the
interpreter (a root whose Python lies under a 0700 home), they run unsandboxed and one line
says what strangers' bots would need (docs/security.md, "Levels").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.cli.inputs import free_out
from referee.net import mounts, requirement, sandbox
from referee.net.botuid import bot_range
from referee.net.sandbox import SandboxLevel

__all__ = ["demo_sandbox", "demo_words"]


def demo_words(args: argparse.Namespace) -> list[str]:
    """The ``match`` command line ``demo`` runs."""
    python = sys.executable
    out = free_out(Path("runs/demo")) if args.out is None else args.out
    return [
        "match",
        f"{python} -m sample_bots.greedy_bot",
        f"{python} -m sample_bots.random_bot",
        *demo_sandbox(python),
        "--games", str(args.games), "--out", str(out),
        *([] if args.seed is None else ["--seed", str(args.seed)]),
        *(["--json"] if args.json else []),
    ]  # fmt: skip


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
