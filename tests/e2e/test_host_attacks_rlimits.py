"""The host attacks of ``test_host_attacks.py`` at ``rlimits``, the level a root referee gets
where the kernel refuses namespaces: what holds (a stranger's uid, the limits) and what does
not (the host's network and ``/proc``), as docs/security.md's table of levels says. Each
"does not hold" row is asserted as an attack that succeeds, so the table stays true; strangers'
runs refuse this level unless told (``tests/test_cli_sandbox.py``).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.net.limits import Limits

from .test_host_attacks import another_tournaments_key, plant
from .test_rlimits_leftovers import root_with_setpriv  # noqa: F401 (autouse: root, util-linux)
from .test_sandbox_attacks import assert_victim_unharmed, attack

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory strangers may enter (pytest's are 0700: nothing in them is reachable)."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="gin-rlimits-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_roots_files_are_refused_by_their_modes(tmp_path: Path, open_dir: Path) -> None:
    secret, public = plant(open_dir / "exposed")
    paths = ["/etc/shadow", str(secret), str(public)]
    result, report = await attack(tmp_path / "m", "read @" + " @".join(paths), sandbox="rlimits")
    assert result.sandbox.startswith("rlimits+uid"), result.sandbox
    reads = report["reads"]
    assert reads["/etc/shadow"] == reads[str(secret)] == "Permission denied", reads
    assert reads[str(public)] == "anyone's"  # it sees the host's paths as they are
    assert_victim_unharmed(result)


async def test_other_runs_outputs_are_refused_by_their_modes(
    tmp_path: Path, open_dir: Path
) -> None:
    key = another_tournaments_key(open_dir / "runs" / "cup")
    result, report = await attack(tmp_path / "m", f"read @{key}", sandbox="rlimits")
    assert report["reads"] == {str(key): "Permission denied"}, report
    assert_victim_unharmed(result)


async def test_a_unix_socket_in_a_root_only_directory_is_refused(
    tmp_path: Path, open_dir: Path
) -> None:
    hidden = open_dir / "run"
    hidden.mkdir(mode=0o700)
    path = str(hidden / "service.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        os.chmod(path, 0o666)
        server.listen(8)
        result, report = await attack(tmp_path / "m", f"connect @{path}", sandbox="rlimits")
    assert report["connect"][path] == "PermissionError", report
    assert_victim_unharmed(result)


async def test_a_fork_bomb_stops_at_the_process_limit(tmp_path: Path) -> None:
    limits = Limits(processes=64)
    _, report = await attack(tmp_path / "m", "forkcount 400", sandbox="rlimits", limits=limits)
    assert 0 < report["forked"] < 64, report


async def test_what_rlimits_does_not_stop_loopback_tcp_and_the_referees_command_line(
    tmp_path: Path,
) -> None:
    """The rows docs/security.md marks "yes" for ``rlimits+uid``: it reaches a loopback port
    and reads the referee's command line (no network or PID namespace)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        result, report = await attack(tmp_path / "t", f"tcp {port}", sandbox="rlimits")
    assert report == {"connected": True}, report
    cmdline = f"/proc/{os.getpid()}/cmdline"
    with open(cmdline) as f:  # noqa: ASYNC230 (procfs: no wait)
        own = f.read(100)
    _, report = await attack(tmp_path / "c", f"read @{cmdline}", sandbox="rlimits")
    assert report["reads"][cmdline] == own, report
    assert_victim_unharmed(result)
