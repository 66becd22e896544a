"""Tests for the text side of cgroups (referee.net.cgroupfs), and for the cgroup v2 file logic
of SeatCgroup on a fake group directory: this machine's controllers are bound to v1, so the v2
kernel files cannot be made here; these tests use text in the kernel's formats instead."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from referee.net.cgroupfs import (
    Mount,
    cgroup_dir,
    cpu_weight_for_nice,
    parse_flat_keyed,
    parse_mountinfo,
    parse_proc_cgroup,
    seat_settings,
)
from referee.net.cgrouphost import _try_v2
from referee.net.cgroups import SeatCgroup

pytestmark = pytest.mark.timeout(20)

# This machine's (v1 controllers, a controller-less cgroup2), trimmed.
MOUNTINFO_V1 = """\
23 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
PROC_CGROUP_V1 = """\
9:name=systemd:/
8:pids:/
4:memory:/process_api/4cf0089c46e1923d799ece0d9b263a71
2:cpuacct:/
1:cpu:/
0::/
"""
# A systemd host (unified) and a container whose hierarchy root is its own group.
MOUNTINFO_V2 = """\
25 30 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 \
rw,nsdelegate,memory_recursiveprot
"""
MOUNTINFO_CONTAINER = """\
700 650 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid master:11 - cgroup cgroup \
rw,cpu,cpuacct
701 650 0:40 /my\\040dir /mnt/odd rw - cgroup cgroup rw,pids
"""
MEMORY_EVENTS = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 1\n"
PIDS_EVENTS_V2 = "max 7\nmax.imposed 7\n"
CPU_STAT_V2 = (
    "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 0\nnr_throttled 0\n"
    "throttled_usec 0\nnr_bursts 0\nburst_usec 0\n"
)


def test_mountinfo_and_proc_cgroup_locate_v1_groups() -> None:
    mounts = parse_mountinfo(MOUNTINFO_V1)
    assert Mount("/", "/sys/fs/cgroup/cpu", "cgroup", frozenset({"rw", "cpu"})) in mounts
    groups = parse_proc_cgroup(PROC_CGROUP_V1)
    assert groups["name=systemd"] == "/"
    memory = cgroup_dir(mounts, "cgroup", "memory", groups["memory"])
    assert memory == "/sys/fs/cgroup/memory/process_api/4cf0089c46e1923d799ece0d9b263a71"
    assert cgroup_dir(mounts, "cgroup", "pids", groups["pids"]) == "/sys/fs/cgroup/pids"
    assert cgroup_dir(mounts, "cgroup2", "", groups[""]) == "/sys/fs/cgroup/unified"
    assert cgroup_dir(mounts, "cgroup", "blkio", "/") is None


def test_v2_group_under_a_systemd_mount() -> None:
    mounts = parse_mountinfo(MOUNTINFO_V2)
    assert mounts[0].fstype == "cgroup2"
    path = parse_proc_cgroup("0::/system.slice/referee.service\n")[""]
    found = cgroup_dir(mounts, "cgroup2", "", path)
    assert found == "/sys/fs/cgroup/system.slice/referee.service"
    assert cgroup_dir(mounts, "cgroup", "cpu", path) is None


def test_mount_root_inside_the_hierarchy_and_escapes() -> None:
    mounts = parse_mountinfo(MOUNTINFO_CONTAINER)
    assert mounts[1].root == "/my dir"
    assert cgroup_dir(mounts, "cgroup", "cpuacct", "/docker/abc") == "/sys/fs/cgroup/cpu,cpuacct"
    assert cgroup_dir(mounts, "cgroup", "cpu", "/docker/abc/x") == "/sys/fs/cgroup/cpu,cpuacct/x"
    assert cgroup_dir(mounts, "cgroup", "cpu", "/docker/abcd") is None  # not under the root
    assert cgroup_dir(mounts, "cgroup", "pids", "/my dir/s") == "/mnt/odd/s"


def test_malformed_lines_are_skipped() -> None:
    assert parse_mountinfo("garbage\n1 2 3\n") == []
    assert parse_proc_cgroup("nonsense\n") == {}
    assert parse_flat_keyed("max\nkey value\nok -3\n") == {"ok": -3}


def test_counter_files() -> None:
    assert parse_flat_keyed(MEMORY_EVENTS)["oom_kill"] == 1
    assert parse_flat_keyed(PIDS_EVENTS_V2)["max"] == 7
    assert parse_flat_keyed("oom_kill_disable 0\nunder_oom 0\noom_kill 4\n")["oom_kill"] == 4
    assert parse_flat_keyed(CPU_STAT_V2)["usage_usec"] == 1500


def test_cpu_weight_table() -> None:
    weights = [cpu_weight_for_nice(n) for n in range(-20, 20)]
    assert weights[20] == 1024
    assert weights == sorted(weights, reverse=True)
    assert (weights[0], weights[-1]) == (88761, 15)
    # Each step of nice is about 1.25x (the kernel's "10% CPU per nice level").
    assert all(1.19 < a / b < 1.3 for a, b in itertools.pairwise(weights))
    for bad in (-21, 20):
        with pytest.raises(ValueError, match="nice"):
            cpu_weight_for_nice(bad)


