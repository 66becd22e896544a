"""A version's files (referee/tournament/snapshots): the digest covers exactly the paths,
kinds, executable bits, contents and link targets; reading a directory refuses what a version
cannot hold and follows no link; a tree from elsewhere (the store, an upload) is checked before
it is written, so it never writes outside its directory; the copy a bot runs in is read-only,
written from the store on a machine that lacks it, and checked against its digest."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.tournament.snapshots import (
    FORMAT,
    Entry,
    SnapshotError,
    SnapshotStore,
    Tree,
    TreeLimits,
    materialize,
    scan,
)

pytestmark = pytest.mark.timeout(30)


def bot_dir(root: Path) -> Path:
    """A small bot: a script, an executable, a package, an empty directory, a link out."""
    root.mkdir()
    (root / "bot.py").write_text("print('hello')\n")
    (root / "run.sh").write_text("#!/bin/sh\nexec python3 bot.py\n")
    (root / "run.sh").chmod(0o755)
    (root / "lib").mkdir()
    (root / "lib" / "data.bin").write_bytes(bytes(range(256)))
    (root / "empty").mkdir()
    os.symlink("/usr/bin/python3", root / "python")
    return root


def test_the_digest_covers_the_files_and_nothing_else(tmp_path: Path) -> None:
    first = scan(bot_dir(tmp_path / "a"))
    assert [(e.path, e.kind) for e in first.entries] == [
        ("bot.py", "file"), ("empty", "dir"), ("lib", "dir"), ("lib/data.bin", "file"),
        ("python", "link"), ("run.sh", "file"),
    ]  # fmt: skip
    copy = bot_dir(tmp_path / "b")  # the same files, made later, other modes and times
    (copy / "bot.py").chmod(0o600)
    os.utime(copy / "lib" / "data.bin", (1, 1))
    assert scan(copy).digest == first.digest

    def relink(d: Path) -> None:
        (d / "python").unlink()
        os.symlink("/usr/bin/python3.11", d / "python")

    changes: list[Callable[[Path], object]] = [
        lambda d: (d / "bot.py").write_text("print('other')\n"),
        lambda d: (d / "bot.py").chmod(0o700),  # executable now
        lambda d: (d / "empty").rmdir(),
        relink,
        lambda d: (d / "lib" / "data.bin").rename(d / "lib" / "data2.bin"),
    ]
    for i, change in enumerate(changes):
        changed = bot_dir(tmp_path / f"c{i}")
        change(changed)
        assert scan(changed).digest != first.digest
    assert Tree.from_manifest(first.canonical()).digest == first.digest


def test_reading_refuses_what_a_version_cannot_hold(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no such directory"):
        scan(tmp_path / "none")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SnapshotError, match="not a directory"):
        scan(tmp_path / "file")
    fifo = bot_dir(tmp_path / "fifo")
    os.mkfifo(fifo / "lib" / "pipe")  # opening it would wait for a writer: never opened
    with pytest.raises(SnapshotError, match=r"lib/pipe: a FIFO"):
        scan(fifo)
    sock = bot_dir(tmp_path / "sock")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(sock / "s"))
        with pytest.raises(SnapshotError, match=r"^s: a socket or device file"):
            scan(sock)
    finally:
        server.close()
    odd = bot_dir(tmp_path / "odd")
    (odd / os.fsdecode(b"bad\xffname")).write_text("x")
    with pytest.raises(SnapshotError, match="not UTF-8"):
        scan(odd)
    big = bot_dir(tmp_path / "big")
    with pytest.raises(SnapshotError, match="over the limit"):
        scan(big, TreeLimits(max_bytes=200))
    with pytest.raises(SnapshotError, match="more than 3 entries"):
        scan(big, TreeLimits(max_entries=3))
    deep = tmp_path / "deep"
    (deep / "a" / "b" / "c").mkdir(parents=True)
    with pytest.raises(SnapshotError, match="deeper than 2"):
        scan(deep, TreeLimits(max_depth=2))


def test_reading_follows_no_link(tmp_path: Path) -> None:
    """A link is kept as its target's text: the organiser's files behind it are never read
    into a version (the scan runs as the referee's user)."""
    secret = tmp_path / "organiser" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("the organiser's secret")
    root = bot_dir(tmp_path / "bot")
    os.symlink(secret, root / "steal.txt")
    os.symlink(secret.parent, root / "stealdir")
    tree = scan(root)
    links = {e.path: e.target for e in tree.entries if e.kind == "link"}
    assert links["steal.txt"] == str(secret) and links["stealdir"] == str(secret.parent)
    assert not any(b"secret" in data for data in tree.blobs.values())
    assert not any(e.path.startswith("stealdir/") for e in tree.entries)


def _raw(row: list[object]) -> Entry:
    """An entry as a hostile tree would hold it (no check)."""
    path, kind = str(row[0]), str(row[1])
    if kind == "file":
        return Entry(path, kind, int(str(row[2])), str(row[3]), bool(row[4]))
    return Entry(path, kind, target=str(row[2]) if kind == "link" else "")


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([["/etc/passwd", "dir"]], "relative, normalised"),
        ([["a", "dir"], ["a/../../x", "dir"]], "relative, normalised"),
        ([["a", "link", "/etc"], ["a/passwd", "file", 1, "0" * 64, False]], "parent is not a dir"),
        ([["b", "dir"], ["a", "dir"]], "out of order"),
        ([["a", "dir"], ["a", "dir"]], "out of order"),
        ([["a", "fifo"]], "not a dir, file or link|unknown kind"),
        ([["a", "file", 1, "short", False]], "bad size or digest"),
        ([["a", "link", ""]], "target"),
    ],
)
def test_a_hostile_tree_is_refused_before_anything_is_written(
    tmp_path: Path, entries: list[list[object]], problem: str
) -> None:
    out = tmp_path / "out"
    with pytest.raises(SnapshotError, match=problem):
        Tree.from_manifest(json.dumps({"format": FORMAT, "entries": entries}))
    with pytest.raises(SnapshotError, match=problem):
        materialize(Tree(tuple(_raw(row) for row in entries)), lambda digest: b"x", out)
    assert not out.exists()


