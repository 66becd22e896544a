"""Tests for referee.net.cgroups with real processes in this machine's real cgroups (as root).

Each test ends every process it starts: through ``SeatCgroup.kill`` (which reaches the
grandchildren too), then by awaiting its own children with a timeout.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from referee.net.cgrouphost import host_layout
from referee.net.cgroups import CgroupError, SeatCgroup, detect, sweep_stale

from .conftest import wait_until

SUPPORT = detect()
pytestmark = [
    pytest.mark.timeout(30),
    pytest.mark.skipif(SUPPORT.version is None, reason=f"no usable cgroups: {SUPPORT.reason}"),
]

PY = sys.executable
GIB = 1 << 30

FORK_BOMB = """
import os, time
made = refused = 0
while refused < 5 and made < 1000:
    try:
        pid = os.fork()
    except BlockingIOError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made += 1
print(made, flush=True)
time.sleep(60)
"""
HOG = "import time; b = bytearray(b'x') * (1 << 30); print('full', flush=True); time.sleep(60)"
VICTIM = """
import sys, time
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    total = 0
    for i in range(1_000_000):
        total += i
    print(time.perf_counter() - start, flush=True)
"""
BURNER = """
import os
print("burning", flush=True)
for _ in range(5):
    if os.fork() == 0:
        break
while True:
    pass
"""


class Seats:
    """Seat groups and processes of one test, all ended and removed at teardown."""

    def __init__(self) -> None:
        self.seats: list[SeatCgroup] = []
        self.procs: list[asyncio.subprocess.Process] = []

    def create(self, memory: int = GIB, processes: int = 64, nice: int = 0) -> SeatCgroup:
        seat = SeatCgroup.create(memory=memory, processes=processes, nice=nice)
        self.seats.append(seat)
        return seat

    async def spawn(self, seat: SeatCgroup, *argv: str) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            *seat.join_argv, *argv, stdout=asyncio.subprocess.PIPE
        )
        self.procs.append(proc)
        return proc

    async def end(self) -> None:
        for seat in self.seats:
            seat.kill()
        for proc in self.procs:
            if proc.returncode is None:
                proc.kill()
            await asyncio.wait_for(proc.wait(), 10)
        for seat in self.seats:
            seat.close()


@pytest_asyncio.fixture
async def seats() -> AsyncIterator[Seats]:
    """A :class:`Seats` ended at teardown."""
    made = Seats()
    try:
        yield made
    finally:
        await made.end()


async def read_line(proc: asyncio.subprocess.Process, within: float = 10) -> str:
    """The next line of the process's stdout."""
    assert proc.stdout is not None
    return (await asyncio.wait_for(proc.stdout.readline(), within)).decode().strip()


def gone(paths: tuple[str, ...]) -> bool:
    """Whether none of the group directories exists."""
    return not any(os.path.exists(path) for path in paths)


def children_of(pid: int) -> set[int]:
    """The children of process ``pid``."""
    return set(map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split()))


def members(path: str) -> set[int]:
    """The pids listed in a group's cgroup.procs."""
    return {int(pid) for pid in Path(path, "cgroup.procs").read_text().split()}


@pytest.mark.asyncio
async def test_fork_bomb_stops_at_pids_max_and_kill_ends_it(seats: Seats) -> None:
    seat = seats.create(processes=64)
    bomb = await seats.spawn(seat, PY, "-c", FORK_BOMB)
    made = int(await read_line(bomb))
    assert 32 <= made < 64  # the bomb itself is one of the 64
    assert seat.pids_refused() >= 5
    assert len(members(seat.paths[0])) == made + 1
    seat.kill()
    assert await asyncio.wait_for(bomb.wait(), 10) == -9
    await wait_until(lambda: all(members(path) == set() for path in seat.paths))
    seat.close()
    assert gone(seat.paths)


@pytest.mark.asyncio
async def test_memory_limit_oom_kills_and_is_noticed(seats: Seats) -> None:
    seat = seats.create(memory=2 * GIB)
    oom = asyncio.Event()
    seat.watch_oom(asyncio.get_running_loop(), oom.set)
    hogs = [await seats.spawn(seat, PY, "-c", HOG) for _ in range(3)]
    await asyncio.wait_for(oom.wait(), 20)
    waits = [asyncio.ensure_future(hog.wait()) for hog in hogs]
    done, _ = await asyncio.wait(waits, timeout=10, return_when=asyncio.FIRST_COMPLETED)
    assert [task.result() for task in done] == [-9] * len(done) and done
    assert seat.oom_kills() >= 1
    seat.kill()
    await asyncio.wait_for(asyncio.gather(*waits), 10)
    kills = seat.oom_kills()
    seat.close()
    assert seat.oom_kills() == kills  # kept once the group is gone


