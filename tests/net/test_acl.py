"""The ACL entry that lets one bot uid, and no other, into the referee's ipc directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.net.acl import allow_search


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory every uid can reach (pytest's own are under a 0700 one), removed after."""
    path = Path(tempfile.mkdtemp(prefix="gin-acl-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def reads(uid: int, path: Path) -> bool:
    """Whether ``uid`` (no groups) can read ``path``, tried by a real process."""
    done = subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "cat", str(path)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="ONLY ROOT CAN ACT AS OTHER UIDS TO CHECK IT")
def test_each_uid_let_in_can_search_the_directory_and_no_other(open_dir: Path) -> None:
    private = open_dir / "ipc"
    private.mkdir(mode=0o700)
    target = private / "referee.sock-stand-in"
    target.write_text("x")
    target.chmod(0o644)
    assert not reads(60901, target)
    allow_search(str(private), 60901)
    allow_search(str(private), 60902)
    allow_search(str(private), 60901)  # again: one entry
    assert reads(60901, target) and reads(60902, target)
    assert not reads(60903, target)
    assert os.stat(private).st_mode & 0o007 == 0  # not opened to others
