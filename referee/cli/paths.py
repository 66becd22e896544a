"""Input files named on the command line: a missing or unreadable one is a usage error (exit
2) everywhere, said before anything reads it; "does not verify" is kept for a record that was
read (exit 1)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["unreadable"]


def unreadable(path: Path, what: str = "record file") -> str | None:
    """Why ``path`` cannot be read as a ``what``, or None (a pipe such as ``/dev/stdin`` is
    fine).

    >>> unreadable(Path("/no/such/file.jsonl"))
    '/no/such/file.jsonl: no such record file'
    >>> unreadable(Path("/"))
    '/: is a directory, not a record file'
    """
    if not path.exists():
        return f"{path}: no such {what}"
    if path.is_dir():
        return f"{path}: is a directory, not a {what}"
    if not os.access(path, os.R_OK):
        return f"{path}: cannot read it (permission denied)"
    return None