async def victim_steps(
    seats: Seats, victim_seat: SeatCgroup, burner_seat: SeatCgroup, steps: int
) -> tuple[float, float]:
    """The median seconds of the victim's steps beside the burner, and the share of the CPU
    time of both seats the victim's seat had meanwhile (meaningless when they are one seat)."""
    burner = await seats.spawn(burner_seat, PY, "-c", BURNER)
    assert await read_line(burner) == "burning"
    before = victim_seat.cpu_usage_ns(), burner_seat.cpu_usage_ns()
    victim = await seats.spawn(victim_seat, PY, "-c", VICTIM, str(steps))
    times = [float(await read_line(victim, 20)) for _ in range(steps)]
    after = victim_seat.cpu_usage_ns(), burner_seat.cpu_usage_ns()
    assert await asyncio.wait_for(victim.wait(), 10) == 0
    burner_seat.kill()
    await asyncio.wait_for(burner.wait(), 10)
    used = after[0] - before[0], after[1] - before[1]
    return statistics.median(times[1:]), used[0] / (used[0] + used[1])


@pytest.mark.asyncio
async def test_cpu_weight_is_per_seat_not_per_process(seats: Seats) -> None:
    if "cpuacct" not in host_layout().parents and SUPPORT.version == 1:
        pytest.skip("no cpuacct hierarchy: cpu_usage_ns is 0 on v1 without it")
    victim, burner = seats.create(nice=5), seats.create(nice=5)
    apart, share = await victim_steps(seats, victim, burner, steps=4)
    # One seat of seven busy processes would give the victim ~1/7 of the CPU time; two seats of
    # equal weight: ~1/2 (1/3 if the burner's share falls on the victim's core alone). A share,
    # not a time: the machine's other load slows both seats alike (speed lives in bench/).
    assert share > 0.3, (apart, share)


@pytest.mark.asyncio
async def test_membership_is_race_free(seats: Seats) -> None:
    seat = seats.create()
    proc = await seats.spawn(seat, "/bin/sh", "-c", "sleep 5 & sleep 5 & wait")
    await wait_until(lambda: len(children_of(proc.pid)) == 2)
    tree = {proc.pid, *children_of(proc.pid)}
    for path in seat.paths:
        assert members(path) == tree


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    done = subprocess.run(["/bin/true"], check=True)
    assert done.returncode == 0
    proc = subprocess.Popen(["/bin/true"])
    proc.wait()
    return proc.pid


@pytest.mark.asyncio
async def test_sweep_stale_removes_dead_referees_groups_only(seats: Seats, dead_pid: int) -> None:
    live = seats.create()
    roles = live._dirs  # the same hierarchies, another name
    stale = SeatCgroup(
        live.version,
        {role: f"{os.path.dirname(path)}/gin-referee.{dead_pid}.7" for role, path in roles.items()},
    )
    for path in stale.paths:
        os.mkdir(path)
    orphan = await seats.spawn(stale, "sleep", "30")  # a bot its dead referee left running
    await wait_until(lambda: members(stale.paths[0]) == {orphan.pid})
    assert sweep_stale() >= 1
    assert await asyncio.wait_for(orphan.wait(), 10) == -9
    assert gone(stale.paths)
    assert all(map(os.path.isdir, live.paths))


@pytest.mark.asyncio
async def test_close_after_kill_leaves_nothing(seats: Seats) -> None:
    seat = seats.create()
    proc = await seats.spawn(seat, "/bin/sh", "-c", "sleep 30 & exec sleep 30")
    await wait_until(lambda: len(members(seat.paths[0])) == 2)
    seat.kill()
    seat.close()
    assert gone(seat.paths)
    assert await asyncio.wait_for(proc.wait(), 10) == -9
    seat.close()  # idempotent


def our_groups() -> Iterator[str]:
    """Groups named after this process, in every hierarchy the seats use."""
    for parent in set(host_layout().parents.values()):
        for name in os.listdir(parent):
            if name.startswith(f"gin-referee.{os.getpid()}."):
                yield f"{parent}/{name}"


def test_create_failure_raises_and_leaves_nothing() -> None:
    before = set(our_groups())
    memory_file = "memory.limit_in_bytes" if SUPPORT.version == 1 else "memory.max"
    with pytest.raises(CgroupError, match=rf"cannot set \S+/{memory_file} to -5: Invalid"):
        SeatCgroup.create(memory=-5, processes=64, nice=0)
    with pytest.raises(CgroupError, match=r"nice must be in -20\.\.19"):
        SeatCgroup.create(memory=GIB, processes=64, nice=20)
    assert set(our_groups()) == before


@pytest.mark.asyncio
async def test_close_of_a_running_group_leaves_it_then_kill_and_close_remove_it(
    seats: Seats, caplog: pytest.LogCaptureFixture
) -> None:
    seat = seats.create()
    proc = await seats.spawn(seat, "sleep", "30")
    # In every directory: the wrapper joins them one after another, and a close between two
    # removes the ones it has not joined yet (seen under load).
    await wait_until(lambda: all(members(path) == {proc.pid} for path in seat.paths))
    start = asyncio.get_running_loop().time()
    seat.close()  # blocks while it retries the first directory, not each of them
    assert asyncio.get_running_loop().time() - start < 2
    assert "still has processes" in caplog.text
    assert all(map(os.path.isdir, seat.paths))
    seat.kill()
    assert await asyncio.wait_for(proc.wait(), 10) == -9
    seat.close()
    assert gone(seat.paths)
