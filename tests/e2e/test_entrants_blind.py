"""An entrant sees only its own files. A real ladder plays a spy entrant (tests/bots/
entrant_spy.py) against a victim whose program holds a secret: the spy learns every path it can
(its working directory and those above it, which name the ladder's directory; its command line;
its environment; ``/proc``; the mount table) and is told more (the victim's source directory
and its snapshot's path, the store, ``deal.key``, the log, the organiser's configuration, the
PostgreSQL server's socket and port); it lists, reads and connects to all of it. Each test
asserts that it really tried (it found the ladder's directory from its own position, and tried
every hint), then that it read nothing but its own files and what every process may read: no
byte of the victim's program or the organiser's file, no name of the victim's snapshot, not
the store, the key or the log. On SQLite and on PostgreSQL (where the ladder writes the
snapshots from the store), at ``namespaces`` and, as root, at ``rlimits``. The control: the
same spy, unconfined, reads the victim's program."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.net.sandbox import SandboxLevel, detect
from tests.e2e.helpers import BOTS, PY
from tests.pgserver import pg_server, why_unavailable
from tests.strangers import REPO, stranger_python
from tests.tournament.ladder_inproc import add_entrant, python_bot, run_ladder

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

SECRET = secrets.token_hex(16)
VICTIM = f"# {SECRET}\nimport sys\nfrom sample_bots.random_bot import main\nsys.exit(main())\n"
ORGANISER = f"# the organiser's configuration {SECRET}\n"


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory others may enter but not list (0711), as a ladder's parent is on a host
    whose bots run without mounts (pytest's are 0700: nothing in them is reachable)."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="gin-blind-"))
    path.chmod(0o711)
    yield path
    subprocess.run(["chmod", "-R", "u+w", str(path)], check=False)
    shutil.rmtree(path, ignore_errors=True)


def boot(directory: Path, main: str, python: str) -> str:
    """The command of a bot in ``directory`` running ``main`` with ``python``: one whose
    packages are not the SDK's (Debian's, for a stranger's uid) starts through a ``boot.py``
    that puts this checkout on its path."""
    if python == PY:
        return f"{PY} {main}"
    (directory / "boot.py").write_text(
        f"import runpy, sys\nsys.path.insert(0, {str(REPO)!r})\nsys.argv = [{main!r}]\n"
        f"runpy.run_path({main!r}, run_name='__main__')\n"
    )
    return f"{python} boot.py"


def entrants(root: Path, location: str | Path, out: Path, ladder: str = "",
             extra_hints: list[str] | None = None, tcp: list[tuple[str, int]] | None = None,
             python: str = PY) -> dict[str, Any]:  # fmt: skip
    """The organiser's file, the victim and the spy added (the spy told every path it could
    know of); what the test checks against."""
    organiser = root / "organiser"
    organiser.mkdir()
    (organiser / "ladder.toml").write_text(ORGANISER)
    (organiser / "ladder.toml").chmod(0o644)  # readable by anyone who reaches it...
    # ...which, without mounts (rlimits), is anyone: there the organiser keeps it private
    organiser.chmod(0o755 if python == PY else 0o700)
    victim = python_bot(root / "submissions" / "victim", VICTIM)
    (victim / "notes.txt").write_text(f"victim's notes {SECRET}\n")
    command = boot(victim, "bot.py", python)
    victim.chmod(0o700)  # the organiser keeps submissions private: the referee copies them
    is_local = isinstance(location, Path)
    add_entrant(location, out if is_local else None, "victim", command, victim, ladder)
    from referee.tournament.snapshots import scan

    victim_hash = scan(victim).digest
    spy = root / "submissions" / "spy"
    spy.mkdir(parents=True)
    shutil.copy(BOTS / "entrant_spy.py", spy / "spy.py")
    hints = [str(victim), str(victim / "bot.py"), str(victim / "notes.txt"), str(organiser),
             str(organiser / "ladder.toml"), str(out), str(out / "tournament.sqlite"),
             str(out / "deal.key"), str(out / "referee.log.jsonl"), str(out / "games"),
             str(out / "stderr"), str(out / "entrants" / victim_hash),
             str(out / "entrants" / victim_hash / "files" / "bot.py"),
             os.path.expanduser("~/.config/gin-referee"), *(extra_hints or [])]  # fmt: skip
    (spy / "hints.json").write_text(json.dumps({"paths": hints, "tcp": tcp or []}))
    command = boot(spy, "spy.py", python)
    spy.chmod(0o700)
    add_entrant(location, out if is_local else None, "spy", command, spy, ladder)
    return {"hints": hints, "victim_hash": victim_hash, "spy_hash": scan(spy).digest}


def reports(out: Path) -> list[dict[str, Any]]:
    """The spy's reports, one per game it played (from its stderr files)."""
    found = []
    for path in sorted((out / "stderr").glob("*.spy.v1.stderr")):
        lines = [line for line in path.read_text().splitlines() if line.startswith("SPY ")]
        found += [json.loads(line.removeprefix("SPY ")) for line in lines]
    return found


