"""Logging set-up (structlog): JSON lines to a file, readable console lines on a terminal.

Only the CLI calls :func:`configure`; library modules just ask for loggers. Per-decision
events are logged at DEBUG, which the filtering logger turns into a no-op at INFO, so logging
never dominates the cost of a decision.

The JSON file rotates by size (``--log-max-bytes``, default 64 MiB, ``--log-backups`` old
files kept, default 5: ``referee.log.jsonl.1`` is the newest), so a long-running daemon's log
stays within ``max_bytes * (backups + 1)``. With ``--log-stdout`` the JSON lines go to stdout
instead, for a service manager (systemd's journal, docker's log driver) to collect and rotate.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from referee.net.limits import parse_size
from referee.net.private import private_dir

__all__ = [
    "DEFAULT_BACKUPS",
    "DEFAULT_MAX_BYTES",
    "add_log_options",
    "check_log_options",
    "configure",
    "configure_cli",
    "out_problem",
    "drop_held",
    "hold_records",
]

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_BACKUPS = 5
LOG_NAME = "referee.log.jsonl"
LOG_LEVELS = ("debug", "info", "warning", "error")


def add_log_options(parser: argparse.ArgumentParser, *, level: str = "info") -> None:
    """The logging options of a command that runs matches."""
    parser.add_argument(
        "--log-level",
        default=level,
        type=str.lower,
        choices=LOG_LEVELS,
        help=f"least severe log records kept (default {level})",
    )
    parser.add_argument(
        "--log-max-bytes",
        default=str(DEFAULT_MAX_BYTES),
        metavar="SIZE",
        help="rotate OUT/referee.log.jsonl at this size, e.g. 64M (default 64M)",
    )
    parser.add_argument("--log-backups", type=int, default=DEFAULT_BACKUPS,
                        help="rotated log files kept (default 5)")  # fmt: skip
    parser.add_argument(
        "--log-stdout",
        action="store_true",
        help="JSON log lines to stdout instead of a file (for a service manager to collect)",
    )


def check_log_options(args: argparse.Namespace) -> tuple[int, int]:
    """The (max bytes, backups) of a command's logging options, all of them checked: a bad
    one raises ValueError naming it."""
    max_bytes = parse_size(getattr(args, "log_max_bytes", DEFAULT_MAX_BYTES), "--log-max-bytes")
    backups = getattr(args, "log_backups", DEFAULT_BACKUPS)
    if backups < 0:
        raise ValueError(f"--log-backups must be >= 0, got {backups}")
    _level_number(args.log_level)
    return max_bytes, backups


def configure_cli(args: argparse.Namespace, out: Path | None, *, what: str = "--out") -> None:
    """:func:`configure` from a command's options (logs to ``out``/referee.log.jsonl);
    a bad option raises ValueError naming it, and so does an ``out`` that cannot be made or
    written (named as ``what``: the flag, or where a config gave it)."""
    max_bytes, backups = check_log_options(args)
    to_stdout = bool(getattr(args, "log_stdout", False))
    try:
        configure(
            level=args.log_level,
            json_file=None if out is None or to_stdout else out / LOG_NAME,
            json_stdout=to_stdout,
            max_bytes=max_bytes,
            backups=backups,
        )
    except OSError as err:
        raise ValueError(out_problem(out, err, what)) from err


def out_problem(out: Path | None, err: OSError, what: str = "--out") -> str:
    """What to say of an output directory ``out`` that cannot be made or written, naming it as
    ``what`` (the flag) and the file that failed if it is another."""
    where = "" if err.filename in (None, str(out)) else f" ({err.filename})"
    return f"{what} {out}: cannot make or write this directory: {err.strerror or err}{where}"


class _Held(logging.Handler):
    """Keeps the records logged before the log is configured (see :func:`hold_records`)."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def hold_records() -> None:
    """Keep what is logged from now until :func:`configure`, which then logs it (stamped
    then): a match starts its bots before it configures its log, which needs
    structlog, so that their start overlaps that import (docs/performance.md, "Start-up")."""
    logging.getLogger().addHandler(_Held())


def drop_held() -> None:
    """Forget what :func:`hold_records` kept (a command that stops before its log exists)."""
    root = logging.getLogger()
    for held in [h for h in root.handlers if isinstance(h, _Held)]:
        root.removeHandler(held)


def _level_number(level: str) -> int:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    return numeric


def configure(
    *,
    level: str = "info",
    json_file: Path | None = None,
    console: bool = True,
    json_stdout: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    backups: int = DEFAULT_BACKUPS,
) -> None:
    """Route structlog and stdlib logging: JSON lines to ``json_file`` (rotated at
    ``max_bytes``, keeping ``backups`` old files) or to stdout, console to stderr.

    The console shows warnings and above unless ``level`` is lower and stderr is a terminal.
    """
    import logging.handlers

    import structlog

    numeric = _level_number(level)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handlers: list[logging.Handler] = []
    json_handler: logging.Handler | None = None
    if json_file is not None:
        private_dir(json_file.parent)
        json_handler = logging.handlers.RotatingFileHandler(
            json_file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )
    elif json_stdout:
        json_handler = logging.StreamHandler(sys.stdout)
    if json_handler is not None:
        handler: logging.Handler = json_handler
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processor=structlog.processors.JSONRenderer(), foreign_pre_chain=shared
            )
        )
        handler.setLevel(numeric)
        handlers.append(handler)
    if console:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processor=structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
                foreign_pre_chain=shared,
            )
        )
        handler.setLevel(numeric if sys.stderr.isatty() else max(numeric, logging.WARNING))
        handlers.append(handler)
    if not handlers:  # no log wanted (check, replay --feed): not the last-resort printer's dicts
        handlers.append(logging.NullHandler())
    root = logging.getLogger()
    held = [h for h in root.handlers if isinstance(h, _Held)]
    for old in list(root.handlers):  # ours from an earlier call; others' handlers stay
        if getattr(old, "gin_referee", False) or isinstance(old, _Held):
            root.removeHandler(old)
            old.close()
    for handler in handlers:
        handler.gin_referee = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(numeric)
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    for holder in held:
        for record in holder.records:
            logging.getLogger(record.name).handle(record)
