"""Letting one more uid search a directory, and nobody else: a POSIX ACL entry.

A root referee's bot at sandbox level ``rlimits`` (no mounts) reaches the referee's private
``ipc://`` socket through the socket's 0700 directory. :func:`allow_search` adds an ACL entry
that lets that bot's uid, and no other, search the directory (``u:UID:--x``), rather than
opening the directory to every local user. The ACL is written through the
``system.posix_acl_access`` extended attribute in the kernel's own format (a version word,
then sorted ``(tag, perm, id)`` entries), so no ``acl`` package is needed. Where the file
system has no ACLs the directory is made searchable by all (0711: the socket's name is fixed,
so a local user who learns the directory's can then connect, as anyone can to a TCP endpoint
on 127.0.0.1: the endpoint's tokens and bounds hold), with one warning.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import logging
import os
import stat
import struct

__all__ = ["allow_search", "grant_search", "revoke"]

logger = logging.getLogger(__name__)

_XATTR = "system.posix_acl_access"
_VERSION = 2
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_NO_ID = 0xFFFFFFFF
_SEARCH = 1


def _entries(path: str) -> list[tuple[int, int, int]]:
    """The directory's ACL entries (its mode's three, when it has no ACL yet)."""
    try:
        raw = os.getxattr(path, _XATTR)
    except OSError as err:
        if err.errno != errno.ENODATA:
            raise
        mode = stat.S_IMODE(os.stat(path).st_mode)
        return [(_USER_OBJ, mode >> 6 & 7, _NO_ID), (_GROUP_OBJ, mode >> 3 & 7, _NO_ID),
                (_OTHER, mode & 7, _NO_ID)]  # fmt: skip
    (version,) = struct.unpack_from("<I", raw)
    if version != _VERSION:
        raise OSError(errno.EINVAL, f"unknown ACL version {version}", path)
    return [struct.unpack_from("<HHI", raw, 4 + 8 * i) for i in range((len(raw) - 4) // 8)]


def _set(path: str, uid: int, perm: int | None) -> None:
    """Give ``uid`` the entry ``perm`` on directory ``path`` (None: remove its entry), keeping
    every other entry; the mask is the union of the named entries' and the group's. Under an
    exclusive ``flock`` of the directory: processes of one host change its ACL one at a time."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        entries = [e for e in _entries(path) if not (e[0] == _USER and e[2] == uid)]
        entries += [] if perm is None else [(_USER, perm, uid)]
        entries = [e for e in entries if e[0] != _MASK]
        named = [e[1] for e in entries if e[0] in (_USER, _GROUP)]
        if named:  # without named entries no mask is needed: the mode alone remains
            group = [e[1] for e in entries if e[0] == _GROUP_OBJ]
            mask = functools.reduce(lambda a, b: a | b, named + group, 0)
            entries.append((_MASK, mask, _NO_ID))
        entries.sort(key=lambda e: (e[0], e[2]))
        data = struct.pack("<I", _VERSION)
        data += b"".join(struct.pack("<HHI", *e) for e in entries)
        os.setxattr(fd, _XATTR, data)
    finally:
        os.close(fd)


def allow_search(path: str, uid: int) -> None:
    """Let ``uid`` search (not list) directory ``path``, keeping every other entry."""
    try:
        _set(path, uid, _SEARCH)
    except OSError as err:
        _warn_once(f"no ACL on {os.path.dirname(path)} ({err.strerror}): the bots' ipc "
                   "directory is searchable by every local user")  # fmt: skip
        os.chmod(path, 0o711)


def grant_search(path: str, uid: int) -> None:
    """Let ``uid`` search directory ``path`` (OSError where the file system has no ACLs)."""
    _set(path, uid, _SEARCH)


def revoke(path: str, uid: int) -> None:
    """Remove ``uid``'s entry from directory ``path``'s ACL (none, or no such path: nothing)."""
    with contextlib.suppress(FileNotFoundError):
        _set(path, uid, None)


@functools.cache
def _warn_once(message: str) -> None:
    logger.warning("%s", message)
