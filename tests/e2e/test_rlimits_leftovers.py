"""At ``rlimits`` a root referee's bot has no namespace of its own, but nothing it leaves on
the host outlives its seat (``referee/net/leftovers.py``): real attacker bots write files into
the host's shared directories (``/dev/shm`` is memory) and leave ``setsid`` grandchildren
sleeping; each test asserts that the attack really happened (the bot's own report, and the file
or process seen while the game runs), then that nothing of it remains once the match is over.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.net.botuid import bot_range

from .test_sandbox_attacks import assert_victim_unharmed, attack

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


@pytest.fixture(autouse=True)
def root_with_setpriv() -> None:
    if os.geteuid() != 0:
        pytest.skip("THE REFEREE IS NOT ROOT: AT RLIMITS ITS BOTS ARE ITS OWN UID")
    if shutil.which("setpriv") is None or shutil.which("prlimit") is None:
        pytest.skip("NO UTIL-LINUX SETPRIV/PRLIMIT: THERE IS NO RLIMITS LEVEL HERE")


@pytest.fixture
def shared_dirs() -> Iterator[list[Path]]:
    """A world-writable directory in ``/dev/shm`` and one in ``/tmp``, as the shared
    directories themselves are (so tests do not collide on their names)."""
    made = [
        Path(tempfile.mkdtemp(dir=top, prefix="gin-leftovers-")) for top in ("/dev/shm", "/tmp")
    ]
    for path in made:
        path.chmod(0o1777)
    yield made
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def bot_processes(marker: str) -> list[int]:
    """Pids of processes of a bot uid whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if uid in bot_range() and marker.encode() in cmdline:
            found.append(int(entry))
    return found


async def test_files_a_bot_writes_to_shared_directories_are_gone_with_its_seat(
    tmp_path: Path, shared_dirs: list[Path]
) -> None:
    args = "fill 8 " + " ".join(f"@{d}" for d in shared_dirs)
    result, report = await attack(tmp_path / "m", args, sandbox="rlimits")
    assert result.sandbox.startswith("rlimits+uid"), result.sandbox
    assert report["written"] == {str(d): "8 MiB" for d in shared_dirs}, report  # it happened
    assert_victim_unharmed(result)
    assert [list(d.iterdir()) for d in shared_dirs] == [[], []]


def without_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seats without a cgroup (as on a host that offers none), whose kill would otherwise
    end the grandchildren before the purge is reached."""
    from referee.net import spawn

    monkeypatch.setattr(spawn, "_seat_cgroup", lambda *args: None)


async def test_setsid_grandchildren_of_a_bot_are_gone_with_its_seat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_cgroups(monkeypatch)
    marker = "forkbomb"
    result, report = await attack(tmp_path / "m", f"{marker} 4", sandbox="rlimits")
    assert result.sandbox == "rlimits+uid", result.sandbox
    assert report["forked"] == 4, report  # the attack happened: four escaped its group
    assert_victim_unharmed(result)
    assert bot_processes(f"attacker.py\0{marker}") == []


async def test_without_the_purge_both_attacks_outlive_the_seat(
    tmp_path: Path, shared_dirs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with the purge turned off, the files and the grandchildren stay (the
    attacks are real), and are cleaned up here by the purge itself."""
    from referee.net import botuid, leftovers

    without_cgroups(monkeypatch)
    # uids no other test leases: the purge below comes after the seats' leases ended, and
    # would kill the bots of a test running beside this one (pytest -n) that leased the same
    monkeypatch.setattr(botuid, "_range", range(61900, 61910))
    purge = leftovers.purge
    monkeypatch.setattr(leftovers, "purge", lambda uid: None)
    args = "fill 2 " + " ".join(f"@{d}" for d in shared_dirs)
    await attack(tmp_path / "f", args, sandbox="rlimits")
    owners = {p.stat().st_uid for d in shared_dirs for p in d.iterdir()}
    assert len(owners) == 1 and owners <= set(bot_range()), owners
    await attack(tmp_path / "p", "forkbomb 2", sandbox="rlimits")
    left = bot_processes("attacker.py\0forkbomb")
    assert len(left) == 2, left
    for uid in {os.stat(f"/proc/{pid}").st_uid for pid in left} | owners:
        purge(uid)
    assert bot_processes("attacker.py\0forkbomb") == []
    assert [list(d.iterdir()) for d in shared_dirs] == [[], []]
