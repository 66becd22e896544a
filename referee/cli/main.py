"""The ``gin-referee`` command line: ``match``, ``replay`` and the rest (thin: parse, call, print).

``main(argv)`` returns the exit code: 0 on success, 1 when a record does not verify, 2 for bad
usage or bad input, 3 when a bot of the match could not start, 70 when a referee bug ended a
match (an infrastructure error, never a bot's fault), 130 when interrupted. A closed output
pipe (``| head``) ends any command quietly (:func:`~referee.cli.pipes.closed_pipe`).
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from referee.cli.confinement import gate
from referee.cli.demo import demo_words
from referee.cli.inputs import match_inputs
from referee.cli.keys import add_commands as add_key_commands
from referee.cli.keys import glue_keys, run_keygen, server_keys, warn_insecure
from referee.cli.ladder_args import add_ladder_commands
from referee.cli.logs import (
    check_log_options,
    configure,
    configure_cli,
    drop_held,
    hold_records,
    out_problem,
)
from referee.cli.parsers import (
    OneCommand,
    add_check_command,
    add_feed_options,
    add_match_command,
    add_tournament_commands,
    add_view_commands,
    add_worker_commands,
)
from referee.cli.paths import unreadable
from referee.cli.pipes import closed_pipe, quiet_exit, reader_gone
from referee.cli.summary import as_given, summary
from referee.match import (
    BotSpec,
    EarlyStart,
    MatchConfig,
    MatchResult,
    binds_endpoint,
    can_start_early,
    parse_key,
    start_early,
)
from referee.net.sandbox import probe_soon

if TYPE_CHECKING:
    from referee.net.keys import KeyPair

__all__ = ["main", "run"]

EXIT_OK, EXIT_VERIFY, EXIT_USAGE, EXIT_NO_START, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_INTERNAL = 70
"""A referee bug (sysexits' EX_SOFTWARE): distinct from every usage error."""
LOGGER = logging.getLogger(__name__)


class _Version(argparse.Action):
    """``--version``: the installed package's version (looked up only when asked: start-up)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("gin-referee")
        except PackageNotFoundError:
            found = "unknown (not installed)"
        print(f"gin-referee {found}")
        parser.exit()


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; for ``argv`` that names a command first, with only that
    command's options (:class:`~referee.cli.parsers.OneCommand`)."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="gin-referee", description="Referee for two-player Gin Rummy bots over ZeroMQ."
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    every = parser.add_subparsers(dest="command", required=True)
    sub: Any = every if not words else OneCommand(every, words[0])
    add_match_command(sub)
    d = sub.add_parser("demo", help="a match between the sample bots (greedy vs random)")
    d.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    d.add_argument("--seed", type=int, default=None, help="public deal seed (NOT secret)")
    d.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default runs/demo, or runs/demo-2, -3... when it is taken)",
    )
    d.add_argument("--json", action="store_true", help="print a machine summary")
    add_tournament_commands(sub)
    add_key_commands(sub)
    add_worker_commands(sub)
    add_ladder_commands(sub)
    r = sub.add_parser("replay", help="verify a record and print its hands")
    r.add_argument("record", type=Path)
    r.add_argument("--quiet", action="store_true", help="only the verdict")
    r.add_argument(
        "--verify",
        action="store_true",
        help="also re-derive every deck from the deal key and check the key's commitment",
    )
    r.add_argument(
        "--deal-key",
        default=None,
        help="the deal key (hex) when the record does not reveal it: a tournament's, "
        "printed by `gin-referee results` once the tournament has ended",
    )
    add_feed_options(r)
    add_check_command(sub)
    add_view_commands(sub)
    from referee.cli.play import add_play_command

    add_play_command(sub)
    if isinstance(sub, OneCommand) and not sub.found:  # a typo, or --help: every command
        return _parser(())
    return parser


def _exit_code(result: MatchResult) -> int:
    """0, or why the match is not a clean result: a referee bug, or a bot that never started."""
    if result.error is not None:
        return EXIT_INTERNAL
    startup = any(f.kind == "startup" for seat in result.seats for f in seat.faults)
    return EXIT_NO_START if startup or result.reason == "no_start" else EXIT_OK


def _start_early(
    args: argparse.Namespace, config: MatchConfig, specs: tuple[BotSpec, BotSpec]
) -> EarlyStart | None:
    """Start the match's local bots now, before the event loop and the rest of the referee
    are imported (docs/performance.md, "Start-up"), when they connect over the private
    ``ipc://`` socket."""
    if not can_start_early(specs, bind=args.bind, local_ipc=args.local_transport == "ipc"):
        return None
    return start_early(config, specs, out_dir=args.out)


async def _match(
    args: argparse.Namespace,
    config: MatchConfig,
    specs: tuple[BotSpec, BotSpec],
    curve: KeyPair | None,
    early: EarlyStart | None,
) -> int:
    import asyncio

    from referee.cli.addresses import token_notice
    from referee.cli.daemon import run_stoppable
    from referee.match import run_match

    if binds_endpoint(specs, early):  # a TCP endpoint: for remote seats, or local bots on it
        if curve is None:  # the throw-away pair of a match without remote seats, if CURVE
            curve = server_keys(args, remote=False, warn=False)
        if args.insecure:
            warn_insecure()  # now that the log is configured
    stop = asyncio.Event()
    work = run_match(
        config,
        specs,
        bind=args.bind,
        out_dir=args.out,
        stop=stop,
        on_token=token_notice("" if curve is None else curve.public_z85),
        local_ipc=args.local_transport == "ipc",
        curve=curve,
        early=early,
    )
    result, _ = await run_stoppable(
        work, stop, notice="interrupted: aborting the match (bots are told: shutdown)..."
    )
    if result is None:
        print("interrupted: match abandoned", file=sys.stderr)
        return EXIT_INTERRUPTED
    names = [spec.name for spec in specs]
    print(json.dumps(as_given(result, names), indent=2) if args.json else summary(result, names))
    if result.error is not None:
        print(f"gin-referee: match {result.match_id} failed: {result.error}", file=sys.stderr)
    if result.interrupted or stop.is_set():
        return EXIT_INTERRUPTED
    return _exit_code(result)


def _replay(args: argparse.Namespace) -> int:
    from referee.match import RecordError, RecordUnreadable, replay_record

    try:
        key = None if args.deal_key is None else parse_key(args.deal_key)
    except ValueError as err:
        print(f"gin-referee: error: --deal-key: {err}", file=sys.stderr)
        return EXIT_USAGE
    problem = unreadable(args.record)
    if problem is not None:
        print(f"gin-referee: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = replay_record(
            args.record, verify_deals=args.verify or key is not None, deal_key=key
        )
    except RecordUnreadable as err:  # bad input, as a missing file is
        print(f"gin-referee: error: cannot read the record: {err}", file=sys.stderr)
        return EXIT_USAGE
    except RecordError as err:
        print(f"record does not verify: {err}", file=sys.stderr)
        return EXIT_VERIFY
    if not args.quiet:
        print("\n".join(report.lines))
    status = "complete" if report.complete else "incomplete (no match_end line)"
    print(
        f"verified: {report.hands} hand(s), {report.games} game(s), "
        f"{report.faults} fault(s); {status}"
    )
    print(report.deals)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    words = glue_keys(sys.argv[1:] if argv is None else argv)  # a key may begin with "-"
    parser = _parser(words)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:
        return int(exc.code or 0)
    umask = os.umask(0o077)  # what the referee writes is its own (referee/net/private.py)
    try:  # every command's own errors are handled inside it: what escapes is a referee bug
        return _command(args)
    except Exception as err:
        return _internal_error(err)
    finally:
        os.umask(umask)


def _internal_error(err: BaseException) -> int:
    """What ends a command by surprise: a closed pipe ends it quietly
    (:func:`~referee.cli.pipes.closed_pipe`), anything else is a referee bug (exit 70)."""
    if closed_pipe(err) and reader_gone():
        return quiet_exit()
    LOGGER.error("referee error", exc_info=err)
    print(f"gin-referee: internal error (a referee bug): {err!r}", file=sys.stderr)
    return EXIT_INTERNAL


def _command(args: argparse.Namespace) -> int:
    """Run the parsed command (see :func:`main`)."""
    # Each command's module is imported when that command runs: a match pays for no other.
    if args.command == "replay":
        if args.feed is not None:
            from referee.cli.toolkit import run_feed

            configure(level="warning", json_file=None, console=False)
            return run_feed(args, args.record)
        return _replay(args)
    if args.command == "check":
        from referee.cli.toolkit import run_check

        configure(level="warning", json_file=None, console=False)
        return run_check(args)
    if args.command == "results":
        from referee.cli.results import run_results

        return run_results(args)
    if args.command == "ladder" and args.action != "run":
        from referee.cli.ladder import run_ladder_admin

        return run_ladder_admin(args)
    if args.command == "fetch":
        from referee.cli.workers import run_fetch

        return run_fetch(args)
    if args.command in ("view", "report"):
        from referee.cli.view import run_report, run_view

        return run_view(args) if args.command == "view" else run_report(args)
    if args.command == "keygen":
        return run_keygen(args)
    if args.command == "play":
        from referee.cli.play import run_play

        return run_play(args)
    if args.command == "demo":
        args = _parser(["match"]).parse_args(demo_words(args))
    early: EarlyStart | None = None
    try:
        try:  # bad input: usage errors
            if args.command == "match" and args.sandbox in ("auto", "namespaces"):
                probe_soon()  # the sandbox's probe runs while the input is checked
            inputs = match_inputs(args) if args.command == "match" else None
            asked = [s.command.sandbox for s in inputs[1] if s.command] if inputs else []
            if (refused := gate(asked, getattr(args, "require_sandbox", None))) is not None:
                return refused
            if args.command not in ("tournament", "serve", "ladder"):  # they log into their out
                check_log_options(args)
                if inputs is not None:  # its bots start now; the log, which needs structlog,
                    hold_records()  # and the rest of the referee are imported meanwhile
                    early = _start_early(args, inputs[0], inputs[1])
                configure_cli(args, args.out)
        except (ValueError, OSError) as err:  # OSError: an --out that cannot be a directory
            drop_held()
            out = getattr(args, "out", None)
            text = out_problem(out, err) if isinstance(err, OSError) and out else err
            print(f"gin-referee: error: {text}", file=sys.stderr)
            return EXIT_USAGE
        return _run(args, inputs, early)
    finally:
        if early is not None:  # run_match ends it; this is for a start that never got there
            early.discard()


def _run(
    args: argparse.Namespace,
    inputs: tuple[MatchConfig, tuple[BotSpec, BotSpec], KeyPair | None] | None,
    early: EarlyStart | None,
) -> int:
    """Run a command whose input is checked: what escapes here is a referee bug, never a usage
    error (but for an endpoint that cannot be bound)."""
    import asyncio

    from referee.cli.daemon import raise_fd_limit
    from referee.net.types import TransportError

    try:
        if args.command not in ("tournament", "serve", "ladder"):
            raise_fd_limit()
        if args.command == "ladder":
            from referee.cli.ladder import run_ladder

            return asyncio.run(run_ladder(args))
        if args.command in ("tournament", "serve"):
            from referee.cli.tournament import run_tournament

            return asyncio.run(run_tournament(args, serve=args.command == "serve"))
        if args.command == "worker":
            from referee.cli.workers import run_worker

            return asyncio.run(run_worker(args))
        if args.command == "sprt":
            from referee.cli.sprt import run_sprt

            return asyncio.run(run_sprt(args))
        assert inputs is not None
        return asyncio.run(_match(args, *inputs, early))
    except TransportError as err:  # the endpoint cannot be bound: a bad --bind, a port in use
        print(f"gin-referee: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:
        return _internal_error(err)


def run() -> NoReturn:
    """The ``gin-referee`` program: :func:`main` on ``sys.argv``, then the process's exit.

    Once the command has returned (its bots reaped, its files closed), the exit handlers run
    (``atexit``: logging's flush, ``weakref.finalize``) and the standard streams are flushed, as
    at any exit; then the process ends without the interpreter freeing every module and object
    one by one, which took 20-100 ms of a short match's wall time (docs/performance.md,
    "Start-up"). With a thread still running that is not a daemon, the ordinary exit, which
    waits for it, is kept.
    """
    code = main()
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon for t in others):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError as err:  # a closed pipe: quiet, the status unchanged
            if closed_pipe(err):
                quiet_exit()
            else:  # e.g. a full disk: what the ordinary exit reports as 120
                code = code or 120
        except ValueError:  # a closed stream
            code = code or 120
    os._exit(code)