def test_seat_settings() -> None:
    v1 = seat_settings(1, memory=1 << 30, processes=64, nice=10, memsw=True, swap=False)
    assert v1 == [
        ("pids", "pids.max", "64"),
        ("memory", "memory.limit_in_bytes", "1073741824"),
        ("memory", "memory.memsw.limit_in_bytes", "1073741824"),
        ("cpu", "cpu.shares", "110"),
    ]
    v1_no_swap = seat_settings(1, memory=4096, processes=1, nice=0, memsw=False, swap=False)
    assert ("memory", "memory.memsw.limit_in_bytes", "4096") not in v1_no_swap
    v2 = dict(((c, f), v) for c, f, v in seat_settings(2, memory=5, processes=3, nice=0,
                                                      memsw=False, swap=False))  # fmt: skip
    assert v2 == {
        ("pids", "pids.max"): "3",
        ("memory", "memory.max"): "5",
        ("memory", "memory.oom.group"): "1",
        ("cpu", "cpu.weight"): "100",
    }
    weights = {
        n: seat_settings(2, memory=1, processes=1, nice=n, memsw=False, swap=True)[-1][2]
        for n in (-20, 10, 19)
    }
    assert weights == {-20: "8668", 10: "11", 19: "1"}


def fake_v2(tmp_path: Path) -> SeatCgroup:
    """A SeatCgroup over a plain directory holding v2-format files."""
    (tmp_path / "memory.events").write_text(MEMORY_EVENTS)
    (tmp_path / "pids.events").write_text(PIDS_EVENTS_V2)
    (tmp_path / "cpu.stat").write_text(CPU_STAT_V2)
    (tmp_path / "cgroup.kill").write_text("")
    return SeatCgroup(2, dict.fromkeys(("pids", "memory", "cpu"), str(tmp_path)))


def test_v2_counters_and_kill(tmp_path: Path) -> None:
    seat = fake_v2(tmp_path)
    assert seat.paths == (str(tmp_path),)
    assert seat.join_argv[-2:] == (f"{tmp_path}/cgroup.procs", "--")
    assert (seat.oom_kills(), seat.pids_refused(), seat.cpu_usage_ns()) == (1, 7, 1_500_000)
    seat.kill()
    assert (tmp_path / "cgroup.kill").read_text() == "1"
    seat.close()
    seat.close()


@pytest.mark.asyncio
async def test_v2_oom_watch_fires_when_memory_events_counts_grow(tmp_path: Path) -> None:
    seat = fake_v2(tmp_path)
    fired = asyncio.Event()
    calls: list[int] = []

    def on_oom() -> None:
        calls.append(seat.oom_kills())
        fired.set()

    seat.watch_oom(asyncio.get_running_loop(), on_oom)
    (tmp_path / "memory.events").write_text(MEMORY_EVENTS.replace("max 12", "max 13"))
    await asyncio.sleep(0.05)  # give a (wrong) notice for a change in "max" time to arrive
    assert calls == []
    (tmp_path / "memory.events").write_text(MEMORY_EVENTS.replace("oom_kill 1", "oom_kill 2"))
    await asyncio.wait_for(fired.wait(), 5)
    assert calls == [2]
    seat.close()
    (tmp_path / "memory.events").write_text(MEMORY_EVENTS.replace("oom_kill 1", "oom_kill 3"))
    await asyncio.sleep(0.05)  # nothing may arrive once closed
    assert calls == [2]


def v2_mounts(where: Path) -> list[Mount]:
    """A cgroup2 mount of ``where`` (a plain directory standing in for the hierarchy)."""
    return parse_mountinfo(f"30 1 0:26 / {where} rw - cgroup2 cgroup2 rw\n")


def test_v2_detection_reasons(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("\n")  # this machine's: all bound to v1
    found, why = _try_v2(v2_mounts(tmp_path), {"": "/"})
    assert found is None
    assert why == f"{tmp_path} has no pids memory cpu controller (bound to v1, or none)"
    found, why = _try_v2(parse_mountinfo(MOUNTINFO_V1), {})
    assert (found, why) == (None, "no cgroup2 mount shows the referee's group")


def test_v2_detection_moves_the_referee_to_a_leaf_and_enables_controllers(
    tmp_path: Path,
) -> None:
    group = tmp_path / "referee.service"
    (group / "referee").mkdir(parents=True)
    (group / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (group / "cgroup.subtree_control").write_text("")
    (group / "cgroup.procs").write_text("4242\n")
    (group / "referee" / "cgroup.procs").write_text("")
    found, why = _try_v2(v2_mounts(tmp_path), {"": "/referee.service"})
    assert (found, why) == (str(group), "")
    assert (group / "referee" / "cgroup.procs").read_text() == "4242"
    assert (group / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    # Once enabled (a previous referee did it), nothing is moved again.
    (group / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (group / "referee" / "cgroup.procs").write_text("")
    assert _try_v2(v2_mounts(tmp_path), {"": "/referee.service"}) == (str(group), "")
    assert (group / "referee" / "cgroup.procs").read_text() == ""


def test_v2_kill_without_cgroup_kill_closes_forks_first(tmp_path: Path) -> None:
    seat = fake_v2(tmp_path)
    (tmp_path / "cgroup.kill").unlink()  # Linux before 5.14
    (tmp_path / "pids.max").write_text("max\n")
    (tmp_path / "cgroup.procs").write_text("")
    seat.kill()
    assert (tmp_path / "pids.max").read_text() == "0ax\n"  # one write(2) of "0" at offset 0