def test_stored_contents_that_do_not_match_their_digest_are_refused(tmp_path: Path) -> None:
    tree = scan(bot_dir(tmp_path / "bot"))
    with pytest.raises(SnapshotError, match="do not match its digest"):
        materialize(tree, lambda digest: b"tampered", tmp_path / "out")


def _modes(root: Path) -> set[tuple[str, int]]:
    return {
        (str(p.relative_to(root)), stat.S_IMODE(p.lstat().st_mode))
        for p in [root, *root.rglob("*")]
        if not p.is_symlink()
    }


def test_a_version_is_played_from_a_read_only_copy_written_from_the_store(tmp_path: Path) -> None:
    source = bot_dir(tmp_path / "bot")
    location = tmp_path / "store.sqlite"
    here = SnapshotStore(location, tmp_path / "out" / "entrants")
    added = here.add(source)
    files = [p for p in source.rglob("*") if p.is_file() and not p.is_symlink()]
    assert (added.entries, added.size) == (6, sum(p.stat().st_size for p in files))
    copy = here.files(added.digest)
    assert copy == tmp_path / "out" / "entrants" / added.digest / "files"
    assert _modes(copy) == {
        (".", 0o555), ("bot.py", 0o444), ("run.sh", 0o555), ("lib", 0o555),
        ("lib/data.bin", 0o444), ("empty", 0o555),
    }  # fmt: skip
    assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o700  # the gate of rlimits seats
    assert os.readlink(copy / "python") == "/usr/bin/python3"
    (source / "bot.py").write_text("changed after it was added\n")
    assert (copy / "bot.py").read_text() == "print('hello')\n"
    # another machine of the store (another root) writes it from the store, racing itself
    there = SnapshotStore(location, tmp_path / "elsewhere")
    got: list[Path] = []
    racers = [threading.Thread(target=lambda: got.append(there.files(added.digest)))
              for _ in range(3)]  # fmt: skip
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert len(set(got)) == 1 and scan(got[0]).digest == added.digest
    assert [p.name for p in (tmp_path / "elsewhere").iterdir()] == [added.digest]
    # a copy changed on disk is caught (by a process that had not checked it yet)
    os.chmod(copy, 0o755)
    os.chmod(copy / "bot.py", 0o644)
    (copy / "bot.py").write_text("tampered\n")
    with pytest.raises(SnapshotError, match="changed since they were written"):
        SnapshotStore(location, tmp_path / "out" / "entrants").files(added.digest)
    with pytest.raises(SnapshotError, match="no version's files"):
        there.files("0" * 64)
