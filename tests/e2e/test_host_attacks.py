"""Attacks by real bot processes on the *host* of a root referee (tests/bots/attacker.py),
each played as a real match: root's files, host unix sockets (a real PostgreSQL with peer
authentication among them), other runs' outputs, ``/dev``, the process limit. The sandbox stops
each; a control at ``--sandbox none`` shows the attack is real where one can.

These tests need a root referee (CI runs as root): a referee that is not root runs its bots
as its own uid (docs/security.md, "Deploying"), which these guarantees do not cover.
"""

from __future__ import annotations

import os
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from referee.match import Deal
from referee.match.bots import BotSpec
from referee.match.config import MatchConfig
from referee.match.faults import FaultKind, FaultPolicy
from referee.match.result import MatchResult
from referee.match.runner import run_match
from referee.net import cgroups
from referee.net.botuid import bot_range
from referee.net.limits import Limits
from referee.net.private import private_dir
from referee.net.sandbox import SandboxLevel, detect
from referee.tournament.dealkey import KEY_FILE, _write
from tests.pgserver import pg_server, why_unavailable

from .helpers import BOTS, FAST, GREEDY, PY
from .test_sandbox_attacks import ATTACKER, assert_victim_unharmed, attack, attack_report

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


@pytest.fixture(autouse=True)
def root_namespaces() -> None:
    found = detect()
    if found.level is not SandboxLevel.NAMESPACES:
        pytest.skip(f"THE KERNEL REFUSES THE NAMESPACES SANDBOX HERE: {found.reason}")
    if os.geteuid() != 0:
        pytest.skip("THE REFEREE IS NOT ROOT: ITS BOTS RUN AS ITS OWN UID (docs/security.md)")


async def both_attack(
    out: Path, first: str, second: str
) -> tuple[MatchResult, list[dict[str, Any]]]:
    """One game between two attackers; their reports, seat by seat."""
    specs = []
    for args in (first, second):
        spec = BotSpec.parse(f"{ATTACKER} {args}")
        assert spec.command is not None
        specs.append(replace(spec, command=replace(spec.command, sandbox="namespaces")))
    config = MatchConfig(games=1, time=replace(FAST, startup=30.0), seed=5)
    result = await run_match(config, (specs[0], specs[1]), out_dir=out, kill_grace=0.5)
    return result, [attack_report(out, seat) for seat in (0, 1)]


async def test_each_seat_is_a_stranger_with_a_uid_of_its_own(tmp_path: Path) -> None:
    result, reports = await both_attack(tmp_path / "m", "inspect", "inspect")
    uids = [r["uid"] for r in reports]
    assert uids[0] != uids[1]
    for report in reports:
        assert report["uid"] in bot_range() and report["uid"] not in (0, os.geteuid())
        assert report["gid"] == report["uid"] and report["groups"] in ([], [report["uid"]])
        assert set(report["caps"].values()) == {"0000000000000000"}, report["caps"]
        assert report["no_new_privs"] == "1"
        assert report["new_user_namespace"] == "Operation not permitted"
        # (``/root`` is there only where this interpreter lives under it: pyenv)
        assert not {"home", "run", "var", "srv", "sys", "mnt", "boot"} & set(report["root"])
        assert report["dev"] == sorted(
            ["null", "zero", "full", "random", "urandom", "stdin", "stdout", "stderr", "fd", "shm"]
        )
    assert result.sandbox.startswith("namespaces+uid"), result.sandbox
    assert result.seats[0].faults == [] and result.seats[1].faults == []


def plant(directory: Path) -> tuple[Path, Path]:
    """A 0600 root file and a 0644 one, in a directory that lets others through."""
    directory.mkdir(mode=0o755)
    secret, public = directory / "secret", directory / "public"
    secret.write_text("root's secret")
    secret.chmod(0o600)
    public.write_text("anyone's")
    public.chmod(0o644)
    return secret, public


