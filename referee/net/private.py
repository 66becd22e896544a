"""Owner-only files: what the referee writes, no other uid on the host reads.

Records reveal every deck, logs name every card a bot was dealt, a tournament's ``deal.key``
derives every deck still to be played, and the store holds all of it. A bot of another run
(another match, another tournament, another referee on the same host) runs as a uid of its own
(:mod:`referee.net.botuid`): these files must not be readable by it, whatever it can see. So
every directory the referee makes for its output is mode 0700 (an existing one it is told to
write into is made 0700 too) and every file it creates is mode 0600; the command line also runs
each command under umask 077, for what a library (SQLite's journal, a log handler) creates
itself. docs/security.md, "Private outputs", says which files are meant to be published and how.

Modes do not stop a bot that runs as the referee's own uid (a referee that is not root, or a
root one whose kernel allows only a user namespace): every output directory is therefore also
listed in a registry of the referee's user (:func:`registry`, one absolute path a line), and
the ``namespaces`` sandbox covers each one it would show a bot with an empty directory
(:func:`outputs`), whichever run made it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

__all__ = ["FILE_MODE", "outputs", "private_dir", "private_opener", "registry"]

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
    _register(path)
    return path


_registered: set[str] = set()


def registry() -> Path:
    """The file that lists every output directory this user's referees made:
    ``$XDG_STATE_HOME/gin-referee/outputs`` (default ``~/.local/state``)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(state) / "gin-referee" / "outputs"


def _register(path: Path) -> None:
    """Add ``path`` to the registry (once per process; a line appended whole)."""
    line = os.path.abspath(path)
    if line in _registered or "\n" in line:
        return
    _registered.add(line)
    target = registry()
    with contextlib.suppress(OSError):  # no writable home: the modes still hold
        os.makedirs(target.parent, mode=DIR_MODE, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # not in the middle of a reader's rewrite
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)


PRUNE_AT = 256
"""Lines past which a reader rewrites the registry without the directories that are gone."""


def outputs() -> list[str]:
    """Every registered output directory that still exists (outermost first, each once) and
    the registry's own directory. Rewrites the registry without the gone ones once it is past
    :data:`PRUNE_AT` lines, most of them gone (under its lock, as appends take it)."""
    target = registry()
    try:
        lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    found: list[str] = []
    for line in sorted(set(lines)):
        if found and line.startswith(found[-1] + "/"):
            continue  # inside one already listed
        if line.startswith("/") and os.path.isdir(line):
            found.append(line)
    if len(lines) > PRUNE_AT and len(found) < len(lines) // 2:
        _rewrite(target, found)
    return [*found, str(target.parent)]


def _rewrite(target: Path, kept: list[str]) -> None:
    """Replace the registry by ``kept`` plus whatever was appended meanwhile."""
    with contextlib.suppress(OSError), open(target, "r+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        fresh = [line for line in f.read().splitlines() if os.path.isdir(line)]
        f.seek(0)
        f.truncate()
        f.write("".join(f"{line}\n" for line in sorted({*kept, *fresh})))


def private_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that creates files 0600."""
    return os.open(path, flags, FILE_MODE)
