"""What a start-up or crash fault quotes of a bot's stderr: :func:`quote_stderr` chooses the
first line that names an error and the tail, :func:`start_hint` what to do about a package,
module or command the bot could not find. Plain text functions (no I/O, no event loop: the
match imports them before its loop exists)."""

from __future__ import annotations

import re

__all__ = ["STDERR_CHARS", "STDERR_LINES", "quote_stderr", "start_hint"]

STDERR_LINES, STDERR_CHARS = 3, 300
"""How much of a dead bot's stderr its fault quotes: the first line that names an error and
the last lines, at most this many characters in all."""

_ERROR_LINE = re.compile(
    r"(Error|Exception|Traceback|Fatal|FATAL|Abort|panic)\b|\berror\b|\bnot found\b|"
    r"No such file|Permission denied|[Cc]annot |[Cc]an't |[Cc]ould not |[Uu]nable to |"
    r"Segmentation fault"
)
_TRACEBACK = "Traceback (most recent call last):"


def _first_error(raw: list[str]) -> int | None:
    """The index of the first line of ``raw`` (non-blank lines, unstripped) that names an
    error: for a Python traceback its exception (the first unindented line after it), else the
    first line matching :data:`_ERROR_LINE`."""
    for i, line in enumerate(raw):
        if line.startswith(_TRACEBACK):
            for j in range(i + 1, len(raw)):
                if not raw[j][:1].isspace():
                    return j
            return None
        if _ERROR_LINE.search(line):
            return i
    return None


def quote_stderr(text: str, lines: int = STDERR_LINES, chars: int = STDERR_CHARS) -> str:
    """What a fault quotes of a bot's stderr ``text``: the first line that names an error (when
    it is not among the last lines), then the last ``lines`` non-blank lines, joined with
    `` | ``, in ``chars`` characters at most (the error line takes at most two thirds).

    >>> quote_stderr("Traceback (most recent call last):\\n  File x\\nImportError: no foo\\n", 2)
    'File x | ImportError: no foo'
    >>> quote_stderr("Error: Cannot find module 'zeromq'\\n  at a\\n  at b\\n}\\n\\nNode.js v20\\n")
    "Error: Cannot find module 'zeromq' | ... | at b | } | Node.js v20"
    """
    raw = [line.rstrip() for line in text.splitlines() if line.strip()]
    first = _first_error(raw)
    start = max(len(raw) - lines, 0)
    tail = " | ".join(line.strip() for line in raw[start:])
    if first is None or first >= start:
        return _cut_left(tail, chars)
    head = raw[first].strip()
    most = chars * 2 // 3
    head = head if len(head) <= most else head[: most - 3] + "..."
    gap = " | " if first == start - 1 else " | ... | "
    return head + gap + _cut_left(tail, chars - len(head) - len(gap))


def _cut_left(text: str, chars: int) -> str:
    """``text``, or its last characters after ``...``, in ``chars`` characters at most."""
    return text if len(text) <= chars else "..." + text[len(text) - chars + 3 :]


_NODE_MISSING = re.compile(r"Cannot find (?:package|module) '([^']+)'")
_PYTHON_MISSING = re.compile(r"No module named '?([\w.]+)")


NOT_FOUND = 127
"""The exit code of a command that was not found (a shell's, ``prlimit``'s, ``env``'s)."""


def start_hint(returncode: int | None, text: str) -> str | None:
    """What to do when a bot ended with ``returncode`` and stderr ``text`` because something
    was not found, or None: Node's ``Cannot find package/module 'x'`` (not a path: a file of
    the bot's is not a package), Python's ``No module named x``, then exit code 127 (e.g.
    python3 on a PATH where it is a pyenv shim, whose pyenv the sandbox does not have).

    >>> start_hint(1, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zeromq' imported")
    "Node package 'zeromq' not found: run npm ci in the bot's directory"
    >>> start_hint(1, "ModuleNotFoundError: No module named 'zmq'").split(":")[0]
    "Python module 'zmq' not found"
    >>> start_hint(127, "sh: 1: exec: pyenv: not found").split(":")[0]
    'command not found'
    """
    node = _NODE_MISSING.search(text)
    if node is not None and not node[1].startswith((".", "/")):
        return f"Node package '{node[1]}' not found: run npm ci in the bot's directory"
    python = _PYTHON_MISSING.search(text)
    if python is not None:
        return (
            f"Python module '{python[1]}' not found: run the bot with a python that has it "
            "(activate the venv, or write its path: .venv/bin/python)"
        )
    if returncode == NOT_FOUND:
        return (
            "command not found: the bot's program, or one it runs, is not on the bot's PATH "
            "or not in its sandbox; activate the venv, or give the program's full path "
            "(.venv/bin/python)"
        )
    return None