def assert_blind(report: dict[str, Any], out: Path, known: dict[str, Any]) -> None:
    """It tried everything (the ladder's directory found from its own position, every hint
    tried), and read nothing but its own files."""
    own = out / "entrants" / known["spy_hash"] / "files"
    assert report["learned"]["cwd"] == [str(own)], report["learned"]["cwd"]
    assert str(out) in report["learned"]["parents"]  # its position names the ladder
    assert set(known["hints"]) <= set(report["tried"])
    assert "hints.json" in report["listed"][str(own)]  # it sees its own files
    leaks = [(where, path) for where in ("read", "listed", "learned")
             for path, got in report[where].items()
             if SECRET in json.dumps([path, got])]  # fmt: skip
    assert not leaks  # no byte of the victim's program, notes or the organiser's
    names = json.dumps(list(report["listed"].values()))
    assert known["victim_hash"] not in names  # nor its snapshot's name (but as a hint)
    for path in known["hints"]:
        got = report["read"].get(path, report["listed"].get(path))
        assert not isinstance(got, list) or path == str(out) or not got, (path, got)
        if path in report["read"]:
            assert got == "missing" or str(got).startswith("error"), (path, got)
    listed = report["listed"].get(str(out))  # the ladder's directory: empty but the way in
    assert not isinstance(listed, list) or set(listed) <= {"entrants"}, listed


def require_namespaces() -> None:
    if detect().level is not SandboxLevel.NAMESPACES:
        pytest.skip(f"NO NAMESPACES HERE: {detect().reason}")


async def test_a_spy_entrant_reads_nothing_of_the_others(tmp_path: Path) -> None:
    require_namespaces()
    out = tmp_path / "out"
    known = entrants(tmp_path, out / "tournament.sqlite", out)
    pairs = await run_ladder(out, 1, concurrency=1)
    assert {p.outcome for p in pairs} == {"rated"}
    found = reports(out)
    assert len(found) == 1  # its pair's one game
    for report in found:
        assert_blind(report, out, known)
    # the control: the same spy, unconfined, in its copy, reads the victim's program
    own = out / "entrants" / known["spy_hash"] / "files"
    done = await asyncio.create_subprocess_exec(
        PY, "spy.py", cwd=own, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "GIN_REFEREE_ENDPOINT": ""},
    )  # fmt: skip
    _, err = await asyncio.wait_for(done.communicate(), 60)
    free = json.loads(err.decode().split("SPY ", 1)[1])
    assert SECRET in json.dumps(free["read"])  # the victim's program, read
    assert known["victim_hash"] in json.dumps(list(free["listed"].values()))  # its snapshot, seen


@pytest.mark.skipif(why_unavailable() is not None, reason=f"NO POSTGRESQL: {why_unavailable()}")
async def test_a_spy_entrant_reads_nothing_of_the_others_on_postgresql(tmp_path: Path) -> None:
    """The store is a PostgreSQL database: the ladder writes each version's files from it;
    the spy also tries the server's socket and port."""
    require_namespaces()
    out = tmp_path / "out"
    with pg_server("fsync=off") as server:
        url = server.database()
        socket_path = str(server.root / f".s.PGSQL.{server.port}")
        known = entrants(tmp_path, url, out, ladder="lad", extra_hints=[socket_path],
                         tcp=[("127.0.0.1", server.port)])  # fmt: skip
        assert not (out / "entrants").exists()  # added to the database only
        pairs = await run_ladder(out, 1, store=url, concurrency=1)
    assert {p.outcome for p in pairs} == {"rated"}
    found = reports(out)
    assert len(found) == 1
    for report in found:
        assert_blind(report, out, known)
        assert report["reached"][f"127.0.0.1:{server.port}"].startswith("error")
        assert str(report["read"].get(socket_path)).startswith(("missing", "error"))
        assert socket_path not in report["reached"]


async def test_a_spy_entrant_of_a_root_referee_reads_nothing_at_rlimits(open_dir: Path) -> None:
    """Without mounts the spy sees the host's paths as they are: its uid is let into its own
    files only (an ACL entry per closed directory, revoked when its seat ends)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("THE REFEREE IS NOT ROOT (OR NO SETPRIV): AT RLIMITS ITS BOTS ARE ITS OWN UID")
    out = open_dir / "out"
    python, _ = stranger_python(sdk=True)
    known = entrants(open_dir, out / "tournament.sqlite", out, python=python)
    pairs = await run_ladder(out, 1, concurrency=1, sandbox="rlimits", require_sandbox="rlimits")
    assert {p.outcome for p in pairs} == {"rated"}
    found = reports(out)
    assert len(found) == 1
    for report in found:
        assert_blind(report, out, known)
        assert report["listed"][str(out)] == "Permission denied"  # let in, not shown
    acl = os.listxattr(out)
    assert "system.posix_acl_access" not in acl or not _named_entries(out)  # all revoked


def _named_entries(path: Path) -> list[int]:
    """The uids named in a directory's ACL."""
    import struct

    raw = os.getxattr(path, "system.posix_acl_access")
    entries = [struct.unpack_from("<HHI", raw, 4 + 8 * i) for i in range((len(raw) - 4) // 8)]
    return [e[2] for e in entries if e[0] == 0x02]
