"""What a version's snapshot costs (referee/tournament/snapshots): reading a bot's directory
into a tree, storing it in a SQLite store and writing its read-only copy (``ladder add
--bot-dir``), writing the copy from the store on a machine that lacks it (a worker's first
game of the version), and checking a copy already there (a process's first game of it).

Run: ``python -m bench.bench_snapshots [DIR ...]`` (default: the C sample bot's directory, with
its binary, and the Node sample bot's, with its ``node_modules``: ``make -C sample_bots/c``
and ``npm ci`` in ``sample_bots/node`` first). Prints one JSON line per directory, the medians
of ``--runs`` runs, in seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from referee.tournament.snapshots import SnapshotStore, remove_tree, scan

ROOT = Path(__file__).resolve().parents[1]


def measure(directory: Path) -> dict[str, float]:
    """One run's seconds for each step, in a fresh store."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        try:
            began = time.perf_counter()
            tree = scan(directory)
            read = time.perf_counter()
            SnapshotStore(base / "store.sqlite", base / "here").put(tree)
            added = time.perf_counter()
            SnapshotStore(base / "store.sqlite", base / "there").files(tree.digest)
            written = time.perf_counter()
            SnapshotStore(base / "store.sqlite", base / "there").files(tree.digest)
            checked = time.perf_counter()
        finally:
            for copy in ("here", "there"):
                remove_tree(base / copy)
    return {"scan": read - began, "store_and_copy": added - read,
            "copy_from_store": written - added, "check_copy": checked - written,
            "entries": len(tree.entries), "bytes": tree.size}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    bots = ROOT / "sample_bots"
    parser.add_argument("dirs", nargs="*", type=Path, default=[bots / "c", bots / "node"])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for directory in args.dirs:
        runs = [measure(directory) for _ in range(args.runs)]
        shown = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
        print(json.dumps({"dir": str(directory), **shown}))


if __name__ == "__main__":
    main()
