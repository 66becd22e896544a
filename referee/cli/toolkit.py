"""The bot author's commands: ``check`` (the conformance battery) and ``replay --feed``.

``check`` exits 0 when every item passed or was skipped, 1 when one failed; ``replay --feed``
exits 0 when the bot answered every request as recorded, 1 at a divergence (see
docs/protocol.md, "Checking a bot" and "Replaying a record to your bot").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from referee.cli.paths import unreadable
from referee.match import CHECK_TIME, BotSpec, RecordError
from referee.net.limits import Limits

__all__ = ["run_check", "run_feed"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _spec(args: argparse.Namespace, text: str) -> BotSpec:
    spec = BotSpec.parse(text)
    if spec.command is None:
        raise ValueError("the bot must be a command line, not remote:NAME")
    command = replace(
        spec.command,
        sandbox=args.sandbox,
        limits=Limits.parse_items(args.limit),
        pass_env=tuple(args.pass_env),
        expose=tuple(os.path.abspath(path) for path in args.expose),
    )
    return replace(spec, command=command)


def _usage(err: ValueError) -> int:
    print(f"gin-referee: error: {err}", file=sys.stderr)
    return EXIT_USAGE


def run_check(args: argparse.Namespace) -> int:
    """``gin-referee check``."""
    from referee.toolkit import CheckOptions
    from referee.toolkit import run_check as run_battery  # the battery: only for this command

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
    from referee.toolkit import feed_record

    if args.seat is None:
        return _usage(ValueError("--feed needs --seat 0 or --seat 1"))
    if args.hand is not None and args.game is None:
        return _usage(ValueError("--hand needs --game"))
    problem = unreadable(record)
    if problem is not None:
        return _usage(ValueError(problem))
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