async def test_roots_files_are_neither_there_nor_readable(tmp_path: Path) -> None:
    """``/etc/shadow`` and ``/root`` are not in the sandbox; a 0600 root file that is (a
    directory the operator exposes) is refused by its mode, while its 0644 neighbour reads."""
    secret, public = plant(tmp_path / "exposed")
    paths = ["/etc/shadow", "/root/.bashrc", str(secret), str(public)]
    expose = (str(tmp_path / "exposed"),)
    result, report = await attack(tmp_path / "m", "read @" + " @".join(paths), expose=expose)
    reads = report["reads"]
    assert reads["/etc/shadow"] == reads["/root/.bashrc"] == "No such file or directory"
    assert reads[str(secret)] == "Permission denied"
    assert reads[str(public)] == "anyone's"
    assert_victim_unharmed(result)
    _, report = await attack(tmp_path / "c", f"read @{secret}", sandbox="none")
    assert report["reads"][str(secret)] == "root's secret"


async def test_a_host_unix_socket_in_a_root_only_directory_is_not_there(tmp_path: Path) -> None:
    hidden = tmp_path / "run"
    hidden.mkdir(mode=0o700)
    path = str(hidden / "service.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        os.chmod(path, 0o666)
        server.listen(8)
        result, report = await attack(tmp_path / "m", f"connect @{path}")
        assert report["connect"][path] == "FileNotFoundError"
        assert_victim_unharmed(result)
        _, report = await attack(tmp_path / "c", f"connect @{path}", sandbox="none")
        assert report["connect"][path] == "connected"


async def test_a_local_postgresql_with_peer_authentication_is_out_of_reach(
    tmp_path: Path,
) -> None:
    """The attack that became code execution on the host: a local PostgreSQL that trusts the
    unix socket's peer uid. The bot finds no socket; the control (no sandbox, root) logs in."""
    why = why_unavailable()
    if why is not None:
        pytest.skip(f"NO POSTGRESQL SERVER HERE: {why}")
    with pg_server() as server:
        socket_path = f"{server.root}/.s.PGSQL.{server.port}"
        peer_authentication(server.url(), server.root / "data" / "pg_hba.conf")
        result, report = await attack(tmp_path / "m", f"connect @{socket_path}")
        assert report["connect"][socket_path] == "FileNotFoundError"
        assert_victim_unharmed(result)
        as_root = f"host={server.root} port={server.port} user=root dbname=postgres"
        with psycopg.connect(as_root) as conn:  # the control: peer authentication lets root in
            assert conn.execute(b"SELECT current_user").fetchone() == ("root",)


def peer_authentication(url: str, hba: Path) -> None:
    """A ``root`` superuser role, and unix-socket logins by the peer's uid (TCP stays trust
    for ``postgres``): as a root operator plausibly sets a local server up."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(b"CREATE ROLE root SUPERUSER LOGIN")
        hba.write_text("local all all peer\nhost all postgres 127.0.0.1/32 trust\n")
        admin.execute(b"SELECT pg_reload_conf()")


def another_tournaments_key(out: Path) -> Path:
    """``deal.key`` in a tournament's output directory, as the tournament writes them."""
    _write(private_dir(out) / KEY_FILE, Deal.random())
    return out / KEY_FILE


async def test_other_runs_records_and_deal_keys_are_not_readable(tmp_path: Path) -> None:
    """A finished match's record and log and a tournament's ``deal.key``, in directories the
    bot can see (the operator exposed their parent), are the referee's alone."""
    runs = tmp_path / "runs"
    first = BotSpec.parse(GREEDY)
    config = MatchConfig(games=1, time=replace(FAST, startup=30.0), seed=3)
    await run_match(config, (first, first), out_dir=runs / "other", kill_grace=0.5)
    record = runs / "other" / "match.jsonl"
    key = another_tournaments_key(runs / "cup")
    paths = [str(record), str(key), str(runs / "other" / "match.seat0.stderr")]
    result, report = await attack(tmp_path / "m", "read @" + " @".join(paths), expose=(str(runs),))
    assert set(report["reads"].values()) == {"Permission denied"}, report["reads"]
    assert_victim_unharmed(result)


async def test_dev_is_read_only_and_dev_shm_counts_against_tmp_size(tmp_path: Path) -> None:
    limits = Limits(tmp_size=16 << 20)
    result, report = await attack(tmp_path / "m", "fill 64 @/dev @/dev/shm @/tmp", limits=limits)
    written = report["written"]
    assert written["/dev"] == "0 MiB then Read-only file system", written
    shm = int(written["/dev/shm"].split()[0])
    tmp = int(written["/tmp"].split()[0])
    assert shm + tmp <= 16 and "No space left" in written["/dev/shm"] + written["/tmp"], written
    assert_victim_unharmed(result)


async def test_a_fork_bomb_of_a_root_referee_stops_at_the_process_limit(tmp_path: Path) -> None:
    """``RLIMIT_NPROC`` means nothing to root: the bot is not root, so it holds (and the
    seat's cgroup, where there is one, holds whatever the bot's uid)."""
    limits = Limits(processes=64)
    result, report = await attack(tmp_path / "m", "forkcount 400", limits=limits)
    assert 0 < report["forked"] < 64, report
    assert result.seats[0].faults == []  # the attacker itself may not get its threads now


def require_cgroups() -> None:
    found = cgroups.detect()
    if found.version is None:
        pytest.skip(f"NO CGROUP PER SEAT HERE: {found.reason}")


async def test_a_seat_over_its_memory_limit_is_ended_and_the_fault_names_it(
    tmp_path: Path,
) -> None:
    """Three children of 1 GiB each: under the per-process limit (2 GiB of address space
    each), over the seat's 2 GiB together. The seat ends; the crash names the seat's limit."""
    require_cgroups()
    limits = Limits(memory=2 << 30)
    result, _ = await attack(tmp_path / "m", "children-mem 3 1024", limits=limits)
    assert result.sandbox.endswith("+cgroup"), result.sandbox
    assert result.seats[0].faults == []
    (fault,) = result.seats[1].faults  # a crash, or a startup fault if it came before hello
    assert fault.kind in (FaultKind.CRASH, FaultKind.STARTUP), fault
    assert "hit the seat's memory limit (2048 MiB" in fault.detail, fault.detail


@pytest.mark.xdist_group("cpu-load")  # beside tests/e2e/test_fair_clocks.py
async def test_a_cpu_burner_cannot_starve_the_other_seat(tmp_path: Path) -> None:
    """Six spinning processes in one seat; the other seat computes 160 ms of CPU per decision
    against a 0.5 s move time. Each seat's cgroup weighs the same, so the victim gets its
    core: no timeout (without cgroups every decision timed out)."""
    require_cgroups()
    victim = BotSpec.parse(f"{PY} {BOTS / 'spin_bot.py'} 0.16")
    burner = BotSpec.parse(f"{ATTACKER} burn 6")
    specs = []
    for spec in (victim, burner):
        assert spec.command is not None
        specs.append(replace(spec, command=replace(spec.command, sandbox="namespaces")))
    time = replace(FAST, move=0.5, bank=0.0, grace=0.0, startup=30.0)
    # One hand (about 30 decisions, 5 s of the victim's CPU): two took past the test's timeout
    # on a machine loaded from outside, where the victim's seat gets a small share of a core.
    config = MatchConfig(
        games=1, time=time, seed=7, policy=FaultPolicy.STRIKE, strikes=1000, max_hands_per_game=1
    )
    result = await run_match(config, (specs[0], specs[1]), out_dir=tmp_path, kill_grace=0.5)
    assert result.sandbox.endswith("+cgroup")
    assert attack_report(tmp_path, 1) == {"burners": 6}
    assert result.seats[0].faults == [], result.seats[0].faults
    assert result.games_played == 1
