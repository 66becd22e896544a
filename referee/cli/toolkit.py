"""The bot author's commands: ``check`` (the conformance battery) and ``replay --feed``.

``check`` exits 0 when every item passed or was skipped, 1 when one failed; ``replay --feed``
exits 0 when the bot answered every request as recorded, 1 at a divergence or for a record
that does not verify, 2 for a record that cannot be read, 3 when the bot could not start (see
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

from referee.cli.confinement import gate
from referee.cli.paths import unreadable
from referee.match import CHECK_TIME, BotSpec, RecordError, RecordUnreadable, replay_record
from referee.net.botuid import parse_range, set_range
from referee.net.limits import Limits

__all__ = ["run_check", "run_feed"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_START = 0, 1, 2, 3


def _spec(args: argparse.Namespace, text: str) -> BotSpec:
    spec = BotSpec.parse(text)
    if spec.command is None:
        raise ValueError("the bot must be a command line, not remote:NAME")
    if args.bot_uids is not None:
        set_range(parse_range(args.bot_uids))
    command = replace(
        spec.command,
        sandbox=args.sandbox,
        limits=Limits.parse_items(args.limit),
        pass_env=tuple(args.pass_env),
        expose=tuple(os.path.abspath(path) for path in args.expose),
    )
    return replace(spec, command=command)


def _gate(args: argparse.Namespace, spec: BotSpec) -> int | None:
    """With ``--require-sandbox``: print the level the bot gets; refuse a weaker one."""
    if args.require_sandbox is None or spec.command is None:
        return None
    return gate([spec.command.sandbox], args.require_sandbox)


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
    if (refused := _gate(args, spec)) is not None:
        return refused
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
    if any(n is not None and n < 1 for n in (args.game, args.hand)):  # as replay prints them
        return _usage(ValueError("--game and --hand count from 1, as replay prints them"))
    args.game, args.hand = (None if n is None else n - 1 for n in (args.game, args.hand))
    problem = unreadable(record)
    if problem is not None:
        return _usage(ValueError(problem))
    try:
        spec = _spec(args, args.feed)
    except ValueError as err:
        return _usage(err)
    assert spec.command is not None
    if (refused := _gate(args, spec)) is not None:
        return refused
    try:
        replay_record(record)  # the record must verify before it is fed
    except RecordUnreadable as err:
        print(f"gin-referee: error: cannot read the record: {err}", file=sys.stderr)
        return EXIT_USAGE
    except RecordError as err:
        print(f"record does not verify: {err}", file=sys.stderr)
        return EXIT_FAILED
    try:
        report = asyncio.run(
            feed_record(
                record, args.seat, spec.command, game=args.game, hand=args.hand, verified=True
            )
        )
    except RecordError as err:  # a --game or --hand the record does not have
        print(f"record cannot be fed: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("\n".join(report.lines()))
    if report.no_start:
        print(f"gin-referee: the bot could not start: {report.problem}", file=sys.stderr)
        return EXIT_NO_START
    return EXIT_OK if report.divergence is None and report.complete else EXIT_FAILED
