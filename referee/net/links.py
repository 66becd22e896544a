"""Symlinks that leave a bot's directory: what the ``namespaces`` sandbox must show besides it.

A bot's directory is bound whole (:mod:`referee.net.mounts`), but a symlink in it resolves
inside the sandbox only if its target is visible too: a virtual environment's ``bin/python``
links to the installation it was made from, a ``node_modules`` entry made by ``npm link`` to a
directory elsewhere. :func:`link_targets` walks a directory for such links and gives the host
paths their resolution passes through: each intermediate link outside the directory, and the
final target (for an executable file, the installation it belongs to, as for a bot's program).

Not followed (the directory is the entrant's, the host is not): links into ``/proc``, ``/sys``,
``/dev`` or ``/run``, to ``/`` or to a whole top-level directory (``/home``, ``/srv``...), and
to anything but a regular file or a directory (a socket, a device). The referee's own output
and key directories stay hidden whatever links to them (``mounts.filesystem_args``). The walk
skips ``.git``, goes :data:`MAX_DEPTH` levels down, stops after :data:`MAX_ENTRIES` entries,
and is remembered per directory (and its modification time) for the referee's life: a
tournament starts the same bots many times.
"""

from __future__ import annotations

import functools
import logging
import os
import stat

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "link_targets", "resolve_link"]

logger = logging.getLogger(__name__)

MAX_DEPTH = 4
"""How deep below a directory its links are looked for: a venv's ``.venv/bin/python`` is 3
levels down, ``node_modules/@scope/name`` 3; a working directory holding a whole venv or a
data set is not read to its leaves at each start (a repository's root took 130 ms)."""
MAX_ENTRIES = 50_000
"""Entries one walk reads at most (a bot's directory with a large data set is cut there)."""

_NEVER = ("/proc", "/sys", "/dev", "/run", "/var/run")
"""Host trees no link of a bot's makes visible."""


def _installation(path: str) -> str:
    """Where an executable's installation lies: the parent of its ``bin`` directory, else its
    own directory (as ``mounts._prefix``, for a path already resolved)."""
    here = os.path.dirname(path)
    return os.path.dirname(here) if os.path.basename(here) == "bin" else here


def _followable(path: str) -> bool:
    """True if a link may make ``path`` visible: not in :data:`_NEVER`, not ``/`` or a
    top-level directory, and a regular file or a directory."""
    if path.count("/") < 2 or any(path == t or path.startswith(t + "/") for t in _NEVER):
        return False
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def resolve_link(link: str, inside: str = "/") -> list[str]:
    """The host paths that the symlink ``link`` resolves through and that lie outside
    ``inside`` (a directory already visible): each intermediate link, then the target (for an
    executable file: its installation). Empty when the target is inside ``inside``, missing,
    or not :func:`_followable`.

    >>> resolve_link("/no/such/link")
    []
    """
    found: list[str] = []
    here = link
    for _ in range(40):  # the kernel's own bound on a chain of links
        try:
            target = os.readlink(here)
        except OSError:
            return []
        here = os.path.normpath(os.path.join(os.path.realpath(os.path.dirname(here)), target))
        if not os.path.islink(here):
            break
        if not _within(here, inside):
            found.append(here)
    else:
        return []
    if _within(here, inside) or not _followable(here):
        return [p for p in found if _followable(os.path.realpath(p))]
    if os.path.isfile(here) and os.access(here, os.X_OK):
        installation = _installation(here)
        here = installation if _followable(installation) else here
    return [*found, here]


def _within(path: str, root: str) -> bool:
    return root in ("/", path) or path.startswith(root.rstrip("/") + "/")


def link_targets(directory: str, recursive: bool = True) -> tuple[str, ...]:
    """The host paths the symlinks in ``directory`` (and below it, when ``recursive``) need
    visible besides it (:func:`resolve_link`), in the order found, without repeats."""
    try:
        mtime = os.stat(directory).st_mtime_ns
    except OSError:
        return ()
    return _walk(os.path.normpath(directory), recursive, mtime)


@functools.lru_cache(maxsize=256)
def _walk(top: str, recursive: bool, mtime: int) -> tuple[str, ...]:
    """:func:`link_targets`, remembered per directory and modification time."""
    del mtime  # part of the cache's key only
    found: list[str] = []
    stack, seen = [(top, 1)], 0
    while stack:
        here, depth = stack.pop()
        deeper = recursive and depth < MAX_DEPTH
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_symlink():
                        found += [p for p in resolve_link(entry.path, top) if p not in found]
                    elif deeper and entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, depth + 1))
        except OSError:
            continue
        if seen >= MAX_ENTRIES:
            logger.info("stopped looking for symlinks in %s after %d entries", top, seen)
            break
    return tuple(found)
