"""The network boundary under attack: a real ``gin-referee serve`` daemon, real hostile client
processes (``bench/netflood.py``), and the daemon's own games going on meanwhile.

Each reproduction from issue #12 that used to abort or bloat the daemon: routing-id squatting,
unfinished multipart messages, big frames, garbage, connection storms and idle connections by
the thousand. The daemon must stay up, finish its games without charging its bots a fault, and
keep its memory within the documented bounds (baseline + 256 MiB against one peer, + 512 MiB
against sixteen).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.bench_boundary import MIXED, MiB, attack, finish, start_daemon

pytestmark = pytest.mark.timeout(240)
# The daemon serves on after its 60 games (finish() stops it), so a quick machine that plays
# them all during an attack still faces the attack with the daemon up.

Daemon = tuple[subprocess.Popen[str], str, Path]


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    """``start_daemon`` in ``tmp_path``; a daemon a failed test left running is stopped (and
    its bots with it) before the leak check looks."""
    started: list[subprocess.Popen[str]] = []

    def start(games: int, prefix: tuple[str, ...] = ()) -> Daemon:
        daemon = start_daemon(tmp_path, games=games, prefix=prefix)
        started.append(daemon[0])
        return daemon

    yield start
    for daemon in started:
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(15)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(10)


def test_one_peer_sending_an_endless_multipart_message(serving: Callable[..., Daemon]) -> None:
    daemon, endpoint, out = serving(games=60)
    growth, (report,) = attack(daemon, endpoint, ["multipart"], seconds=4.0)
    assert report["bytes"] > 10 * MiB  # it really pushed (libzmq held all of it)
    assert report["connections"] >= 2  # the daemon closes it at the size limit; it came back
    assert growth < 256 * MiB, f"RSS grew {growth / MiB:.0f} MiB"
    finish(daemon, out, 60)


def test_sixteen_hostile_peers_at_once(serving: Callable[..., Daemon]) -> None:
    daemon, endpoint, out = serving(games=60)
    growth, reports = attack(daemon, endpoint, MIXED, seconds=5.0)
    assert growth < 512 * MiB, f"RSS grew {growth / MiB:.0f} MiB"
    idle = [r for m, r in zip(MIXED, reports, strict=True) if m == "idle"]
    assert all(r["connections"] + r["failed"] > 32 for r in idle)  # past the per-address cap
    finish(daemon, out, 60)


@pytest.mark.asyncio
@pytest.mark.parametrize("curve", [False, True], ids=["plain", "curve"])
async def test_a_short_soak_of_random_and_mutated_frames(curve: bool) -> None:
    """``bench/soak.py`` at 1/20 of its documented length: 50,000 frames before and after
    hello, plain or boxed under CURVE (with unknown keys tried on the way), into a live daemon
    (docs/security.md has the 10^6-frame runs' figures)."""
    from bench.soak import soak

    report = await soak(frames=50_000, clients=4, seed=7, curve=curve)
    assert report["daemon_alive_at_end"] is True, report
    frames, connections = report["frames"], report["connections"]
    assert isinstance(frames, int) and isinstance(connections, int)
    assert frames >= 50_000 and connections > 1
    rss = report["rss_mib"]
    assert isinstance(rss, dict) and rss["peak"] - rss["start"] < 64, rss
    assert report["local_bot_faults"] == [], report
    if curve:  # unknown keys were tried, and every one was refused in its handshake
        refused = report["refused_unknown_key"]
        assert isinstance(refused, int) and refused > 0, report
        assert report["unknown_key_admitted"] == 0, report


def test_descriptor_exhaustion_leaves_the_daemon_serving(serving: Callable[..., Daemon]) -> None:
    """The issue's reproduction: libzmq aborted with 'Too many open files' at a 1024 limit and
    1,100 idle connections. Here the daemon runs with only 256 descriptors and idle
    connections arrive from many loopback addresses (past the per-address cap) by the
    thousand: the connection cap leaves room for its bots, which play on without a fault."""
    daemon, endpoint, out = serving(games=60, prefix=("prlimit", "--nofile=256"))
    # The attackers run at nice 19: on a loaded machine 5 s may not reach the limit, so the
    # attack goes on longer until it does (the daemon must hold throughout).
    for seconds in (5.0, 10.0, 20.0):
        _, reports = attack(daemon, endpoint, ["idle", "idle"], seconds=seconds)
        opened = sum(report["connections"] for report in reports)
        if opened > 256:
            break
    assert opened > 256, reports
    finish(daemon, out, 60)


def test_a_hello_storm_from_one_address_is_refused_beyond_the_burst(
    serving: Callable[..., Daemon],
) -> None:
    """Issue #29: handshakes as fast as one client can open them. Beyond the default burst
    (32) and rate (4/s) of new connections from its address, each is closed at accept; the
    daemon plays its games on without a fault."""
    daemon, endpoint, out = serving(games=60)
    # Every connection past the bucket is refused: thousands where the attacker gets a core.
    # On a loaded machine the attacker (nice 19) may not even pass the burst in 4 s; it then
    # goes on longer until it does (beside a CI run and a benchmark it made 99 in 16 s).
    for seconds in (4.0, 8.0, 16.0, 32.0):
        _, (report,) = attack(daemon, endpoint, ["hello"], seconds=seconds)
        bound = 32 + 4 * (seconds + 2)  # the burst, and the rate over the attack and its start
        assert report["answered"] <= bound, report
        if report["connections"] > bound:
            break
    assert report["refused"] >= report["connections"] - bound > 0, report
    finish(daemon, out, 60)
