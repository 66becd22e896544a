"""The ``view`` and ``report`` commands (thin: parse, write the page, print its path). ``view``
exits 2 for a record that cannot be read, 1 for one that is read but does not verify."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.cli.paths import unreadable
from referee.match import RecordError, RecordUnreadable
from referee.match.record_gzip import record_stem
from referee.view.replay_html import write_viewer
from referee.view.report_html import write_report
from referee.view.run_dir import RunError

__all__ = ["run_report", "run_view"]

EXIT_OK, EXIT_VERIFY, EXIT_USAGE = 0, 1, 2


def _fail(message: str) -> int:
    print(f"gin-referee: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_view(args: argparse.Namespace) -> int:
    """``gin-referee view RECORD [-o OUT.html]``."""
    record: Path = args.record
    out: Path = args.out or record.with_name(record_stem(record.name) + ".html")
    problem = unreadable(record)
    if problem is not None:
        return _fail(problem)
    try:
        write_viewer(record, out)
    except RecordUnreadable as err:  # bad input (2); one that is read but is wrong: 1
        return _fail(f"cannot read the record: {err}")
    except RecordError as err:
        print(f"record does not verify: {err}", file=sys.stderr)
        return EXIT_VERIFY
    except OSError as err:
        flag = "--out " if args.out is not None else ""
        return _fail(f"{flag}{out}: cannot write the page: {err.strerror or err}")
    print(out)
    return EXIT_OK


def run_report(args: argparse.Namespace) -> int:
    """``gin-referee report RUN_DIR [-o OUT.html]``."""
    try:
        pages = 0 if args.no_games else args.pages
        summary = write_report(args.dir, args.out, pages=pages, rebuild=args.rebuild)
    except RunError as err:
        return _fail(str(err))
    except OSError as err:  # named as the flag, when it was given, and the file
        flag = f"--out {args.out}: " if args.out is not None else ""
        where = f" ({err.filename})" if err.filename and str(err.filename) != str(args.out) else ""
        return _fail(f"{flag}cannot write the report: {err.strerror or err}{where}")
    for game_id, problem in sorted(summary.problems.items()):
        print(f"game {game_id}: no replay page: {problem}", file=sys.stderr)
    pages = f"{summary.pages_written} replay page(s) written, {summary.pages_kept} kept"
    if summary.pages_over:
        pages += f", {summary.pages_over} game(s) over --pages {args.pages}"
    print(f"{summary.report} ({pages})")
    return EXIT_OK
