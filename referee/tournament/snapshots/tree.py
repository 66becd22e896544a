"""A version's files as a tree: read from a directory into a canonical, content-addressed form,
checked, and written back out read-only.

A :class:`Tree` is a sorted list of entries, each a directory, a regular file (its size, its
SHA-256, whether it is executable) or a symbolic link (its target, as text: never followed),
and the contents of its files. Its :attr:`~Tree.digest` is the SHA-256 of its canonical JSON
(docs/ladder.md, "What a version is", gives the format): two trees with the same paths, kinds,
executable bits, contents and link targets have the same digest, wherever and whenever they were
read, whatever their owners, times or other mode bits.

:func:`scan` reads a directory without following any link (every directory is opened
``O_NOFOLLOW`` relative to its parent's descriptor, every file ``O_NOFOLLOW | O_NONBLOCK`` and
checked to be regular after it is open), so a tree swapped for a link while it is read is
refused, never read through; a FIFO, socket or device is refused by name, as is a name that is
not UTF-8, and reading stops at the first limit passed (:class:`TreeLimits`). The bytes hashed
are the bytes kept: a file changed while it is read is kept as it was read.

:func:`check` validates a tree that comes from elsewhere (the store, an upload): relative
normalised paths, unique, every entry's parent a directory of the tree (so writing it never
goes through a link), known kinds, sizes within the limits. :func:`materialize` writes a
checked tree into a new directory (files 0444, or 0555 when executable; directories 0555),
verifying each file's digest as it writes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "Entry",
    "SnapshotError",
    "Tree",
    "TreeLimits",
    "check",
    "materialize",
    "scan",
]

FORMAT = "gin-referee files v1"
"""The canonical JSON's ``format``: what the digest covers."""
_READ_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class SnapshotError(ValueError):
    """A directory or tree that cannot be a version's files; the message names the path and
    what is wrong with it."""


@dataclass(frozen=True, slots=True)
class TreeLimits:
    """What one version's files may hold (an organiser raises them for a large entrant)."""

    max_bytes: int = 256 << 20
    """Bytes of all its files together (each distinct content counted once per path)."""
    max_entries: int = 20_000
    """Files, directories and links in all."""
    max_depth: int = 32
    """Directories from the top down to its deepest entry."""
    max_path: int = 1024
    """Bytes of an entry's path (UTF-8), and of a link's target."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a tree: a ``dir``, a ``file`` or a ``link``."""

    path: str
    """Relative, ``/``-separated, normalised."""
    kind: str
    size: int = 0
    digest: str = ""
    """A file's SHA-256 (hex)."""
    executable: bool = False
    target: str = ""
    """A link's target, as the link holds it."""

    def row(self) -> list[Any]:
        """The entry's canonical form: ``[path, "dir"]``, ``[path, "file", size, sha256,
        executable]`` or ``[path, "link", target]``."""
        if self.kind == "file":
            return [self.path, "file", self.size, self.digest, self.executable]
        if self.kind == "link":
            return [self.path, "link", self.target]
        return [self.path, "dir"]

    @classmethod
    def from_row(cls, row: Any) -> Entry:
        """An entry from its canonical form; :class:`SnapshotError` if it is not one."""
        if not (
            isinstance(row, list) and len(row) >= 2 and all(isinstance(x, str) for x in row[:2])
        ):
            raise SnapshotError(f"not an entry: {row!r:.80}")
        path, kind = row[0], row[1]
        if kind == "dir" and len(row) == 2:
            return cls(path, kind)
        if kind == "link" and len(row) == 3 and isinstance(row[2], str):
            return cls(path, kind, target=row[2])
        if (
            kind == "file" and len(row) == 5 and type(row[2]) is int and isinstance(row[3], str)
            and isinstance(row[4], bool)
        ):  # fmt: skip
            return cls(path, kind, size=row[2], digest=row[3], executable=row[4])
        raise SnapshotError(f"{path!r}: not a dir, file or link entry")


