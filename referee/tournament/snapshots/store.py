"""Where versions' files are kept and played from.

:meth:`SnapshotStore.add` reads a directory (:func:`~.tree.scan`), stores its tree in the
results store (:mod:`.tables`) and returns its :class:`Snapshot`: the digest every game of
the version records. :meth:`SnapshotStore.files` gives the directory a version's bot runs in
on this machine, ``ROOT/<digest>/files`` (``ROOT`` is ``OUT/entrants``), writing it from the
store the first time (into a temporary directory renamed into place: several processes may
race, one wins, and none ever sees a half-written tree) and checking its digest once per
process when it is already there. The tree is read-only (files 0444 or 0555, directories
0555); ``ROOT/<digest>`` itself is 0700, so a bot that runs as a uid of its own without mounts
(``rlimits``) reaches only the tree its seat was let into (:mod:`referee.net.botuid`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.net.private import private_dir, private_opener
from referee.tournament.snapshots.tables import SnapshotTables
from referee.tournament.snapshots.tree import (
    SnapshotError,
    Tree,
    TreeLimits,
    materialize,
    scan,
)

__all__ = ["Snapshot", "SnapshotStore", "remove_tree"]

FILES = "files"
"""The tree's directory inside ``ROOT/<digest>``."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A stored version's files."""

    digest: str
    """SHA-256 (hex) of the tree's canonical form."""
    entries: int
    size: int
    """Bytes of its files."""


def remove_tree(path: Path) -> None:
    """Remove a directory tree made read-only (its directories are made writable first)."""
    if not path.exists():
        return
    for here, dirs, _ in os.walk(path):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(here, name), 0o700, follow_symlinks=False)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    shutil.rmtree(path, ignore_errors=True)


class SnapshotStore:
    """The versions' files of one results store (``location``: a SQLite file or a PostgreSQL
    URL), played from ``root`` on this machine (None: only stored, as by ``ladder add
    --store URL``)."""

    def __init__(self, location: str | Path, root: Path | None) -> None:
        self.location = location
        self.root = None if root is None else root.absolute()
        self._checked: set[str] = set()
        self._lock = threading.Lock()

    def add(self, directory: str | Path, limits: TreeLimits | None = None) -> Snapshot:
        """Read ``directory`` and store it; its snapshot. :class:`SnapshotError` names what
        cannot be read or kept, :class:`~referee.tournament.store.StoreError` a store that
        cannot be used."""
        return self.put(scan(directory, limits))

    def put(self, tree: Tree) -> Snapshot:
        """Store a tree (with its contents) and write it under ``root``; its snapshot."""
        with SnapshotTables(self.location) as tables:
            tables.put(tree, now=time.time())
        if self.root is not None:
            self._write(tree.digest, tree, lambda digest: tree.blobs[digest])
        return Snapshot(tree.digest, len(tree.entries), tree.size)

    def tree(self, digest: str) -> Tree:
        """A stored tree (its manifest: no contents); :class:`SnapshotError` if none."""
        with SnapshotTables(self.location) as tables:
            text = tables.manifest(digest)
        if text is None:
            raise SnapshotError(f"no version's files {digest[:16]} in {self.location}")
        tree = Tree.from_manifest(text, TreeLimits(max_bytes=1 << 62, max_entries=1 << 30))
        if tree.digest != digest:
            raise SnapshotError(f"the stored manifest of {digest[:16]} hashes otherwise")
        return tree

    def path(self, digest: str) -> Path:
        """Where the tree ``digest`` is (or would be) on this machine."""
        if self.root is None:
            raise ValueError("a store without a directory plays nothing")
        return self.root / digest / FILES

    def ready(self, digest: str) -> Path | None:
        """The tree's directory if it was checked by this process already (no I/O), else None:
        :meth:`files` then writes or checks it."""
        with self._lock:
            return self.path(digest) if digest in self._checked else None

    def files(self, digest: str) -> Path:
        """The directory holding the version's files on this machine, written from the store
        if missing and checked against its digest (once per process). Blocking: run it in a
        thread. :class:`SnapshotError` if the store lacks it or it does not match."""
        path = self.path(digest)
        with self._lock:
            if digest in self._checked:
                return path
        if not path.is_dir():
            tree = self.tree(digest)
            with SnapshotTables(self.location) as tables:
                self._write(digest, tree, tables.blob)
        found = scan(path, TreeLimits(max_bytes=1 << 62, max_entries=1 << 30, max_depth=1 << 20))
        if found.digest != digest:
            raise SnapshotError(
                f"{path}: its files hash to {found.digest[:16]}, not {digest[:16]}: changed"
                " since they were written (remove the directory: it is written again)"
            )
        with self._lock:
            self._checked.add(digest)
        return path

    def _write(self, digest: str, tree: Tree, blob: Callable[[str], bytes]) -> None:
        """Write the tree to ``root/digest`` unless it is there (see the module)."""
        assert self.root is not None
        final = self.root / digest
        if (final / FILES).is_dir():
            return
        private_dir(self.root)
        temp = self.root / f".new-{digest[:16]}-{secrets.token_hex(4)}"
        try:
            os.mkdir(temp, 0o700)
            materialize(tree, blob, temp / FILES)
            with open(temp / "manifest.json", "wb", opener=private_opener) as manifest:
                manifest.write(tree.canonical())
            try:
                os.rename(temp, final)
            except OSError:  # written meanwhile by another process (or a stale empty one)
                if not (final / FILES).is_dir():
                    raise
        finally:
            remove_tree(temp)
