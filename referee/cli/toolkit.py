"""The bot author's commands: ``check`` (the conformance battery) and ``replay --feed``.

``check`` exits 0 when every item passed or was skipped, 1 when one failed; ``replay --feed``
exits 0 when the bot answered every request as recorded, 1 at a divergence (see
docs/protocol.md, "Checking a bot" and "Replaying a record to your bot").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.match import (
    CHECK_TIME,
    BotSpec,
    CheckOptions,
    RecordError,
    feed_record,
)
from referee.match import run_check as run_battery
from referee.net.limits import Limits
from referee.net.sandbox import SANDBOX_CHOICES

__all__ = ["add_check_command", "add_feed_options", "run_check", "run_feed"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _bot_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        default="auto",
        help="confinement of the bot (as for match; docs/security.md)",
    )
    p.add_argument(
        "--limit", action="append", default=[], metavar="KEY=VALUE", help="a resource limit"
    )
    p.add_argument(
        "--pass-env", action="append", default=[], metavar="NAME", help="a variable to pass on"
    )


def add_check_command(sub: Any) -> None:
    """Add ``check`` to the top-level subparsers."""
    c = sub.add_parser(
        "check", help="run a bot through the conformance battery and print a checklist"
    )
    c.add_argument("bot", help='the bot\'s command line, e.g. "./my_bot" or "python3 bot.py"')
    c.add_argument("--json", action="store_true", help="print the checklist as JSON")
    c.add_argument("--move-time", type=float, default=CHECK_TIME.move, help="seconds per decision")
    c.add_argument(
        "--startup-time", type=float, default=CHECK_TIME.startup, help="connect + hello limit"
    )
    c.add_argument(
        "--exit-time",
        type=float,
        default=1.0,
        help="seconds the bot has to exit after match_end (the referee allows 1 s)",
    )
    c.add_argument(
        "--local-transport",
        choices=("ipc", "tcp"),
        default="ipc",
        help="how the bot connects: a private ipc:// socket (default) or tcp://127.0.0.1",
    )
    _bot_options(c)


def add_feed_options(r: argparse.ArgumentParser) -> None:
    """Add ``--feed``, ``--seat``, ``--game``, ``--hand`` to the ``replay`` parser."""
    r.add_argument(
        "--feed",
        metavar="CMD",
        default=None,
        help="play the messages seat --seat received back to this bot, offline, and compare "
        "its replies with the recorded ones",
    )
    r.add_argument("--seat", type=int, choices=(0, 1), default=None, help="with --feed")
    r.add_argument("--game", type=int, default=None, help="with --feed: only this game")
    r.add_argument("--hand", type=int, default=None, help="with --feed: only this hand")
    r.add_argument("--json", action="store_true", help="with --feed: print JSON")
    _bot_options(r)


def _spec(args: argparse.Namespace, text: str) -> BotSpec:
    spec = BotSpec.parse(text)
    if spec.command is None:
        raise ValueError("the bot must be a command line, not remote:NAME")
    command = replace(
        spec.command,
        sandbox=args.sandbox,
        limits=Limits.parse_items(args.limit),
        pass_env=tuple(args.pass_env),
    )
    return replace(spec, command=command)


def _usage(err: ValueError) -> int:
    print(f"gin-referee: error: {err}", file=sys.stderr)
    return EXIT_USAGE


def run_check(args: argparse.Namespace) -> int:
    """``gin-referee check``."""
    try:
        spec = _spec(args, args.bot)
        time = replace(CHECK_TIME, move=args.move_time, startup=args.startup_time)
    except ValueError as err:
        return _usage(err)
    assert spec.command is not None
    options = CheckOptions(
        time=time,
        exit_grace=args.exit_time,
        local_ipc=args.local_transport == "ipc",
    )
    report = asyncio.run(run_battery(spec.command, name=spec.name, options=options))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("\n".join(report.lines()))
    return EXIT_OK if report.ok else EXIT_FAILED


def run_feed(args: argparse.Namespace, record: Path) -> int:
    """``gin-referee replay RECORD --feed CMD --seat N``."""
    if args.seat is None:
        return _usage(ValueError("--feed needs --seat 0 or --seat 1"))
    if args.hand is not None and args.game is None:
        return _usage(ValueError("--hand needs --game"))
    try:
        spec = _spec(args, args.feed)
    except ValueError as err:
        return _usage(err)
    assert spec.command is not None
    try:
        report = asyncio.run(
            feed_record(record, args.seat, spec.command, game=args.game, hand=args.hand)
        )
    except RecordError as err:
        print(f"record cannot be fed: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("\n".join(report.lines()))
    return EXIT_OK if report.divergence is None and report.complete else EXIT_FAILED