@dataclass(frozen=True, slots=True)
class Tree:
    """A version's files: entries sorted by path, and the contents of its files by digest
    (empty for a tree read from a manifest alone)."""

    entries: tuple[Entry, ...]
    blobs: Mapping[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    def canonical(self) -> bytes:
        """The canonical JSON the digest is the SHA-256 of."""
        data = {"format": FORMAT, "entries": [e.row() for e in self.entries]}
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode()

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of :meth:`canonical`: the version's files' hash."""
        return hashlib.sha256(self.canonical()).hexdigest()

    @property
    def size(self) -> int:
        """Bytes of its files, each counted once per path."""
        return sum(e.size for e in self.entries)

    @classmethod
    def from_manifest(cls, text: bytes | str, limits: TreeLimits | None = None) -> Tree:
        """A tree from its canonical JSON, :func:`check`-ed; :class:`SnapshotError` if it is
        not one."""
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as err:
            raise SnapshotError(f"not a manifest: {err}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise SnapshotError(f"not a manifest of format {FORMAT!r}")
        rows = data.get("entries")
        if not isinstance(rows, list):
            raise SnapshotError("a manifest's entries are a list")
        tree = cls(tuple(Entry.from_row(row) for row in rows))
        check(tree, limits or TreeLimits())
        return tree


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _refuse(rel: str, what: str) -> SnapshotError:
    return SnapshotError(f"{rel or '.'}: {what}")


def _read_file(fd: int, name: str, rel: str, budget: int) -> tuple[bytes, bool]:
    """A regular file's bytes (at most ``budget``, else refused) and whether it is executable."""
    try:
        file_fd = os.open(name, _READ_FILE, dir_fd=fd)
    except OSError as err:
        raise _refuse(rel, f"cannot read ({err.strerror})") from None
    try:
        info = os.fstat(file_fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(rel, "changed into something else while it was read")
        if info.st_size > budget:
            raise _refuse(rel, f"{info.st_size} bytes: over the limit of the files in all")
        chunks, got = [], 0
        while chunk := os.read(file_fd, _CHUNK):
            got += len(chunk)
            if got > budget:
                raise _refuse(rel, "grew past the limit of the files in all while it was read")
            chunks.append(chunk)
    except OSError as err:
        raise _refuse(rel, f"cannot read ({err.strerror})") from None
    finally:
        os.close(file_fd)
    return b"".join(chunks), bool(info.st_mode & 0o111)


def _name(raw: str, rel_dir: str) -> str:
    """The entry's relative path; a name that is not UTF-8 is refused."""
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(raw)
        raise _refuse(rel_dir, f"holds a name that is not UTF-8: {shown!r}") from None
    return f"{rel_dir}/{raw}" if rel_dir else raw


def scan(
    directory: str | Path, limits: TreeLimits | None = None, *, refuse: Sequence[str] = ()
) -> Tree:
    """Read ``directory`` (the top itself may be a link to one) into a :class:`Tree`;
    :class:`SnapshotError` names what cannot be read or kept (see the module), and a
    directory that holds one of ``refuse`` or lies inside one (the referee's outputs and keys:
    a bot's copy is readable by the bot)."""
    limits = limits or TreeLimits()
    top = os.fspath(directory)
    real = os.path.realpath(top)
    for private in (os.path.realpath(p) for p in refuse):
        if _within(private, real) or _within(real, private):
            raise SnapshotError(f"{top}: holds or lies in the referee's private {private}")
    try:
        top_fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SnapshotError(f"{top}: no such directory") from None
    except NotADirectoryError:
        raise SnapshotError(f"{top}: not a directory") from None
    except OSError as err:
        raise SnapshotError(f"{top}: cannot read ({err.strerror})") from None
    entries: list[Entry] = []
    blobs: dict[str, bytes] = {}
    total = 0
    stack: list[tuple[int, str, int]] = [(top_fd, "", 0)]
    opened: list[int] = []
    try:
        while stack:
            fd, rel_dir, depth = stack.pop()
            try:
                with os.scandir(fd) as found:
                    names = sorted(item.name for item in found)
            except OSError as err:
                raise _refuse(rel_dir, f"cannot list ({err.strerror})") from None
            opened.append(fd)
            for raw in names:
                rel = _name(raw, rel_dir)
                if len(entries) >= limits.max_entries:
                    raise SnapshotError(f"{top}: more than {limits.max_entries} entries")
                if len(rel.encode()) > limits.max_path:
                    raise _refuse(rel, f"a path longer than {limits.max_path} bytes")
                if depth + 1 > limits.max_depth:
                    raise _refuse(rel, f"deeper than {limits.max_depth} directories")
                try:
                    info = os.stat(raw, dir_fd=fd, follow_symlinks=False)
                except OSError as err:
                    raise _refuse(rel, f"cannot read ({err.strerror})") from None
                mode = info.st_mode
                if stat.S_ISDIR(mode):
                    try:
                        child = os.open(raw, _READ_DIR, dir_fd=fd)
                    except OSError as err:
                        raise _refuse(rel, f"cannot read ({err.strerror})") from None
                    entries.append(Entry(rel, "dir"))
                    stack.append((child, rel, depth + 1))
                elif stat.S_ISLNK(mode):
                    target = os.readlink(raw, dir_fd=fd)
                    if len(os.fsencode(target)) > limits.max_path or "\0" in target:
                        raise _refuse(rel, "a link whose target is too long")
                    _name(target, rel_dir)  # (a target that is not UTF-8 is refused too)
                    entries.append(Entry(rel, "link", target=target))
                elif stat.S_ISREG(mode):
                    data, executable = _read_file(fd, raw, rel, limits.max_bytes - total)
                    total += len(data)
                    digest = hashlib.sha256(data).hexdigest()
                    blobs[digest] = data
                    entries.append(Entry(rel, "file", len(data), digest, executable))
                else:
                    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket or device file"
                    raise _refuse(rel, f"{kind}: a version holds files, directories and links")
    finally:
        for fd in {top_fd, *opened, *(fd for fd, _, _ in stack)}:
            os.close(fd)
    entries.sort(key=lambda e: e.path.encode())
    return Tree(tuple(entries), blobs)


def check(tree: Tree, limits: TreeLimits | None = None) -> None:
    """:class:`SnapshotError` unless every entry of ``tree`` is safe to write below a directory
    (see the module) and the tree is within ``limits``."""
    limits = limits or TreeLimits()
    if len(tree.entries) > limits.max_entries:
        raise SnapshotError(f"more than {limits.max_entries} entries")
    dirs: set[str] = {""}
    seen: set[str] = set()
    total = 0
    previous = b""
    for entry in tree.entries:
        path = entry.path
        encoded = path.encode()
        parts = path.split("/")
        if (
            not path or path.startswith("/") or "\0" in path or len(encoded) > limits.max_path
            or any(part in ("", ".", "..") for part in parts) or len(parts) > limits.max_depth
        ):  # fmt: skip
            raise SnapshotError(f"{path!r}: not a relative, normalised path within the limits")
        if path in seen or encoded <= previous:
            raise SnapshotError(f"{path!r}: entries out of order or repeated")
        parent = path.rpartition("/")[0]
        if parent not in dirs:
            raise SnapshotError(f"{path!r}: its parent is not a directory of the tree")
        seen.add(path)
        previous = encoded
        if entry.kind == "dir":
            dirs.add(path)
        elif entry.kind == "file":
            total += entry.size
            if entry.size < 0 or len(entry.digest) != 64 or total > limits.max_bytes:
                raise SnapshotError(f"{path!r}: a bad size or digest, or over the size limit")
        elif entry.kind == "link":
            if not entry.target or "\0" in entry.target or len(entry.target) > limits.max_path:
                raise SnapshotError(f"{path!r}: a link's target must be 1-{limits.max_path} bytes")
        else:
            raise SnapshotError(f"{path!r}: unknown kind {entry.kind!r}")


def materialize(tree: Tree, blob: Callable[[str], bytes], dest: Path) -> None:
    """Write ``tree`` (checked first) into ``dest``, a new directory, read-only when done:
    ``blob(digest)`` gives each file's contents, verified against its digest and size.
    :class:`SnapshotError` if a content does not match (``dest`` is then left for the caller
    to remove)."""
    check(tree)
    os.mkdir(dest, 0o700)
    made = [dest]
    for entry in tree.entries:
        path = dest / entry.path
        if entry.kind == "dir":
            os.mkdir(path, 0o700)
            made.append(path)
        elif entry.kind == "link":
            os.symlink(entry.target, path)
        else:
            data = blob(entry.digest)
            if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.digest:
                raise SnapshotError(f"{entry.path}: its stored contents do not match its digest")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, 0o555 if entry.executable else 0o444)
            finally:
                os.close(fd)
    for directory in reversed(made):  # children first: a read-only parent is made last
        os.chmod(directory, 0o555)
