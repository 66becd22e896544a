"""Logging set-up (structlog): JSON lines to a file, readable console lines on a terminal.

Only the CLI calls :func:`configure`; library modules just ask for loggers. Per-decision
events are logged at DEBUG, which the filtering logger turns into a no-op at INFO, so logging
never dominates the cost of a decision.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import structlog

__all__ = ["configure"]


def configure(*, level: str = "info", json_file: Path | None = None, console: bool = True) -> None:
    """Route structlog and stdlib logging: JSON lines to ``json_file``, console to stderr.

    The console shows warnings and above unless ``level`` is lower and stderr is a terminal.
    """
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handlers: list[logging.Handler] = []
    if json_file is not None:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(json_file, encoding="utf-8")
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
    root = logging.getLogger()
    for old in list(root.handlers):  # ours from an earlier call; others' handlers stay
        if getattr(old, "gin_referee", False):
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
