"""The command line of a bot whose files are a directory (a ladder's entrant, a tournament's
``[[bots]] dir``): the files it names must be the directory's, named relative to it, since a
version is exactly its directory's files (:mod:`referee.tournament.botfiles`)."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

__all__ = ["command_problem"]


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def command_problem(
    command: str, directory: Path | None, *, expose: Sequence[str] = ()
) -> str | None:
    """What is wrong with ``command`` for a bot whose files are ``directory`` (None: it has
    none, as a program installed on the host), or None. Its program is a name on ``PATH``, a
    host program by absolute path, or a file of the directory named relative to it; every other
    word that names a file names one of the directory's, relative to it (a host path it needs
    is given with ``expose``): its version is its directory's files, which a path outside them
    would escape.

    >>> command_problem("python3 bots/x.py", None)
    'no such file: bots/x.py (a bot without a directory has no files of its own)'
    """
    words = shlex.split(command)
    base = None if directory is None else directory.resolve()
    where = "a bot without a directory has no files of its own" if base is None else f"in {base}"

    def own(word: str) -> str | None:
        if base is not None and _inside(Path(word).resolve(), base):
            return (f"{word}: name the bot's own files relative to its directory ({base}), e.g."
                    f" ./{Path(word).resolve().relative_to(base)}")  # fmt: skip
        return None

    def relative(word: str) -> str | None:
        target = None if base is None else (base / word).resolve()
        if target is None or not target.exists():
            return f"no such file: {word} ({where})"
        if not _inside(target, base or target):
            return f"{word}: leaves the bot's directory ({base})"
        return None

    program = words[0]
    if os.path.isabs(program):
        if problem := own(program):
            return problem
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            return f"cannot find the program {program!r}"
    elif "/" in program:
        if problem := relative(program):
            return problem
    elif shutil.which(program) is None:
        return f"cannot find the program {program!r} (a name without a path is looked up on PATH)"
    for word in words[1:]:
        value = word.partition("=")[2]
        for part in dict.fromkeys(p for p in (word, value) if p and "://" not in p):
            if part.startswith("-") and part == word:
                continue  # an option (its value, after "=", is looked at)
            if os.path.isabs(part):
                if problem := own(part):
                    return problem
                exposed = any(_inside(Path(part), Path(e)) for e in expose)
                if os.path.exists(part) and not exposed:
                    return (f"{part}: a file outside the bot's directory (a version is its"
                            " directory's files, named relative to it)")  # fmt: skip
            elif "/" in part and (problem := relative(part)):
                return problem
    return None
