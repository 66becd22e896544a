"""A version's files: a directory snapshotted when it is added, kept content-addressed in the
results store and played from a read-only copy (docs/ladder.md, "What a version is").

:class:`SnapshotStore` is the front door: ``add(directory) -> Snapshot`` (its ``digest`` is
the version's files' hash, recorded in every game), ``put(tree)`` for a tree read otherwise (an
upload), ``files(digest)`` for the directory a bot runs in. :mod:`.tree` reads, checks and
writes trees; :mod:`.tables` keeps them in the store.
"""

from referee.tournament.snapshots.store import Snapshot, SnapshotStore, remove_tree
from referee.tournament.snapshots.tree import (
    FORMAT,
    Entry,
    SnapshotError,
    Tree,
    TreeLimits,
    check,
    materialize,
    scan,
)

__all__ = [
    "FORMAT",
    "Entry",
    "Snapshot",
    "SnapshotError",
    "SnapshotStore",
    "Tree",
    "TreeLimits",
    "check",
    "materialize",
    "remove_tree",
    "scan",
]
