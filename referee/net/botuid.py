"""The host uid each sandboxed bot runs as when the referee is root: one of a range, one per seat.

A bot must be a stranger to the host: not root (who reads every file through owner
permissions) and not the referee's uid (who owns the records being written). When the referee
runs as root, each started bot therefore gets a uid of its own from an organiser-set range
(``--bot-uids``, ``[tournament] bot_uids``; :data:`DEFAULT_RANGE` otherwise), with a group of
the same number and no supplementary groups. No ``/etc/passwd`` entry is needed: the kernel
knows numbers only.

A uid is leased, not assigned: :meth:`UidLease.acquire` takes the first uid of the range that
no host user or group owns (by name) and that no other seat holds, by an exclusive ``flock``
on ``<lock dir>/<uid>.lock``. The lock lives as long as the lease's open descriptor, so it is
released by :meth:`UidLease.release` or by the death of the referee holding it, however it
dies; several referees on one host (workers, concurrent matches) never hand one uid to two live
seats. The two seats of a match therefore always run as different uids. The lock directory is
root's (mode 0700, checked: a directory someone else made is refused, not used).

Limits: a uid is reused once its lease ends. Nothing a bot leaves behind outlives its seat
(its files are in its private ``/tmp``; its processes die with its namespace; the ACL entries
its seat was given are journaled and revoked, :meth:`UidLease.let_in`), so a later bot with
the same uid inherits nothing. The range must lie inside the uids the referee's own
user namespace maps (a container with a user namespace of 65,536 uids maps 0-65535).
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import os
import pwd
import re
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from referee.net import acl

__all__ = ["DEFAULT_RANGE", "UidLease", "UidRangeError", "bot_range", "parse_range", "set_range"]

DEFAULT_RANGE = range(60100, 61000)
"""Bot uids when the organiser names none: inside 0-65535 (what a container maps), clear of
Debian's system users (100-999), regular users (1000-59999), systemd's dynamic users
(61184-65519) and ``nobody`` (65534)."""

_LOCK_DIRS = ("/run/gin-referee/uids", "/tmp/gin-referee-uids")

_range = DEFAULT_RANGE
_mutex = threading.Lock()


class UidRangeError(ValueError):
    """A uid range that cannot be used (its text is bad, or every uid in it is taken)."""


def parse_range(text: str) -> range:
    """``"61000-61999"`` (both ends included) as a range; one uid alone (``"61000"``) too.

    >>> parse_range("61000-61999")
    range(61000, 62000)
    >>> parse_range("5-9")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    referee.net.botuid.UidRangeError: bot uids: 5 is a system uid ...
    """
    found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if found is None:
        raise UidRangeError(f"bot uids: expected FIRST-LAST such as 61000-61999, got {text!r}")
    first, last = int(found[1]), int(found[2] or found[1])
    for uid in (first, last):
        if not 1000 <= uid <= 0xFFFFFFFE or uid == 65534:
            raise UidRangeError(
                f"bot uids: {uid} is a system uid (the range must lie in 1000-4294967294)"
            )
    if last < first:
        raise UidRangeError(f"bot uids: {text!r} ends before it starts")
    return range(first, last + 1)


def set_range(uids: range) -> None:
    """Use ``uids`` for every bot started from now on (the command line and the tournament
    file call it once; a seat holding a lease keeps its uid)."""
    global _range  # noqa: PLW0603 (one host policy per process)
    _range = uids


def bot_range() -> range:
    """The range bots' uids are taken from."""
    return _range


def _host_owned(uid: int) -> bool:
    """True if a host user or group already has this number (its files are not ours)."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        with contextlib.suppress(KeyError):
            lookup(uid)
            return True
    return False


def _lock_dir() -> str:
    """The first lock directory that can be made or is root's own and private."""
    problems = []
    for path in _LOCK_DIRS:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror}")
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            problems.append(f"{path}: not a directory of uid {os.geteuid()}")
        elif info.st_mode & 0o077:
            problems.append(f"{path}: mode {stat.S_IMODE(info.st_mode):o}, want 700")
        else:
            return path
    raise UidRangeError("no private directory for bot uid locks: " + "; ".join(problems))


def _undo(journal: str, uid: int) -> None:
    """Revoke the ACL entries of ``uid`` listed in ``journal`` (a seat's, which its referee
    did not live to revoke), then remove the journal."""
    try:
        with open(journal, encoding="utf-8") as f:
            paths = [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return
    for path in dict.fromkeys(paths):
        with contextlib.suppress(OSError):
            acl.revoke(path, uid)
    with contextlib.suppress(OSError):
        os.unlink(journal)


@dataclass(eq=False, slots=True)
class UidLease:
    """One uid (and the gid of the same number) held for one seat's bot.

    A seat may be let into directories that are closed to other uids (at ``rlimits``, the
    directory of its bot's own files: :meth:`let_in`); every such ACL entry is written first to
    the uid's journal in the lock directory, and revoked when the lease is released, or, if the
    referee died holding it, by the next lease of the uid before its bot starts."""

    uid: int
    _fd: int
    _journal: str = ""

    @property
    def gid(self) -> int:
        """The bot's group: the same number as its uid."""
        return self.uid

    @classmethod
    def acquire(cls, uids: range | None = None) -> UidLease:
        """Lease the first free uid of ``uids`` (default: :func:`bot_range`). Raises
        :class:`UidRangeError` naming the range when every uid in it is taken."""
        uids = bot_range() if uids is None else uids
        with _mutex:
            directory = _lock_dir()
            for uid in uids:
                if _host_owned(uid):
                    continue
                path = os.path.join(directory, f"{uid}.lock")
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                journal = os.path.join(directory, f"{uid}.grants")
                _undo(journal, uid)  # what a dead holder let it into
                return cls(uid, fd, journal)
        first, last = uids.start, uids.stop - 1
        raise UidRangeError(
            f"every bot uid in {first}-{last} is in use (a seat holds each, or a host user "
            f"has it): name a larger range with --bot-uids"
        )

    def let_in(self, paths: Sequence[str]) -> None:
        """Let the uid search each directory of ``paths`` (an ACL entry each, journaled
        first), until :meth:`release`. OSError where the file system has no ACLs."""
        if not paths:
            return
        fd = os.open(self._journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, "".join(f"{path}\n" for path in paths).encode())
        finally:
            os.close(fd)
        for path in paths:
            acl.grant_search(path, self.uid)

    def release(self) -> None:
        """Revoke what :meth:`let_in` granted, and give the uid back (idempotent)."""
        if self._fd >= 0:
            if self._journal:
                _undo(self._journal, self.uid)
            os.close(self._fd)
            self._fd = -1
