"""The options of ``match`` and of the commands that :mod:`referee.cli.main` runs from other
modules: ``tournament``, ``serve``, ``sprt``, ``results``, ``worker``, ``fetch``, ``view``,
``report``, ``check`` and ``replay --feed``.

Kept apart from the modules that run those commands, and importing nothing of the tournament,
the store or the viewer, so that building the whole command line stays cheap: ``gin-referee
match`` imports only what a match needs (docs/performance.md, "Start-up").
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from referee.cli.confinement import add_bot_options, add_require_option
from referee.cli.keys import add_security_options
from referee.cli.logs import LOG_LEVELS, add_log_options
from referee.match import CHECK_TIME, REMOTE_STARTUP, FaultPolicy, TimeControl
from referee.net.sandbox import SANDBOX_CHOICES
from referee.tournament.defaults import ELO_MODELS, LEASE_SECONDS, REPORT_PAGES, STORE_ENV

__all__ = [
    "spectate_options",
    "OneCommand",
    "add_check_command",
    "add_feed_options",
    "add_match_command",
    "add_tournament_commands",
    "add_view_commands",
    "add_worker_commands",
    "positive_seconds",
]


class OneCommand:
    """Subcommands on which only ``command``'s options are built; every other command's
    :meth:`add_parser` returns a stand-in that ignores its options. Building all of them (each
    option makes a help formatter, each parser looks its messages' translations up) takes
    longer than parsing a match's line: a match's bots would start that much later
    (docs/performance.md, "Start-up"). :attr:`found` says whether ``command`` was one."""

    def __init__(self, sub: argparse._SubParsersAction[argparse.ArgumentParser], command: str):
        self._sub = sub
        self._command = command
        self.found = False

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """The command's parser if it is ``command``, else a stand-in."""
        if name != self._command:
            return cast(argparse.ArgumentParser, _Ignored())
        self.found = True
        return self._sub.add_parser(name, **kwargs)


class _Ignored:
    """A parser's stand-in: every call is accepted and does nothing."""

    def __getattr__(self, name: str) -> Callable[..., _Ignored]:
        return lambda *args, **kwargs: self


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows each option's default, except required options and None defaults."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.required or action.default is None or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def add_match_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``match``."""
    m = sub.add_parser(
        "match", help="play a match between two bots", formatter_class=_DefaultsShown
    )
    m.add_argument("bot_a", help='command line (e.g. "python3 my_bot.py") or remote:NAME')
    m.add_argument("bot_b", help="second bot, same forms")
    m.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    m.add_argument("--target-points", type=int, default=None, help="end at this many points")
    m.add_argument("--rules", default="standard",
                   help="standard, classic, oklahoma, straight, eaai, or a TOML file")  # fmt: skip
    m.add_argument(
        "--seed",
        type=int,
        default=None,
        help="public deal seed for testing one's own bots: deals are then NOT secret "
        "(default: a secret random deal key, revealed at the end)",
    )
    m.add_argument("--move-time", type=float, default=1.0, help="seconds per decision")
    m.add_argument("--bank", type=float, default=30.0, help="per-game time bank, seconds")
    m.add_argument("--grace", type=float, default=0.05, help="network grace, seconds")
    m.add_argument("--startup-time", type=float, default=None,
                   help=f"connect + hello limit, seconds (default {TimeControl().startup:g} for a"
                   f" bot started here, {REMOTE_STARTUP:g} for a remote seat: a person starts"
                   " it)")  # fmt: skip
    m.add_argument(
        "--fault-policy",
        default=str(FaultPolicy.FORFEIT_GAME),
        choices=[str(p) for p in FaultPolicy],
        help="resolution of timeouts, bad messages and illegal moves",
    )
    m.add_argument("--strikes", type=int, default=3, help="strikes that forfeit (strike policy)")
    m.add_argument(
        "--bind",
        default="tcp://127.0.0.1:0",
        help="endpoint to bind (port 0 = any) for remote seats and --local-transport tcp; a "
        "match of local bots on their private ipc socket binds none",
    )
    add_security_options(m, remote_key=True)
    m.add_argument(
        "--local-transport",
        choices=("ipc", "tcp"),
        default="ipc",
        help="how the bots started here connect: a private ipc:// socket (default) or the "
        "--bind endpoint (e.g. for bots run as another user or in a container)",
    )
    m.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        default="auto",
        help="confinement of the bots started here (default auto: the strongest this machine "
        "allows; none for bots that run in their own containers); see docs/security.md",
    )
    add_require_option(m, strangers=False)
    m.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a resource limit of both bots, e.g. address_space=4G, cpu_seconds=600, "
        "processes, open_files, file_size, tmp_size, memory (the whole seat) (repeatable)",
    )
    m.add_argument(
        "--expose",
        action="append",
        default=[],
        metavar="PATH",
        help="a host path both bots may read besides their own files (namespaces; repeatable)",
    )
    m.add_argument(
        "--bot-uids",
        metavar="FIRST-LAST",
        help="host uids for the bots of a root referee, one per seat (default 60100-60999)",
    )
    m.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this variable of the referee's environment to both bots (repeatable)",
    )
    m.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for record, logs, stderr (refused if it holds an earlier run's files)",
    )
    m.add_argument("--match-id", default="match", help="match id (record file name)")
    m.add_argument("--json", action="store_true", help="print a machine summary")
    add_log_options(m)


