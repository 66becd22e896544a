"""The ``gin-referee`` command: argument parsing, printing and exit codes, nothing else.

``main`` holds :func:`main` and the match/replay/demo commands, ``tournament`` the tournament,
sprt, serve and results commands, ``logs`` the structlog set-up.
"""

from __future__ import annotations

from referee.cli.main import main

__all__ = ["main"]
