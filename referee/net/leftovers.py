"""What a bot of a root referee leaves on the host at ``rlimits``, removed when its seat ends.

At ``rlimits`` a bot has no namespace of its own: a ``setsid`` grandchild outlives the kill of
its process group, and files it writes to the host's shared directories (``/tmp``,
``/dev/shm``, which is memory) stay after it. As root, each seat runs as a host uid of its own
(:mod:`referee.net.botuid`), so everything of that uid is the seat's: before the uid is given
back, every process it still has is killed (a process of that uid sends ``SIGKILL`` to ``-1``,
which reaches every process of the uid at once, however fast it forks) and every file and
directory it owns in the shared directories is removed. A later seat leased the same uid, or
the other seat of a later game, finds nothing (``tests/e2e/test_host_attacks.py``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import subprocess

__all__ = ["SHARED_DIRS", "purge"]

logger = logging.getLogger(__name__)

SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")
"""Host directories every uid may write to, searched for the seat uid's files."""


def _kill_all(uid: int) -> None:
    """SIGKILL every process whose uid is ``uid`` (the shell's ``kill -9 -1`` as that uid: the
    kernel signals each of the uid's processes but the sender)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return
    argv = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "/bin/sh", "-c"]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([*argv, "kill -9 -1"], capture_output=True, timeout=10, check=False)


def _remove_owned(top: str, uid: int) -> int:
    """Remove what ``uid`` owns under ``top`` (never following a link); the count removed."""
    removed = 0
    try:
        entries = list(os.scandir(top))
    except OSError:
        return 0
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed += 1
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
            removed += _remove_owned(entry.path, uid)  # another world-writable directory
    return removed


def _running(uid: int) -> bool:
    """Whether a process of ``uid`` is alive (a zombie is not: it is its parent's to reap)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                state = f.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            return True
    return False


KILL_ROUNDS = 20
"""How many times :func:`purge` signals a uid's processes at most: a process forking while the
kernel walks the list can leave a child it never saw (a fork bomb does, on a loaded machine)."""


def purge(uid: int) -> None:
    """End every process of ``uid`` and remove its files from :data:`SHARED_DIRS` (root only;
    blocking: run in a thread)."""
    if os.geteuid() != 0:
        return
    for _ in range(KILL_ROUNDS):
        _kill_all(uid)
        if not _running(uid):
            break
    else:
        logger.warning("processes of uid %d outlived %d rounds of SIGKILL", uid, KILL_ROUNDS)
    removed = sum(_remove_owned(top, uid) for top in SHARED_DIRS)
    if removed:
        logger.info("removed %d file(s) a bot of uid %d left in %s", removed, uid, SHARED_DIRS)
