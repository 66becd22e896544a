"""Which host path a sandboxed bot missed: the start-up fault of a bot that died looking for a
file the ``namespaces`` sandbox does not show names that path and how to show it.

A bot that execs or opens something outside what its command needs (a helper in another
directory, an interpreter a script finds through a path of its own) dies with its runtime's
words for a missing file: ``exec: /opt/x: not found``, ``No such file or directory``,
``Permission denied``. :func:`hidden_path` reads those lines of its stderr for paths that the
host has but the bot's sandbox hides (:mod:`referee.net.mounts`), and :func:`hint` says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from referee.net import mounts
from referee.net.keys import secret_dirs

__all__ = ["hidden_path", "hint"]

_COMPLAINT = re.compile(
    r"not found|No such file|Permission denied|can(?:'|no)t (?:open|access|find)|"
    r"Could not (?:find|open)|ENOENT|EACCES",
    re.IGNORECASE,
)
_PATH = re.compile(r"(?:\.{1,2}/|/)?[\w.+@~-]+(?:/[\w.+@~-]+)+|/[\w.+@~-]+")


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def hidden_path(
    stderr: str,
    argv: Sequence[str],
    cwd: str,
    search_path: str | None = None,
    expose: Sequence[str] = (),
    hide: Sequence[str] = (),
) -> str | None:
    """The first path named on a line of ``stderr`` that complains of a missing or refused
    file, that exists on the host and that the sandbox of the bot ``argv`` (started in
    ``cwd``, seeing ``expose`` too) does not show, else None. A relative path is looked up in
    the program's directory, then in ``cwd``; a path the bot sees that links to a hidden one
    names the hidden one. The referee's own hidden directories (``hide``, its keys) and what
    ``--expose`` cannot show (``/etc``, ``/sys``) are never named."""
    shown = mounts.visible_paths([*mounts.command_paths(argv, cwd, search_path), *expose])
    seen = (*mounts.SYSTEM_TREES, "/etc", "/proc", "/dev", "/sys", *shown)  # or never shown
    secret = [os.path.abspath(path) for path in (*hide, *secret_dirs())]
    program = os.path.normpath(os.path.join(cwd, argv[0])) if argv else cwd
    bases = (os.path.dirname(program), cwd)
    for line in stderr.splitlines():
        if not _COMPLAINT.search(line):
            continue
        for word in _PATH.findall(line):
            for base in bases if not word.startswith("/") else ("/",):
                candidate = os.path.normpath(os.path.join(base, word))
                if not os.path.lexists(candidate):
                    continue
                for path in (candidate, os.path.realpath(candidate)):
                    if not _under(path, seen) and not _under(path, secret):
                        return path
                break
    return None


def hint(path: str) -> str:
    """What a start-up fault says of a hidden ``path``."""
    return (
        f"the sandbox hides {path} (it exists on the host, the bot's stderr names it): "
        f"let the bot see it with --expose {path} (a tournament bot's expose list), "
        "docs/security.md"
    )
