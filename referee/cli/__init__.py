"""The ``gin-referee`` command: argument parsing, printing and exit codes, nothing else.

``main`` holds :func:`main` (and ``run``, the installed program) and the match/replay/demo
commands, ``parsers`` the other commands' options, ``tournament`` the tournament and serve
commands, ``logs`` the structlog set-up. A command's module is imported only when it runs.
"""

from __future__ import annotations

from referee.cli.main import main

__all__ = ["main"]
