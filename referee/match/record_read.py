"""Reading a match record line by line (plain, or gzip as a tournament leaves it), and the
errors of a record: one that cannot be read as a record at all (:class:`RecordUnreadable`, bad
input) and one that is read but does not verify (:class:`RecordError`). See docs/records.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.match.record_gzip import record_lines

__all__ = ["RecordError", "RecordUnreadable", "read_record_lines"]


class RecordError(ValueError):
    """A record file that cannot be read or does not verify; names the line and the problem."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path, self.line, self.reason = path, line, reason
        super().__init__(f"{path}:{line}: {reason}")


class RecordUnreadable(RecordError):
    """A record file that cannot be read as a record at all (unreadable text, damaged gzip
    data, a line that is not JSON or not a record object): bad input (exit 2), where a record
    that is read but does not verify is a :class:`RecordError` (exit 1)."""


def read_record_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of a record (plain, or gzip as a tournament leaves it) as ``(line
    number, object)``; unreadable text, damaged gzip data, a line that is not JSON or an object
    without a ``type`` raise :class:`RecordError`."""
    lines = record_lines(path)  # a line at a time, each bounded (see record_gzip)
    number = 0
    while True:
        try:
            raw = next(lines, None)
            if raw is None:
                return
            line = raw.decode("utf-8")
        except (OSError, ValueError) as err:  # (UnicodeDecodeError is a ValueError)
            where = number + 1 if number else 0  # 0: nothing could be read
            raise RecordUnreadable(str(path), where, f"cannot read: {err}") from err
        number += 1
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            reason = f"not JSON ({err.msg} at char {err.pos})"
            if not line.endswith("\n") and _is_last(lines):
                reason += "; the file may be cut short (its last line is incomplete)"
            raise RecordUnreadable(str(path), number, reason) from err
        if not isinstance(value, dict) or "type" not in value:
            raise RecordUnreadable(str(path), number, "not a record object with a 'type'")
        yield number, value


def _is_last(lines: Iterator[bytes]) -> bool:
    """Whether ``lines`` has no line left (False if what follows cannot be read)."""
    try:
        return next(lines, None) is None
    except (OSError, ValueError):
        return False