def add_tournament_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the tournament commands on the main parser."""
    t = sub.add_parser("tournament", help="run (or resume) a tournament from a TOML file")
    t.add_argument("config", type=Path)
    t.add_argument("--out", type=Path, default=None, help="output directory (store, records)")
    t.add_argument("--resume", action="store_true", help="(default) continue an interrupted run")
    t.add_argument("--bind", default="tcp://127.0.0.1:0", help="endpoint remote bots reach")
    add_security_options(t)
    add_require_option(t, strangers=True)
    add_log_options(t)
    spectate_options(t)
    t.add_argument("--workers", default="1", metavar="N|auto",
                   help="referee processes on this machine (default 1; auto: one per core, at"
                   " most tournament.concurrency)")  # fmt: skip
    store_options(t)
    s = sub.add_parser(
        "sprt",
        help="play paired games until the SPRT decides",
        description="Is the candidate stronger than the baseline? Plays duplicate pairs of "
        "games between them until a sequential probability ratio test accepts H1 (the "
        "candidate is at least --elo1 stronger) or H0 (at most --elo0), or --max-games is "
        "reached; resumable (see docs/tournaments.md and docs/statistics.md).",
        formatter_class=_DefaultsShown,
    )
    s.add_argument("--candidate", required=True, help="command line of the new bot")
    s.add_argument("--baseline", required=True, help="command line of the old bot")
    s.add_argument("--elo0", type=float, default=0.0, help="H0: Elo difference at most this")
    s.add_argument("--elo1", type=float, default=20.0, help="H1: Elo difference at least this")
    s.add_argument("--elo-model", choices=ELO_MODELS, default="logistic",
                   help="units of --elo0/--elo1")  # fmt: skip
    s.add_argument("--alpha", type=float, default=0.05, help="false positive rate (accept H1 "
                   "when H0 holds)")  # fmt: skip
    s.add_argument("--beta", type=float, default=0.05, help="false negative rate (accept H0 "
                   "when H1 holds)")  # fmt: skip
    s.add_argument("--min-pairs", type=int, default=0,
                   help="duplicate pairs before the test may stop")  # fmt: skip
    s.add_argument("--max-games", type=int, default=2000, help="stop undecided after this many")
    s.add_argument("--concurrency", type=int, default=2, help="games played at once")
    s.add_argument("--rules", default="standard",
                   help="standard, classic, oklahoma, straight, eaai, or a TOML file")  # fmt: skip
    s.add_argument("--move-time", type=float, default=1.0, help="seconds per decision")
    s.add_argument("--bank", type=float, default=30.0, help="per-game time bank, seconds")
    s.add_argument(
        "--seed", type=int, default=None, help="public deal seed: deals NOT secret (testing only)"
    )
    s.add_argument("--out", type=Path, default=Path("runs/sprt"),
                   help="output directory (store, records); the same one resumes")  # fmt: skip
    add_log_options(s, level="warning")
    v = sub.add_parser("serve", help="daemon: run a tournament as registered remote bots connect")
    v.add_argument("config", type=Path)
    v.add_argument(
        "--bind",
        default="tcp://127.0.0.1:5555",
        help="endpoint remote bots reach (default tcp://127.0.0.1:5555; e.g. tcp://0.0.0.0:5555 "
        "to accept bots from other machines)",
    )
    add_security_options(v)
    add_require_option(v, strangers=True)
    v.add_argument("--out", type=Path, default=None)
    v.add_argument("--until-done", action="store_true", help="exit when every game is played")
    add_log_options(v)
    spectate_options(v)
    r = sub.add_parser("results", help="standings of a tournament directory")
    r.add_argument("dir", type=Path, nargs="?", help="output directory (its deal.key reveals)")
    r.add_argument("--store", default=None, help="a postgresql:// URL instead of DIR's store")
    r.add_argument("--tournament", default=None, help="its name (if the database holds several)")
    r.add_argument("--format", choices=("table", "csv", "json"), default="table")
    r.add_argument("--ladder", action="store_true", help="a ladder's leaderboard (docs/ladder.md)")
    r.add_argument("--prior-draws", type=float, default=0.0,
                   help="virtual draws per pairing in the ratings (default 0: none)")  # fmt: skip


def spectate_options(parser: argparse.ArgumentParser) -> None:
    """The live spectator page's options (docs/viewer.md)."""
    g = parser.add_argument_group("live spectator page")
    g.add_argument(
        "--spectate",
        metavar="HOST:PORT",
        default=None,
        help="serve the live page on this address (PORT alone: 127.0.0.1); off by default",
    )
    g.add_argument(
        "--spectate-delay",
        metavar="SECONDS",
        type=float,
        default=10.0,
        help="seconds after a hand ends before its cards are shown (default 10)",
    )
    g.add_argument("--spectate-max", metavar="N", type=int, default=64,
                   help="most spectators at once (default 64)")  # fmt: skip


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0 (``--lease``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def page_count(text: str) -> int | None:
    """An argparse type: ``all`` (None: no limit) or a number of pages, 0 or more
    (``report --pages``)."""
    if text == "all":
        return None
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a number (0 or more) or all, not {text!r}")
    return int(text)


def store_options(parser: argparse.ArgumentParser) -> None:
    """``--store`` and ``--lease``."""
    parser.add_argument(
        "--store",
        default=None,
        help="postgresql:// URL of the store (default OUT/tournament.sqlite)",
    )
    parser.add_argument(
        "--lease",
        type=positive_seconds,
        default=LEASE_SECONDS,
        help=f"seconds a claim lives unrenewed (default {LEASE_SECONDS:g})",
    )


def add_worker_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``worker`` and ``fetch``."""
    w = sub.add_parser("worker", help="join a running tournament's (or ladder's) store as one"
                       " more referee")  # fmt: skip
    w.add_argument("--store", default=os.environ.get(STORE_ENV),
                   help=f"the store: postgresql:// URL or SQLite file (default: ${STORE_ENV},"
                   " which keeps a password off the command line)")  # fmt: skip
    w.add_argument("--tournament", default=None,
                   help="its (or the ladder's) name, if the database holds several")  # fmt: skip
    w.add_argument("--out", type=Path, default=None,
                   help="local directory: deal.key, records, stderr (default: the SQLite"
                   " file's directory, or runs/NAME)")  # fmt: skip
    w.add_argument("--concurrency", type=int, default=None,
                   help="games at once (default tournament.concurrency)")  # fmt: skip
    w.add_argument("--lease", type=positive_seconds, default=LEASE_SECONDS,
                   help=f"seconds a claim lives unrenewed (default {LEASE_SECONDS:g})")  # fmt: skip
    w.add_argument("--parent", type=int, default=None, help=argparse.SUPPRESS)
    add_require_option(w, strangers=True)
    w.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=LOG_LEVELS,
        help="least severe log records kept (default info)",
    )
    f = sub.add_parser("fetch", help="copy records and stderr tails out of a PostgreSQL store")
    f.add_argument("--store", required=True, help="postgresql:// URL")
    f.add_argument("--tournament", default=None, help="its name (if the database holds several)")
    f.add_argument("--out", type=Path, required=True, help="directory to write games/, stderr/")


def add_view_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``view`` and ``report`` on the main parser."""
    v = sub.add_parser("view", help="write a match record's replay as one HTML page")
    v.add_argument("record", type=Path, help="a match record (.jsonl, or a tournament's .jsonl.gz)")
    v.add_argument("-o", "--out", type=Path, default=None, help="page (default RECORD.html)")
    r = sub.add_parser("report", help="write a tournament's standings page (HTML)")
    r.add_argument("dir", type=Path, help="the tournament's output directory")
    r.add_argument("-o", "--out", type=Path, default=None, help="page (default DIR/report.html)")
    r.add_argument(
        "--pages",
        type=page_count,
        default=REPORT_PAGES,
        metavar="N|all",
        help=f"replay pages for at most N games, those with faults first, then the latest "
        f"(default {REPORT_PAGES}); all: every game",
    )
    r.add_argument("--no-games", action="store_true", help="no replay page (--pages 0)")
    r.add_argument("--rebuild", action="store_true", help="rewrite every game's replay page")


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
    add_bot_options(c)


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
    r.add_argument("--game", type=int, default=None, help="with --feed: this game (from 1)")
    r.add_argument("--hand", type=int, default=None, help="with --feed: this hand (from 1)")
    r.add_argument("--json", action="store_true", help="with --feed: print JSON")
    add_bot_options(r)
