"""Owner-only files: what the referee writes, no other uid on the host reads.

Records reveal every deck, logs name every card a bot was dealt, a tournament's ``deal.key``
derives every deck still to be played, and the store holds all of it. A bot of another run
(another match, another tournament, another referee on the same host) runs as a uid of its own
(:mod:`referee.net.botuid`): these files must not be readable by it, whatever it can see. So
every directory the referee makes for its output is mode 0700 (an existing one it is told to
write into is made 0700 too) and every file it creates is mode 0600; the command line also runs
each command under umask 077, for what a library (SQLite's journal, a log handler) creates
itself. docs/security.md, "Private outputs", says which files are meant to be published and how.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FILE_MODE", "private_dir", "private_opener"]

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Make ``path`` (and any missing parent: each 0700) and set it to 0700; returns it.
    Raises OSError as ``mkdir`` does."""
    missing = []
    here = path
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    for directory in reversed(missing):
        directory.mkdir(mode=DIR_MODE, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def private_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that creates files 0600."""
    return os.open(path, flags, FILE_MODE)
