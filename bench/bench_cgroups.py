"""What a seat cgroup costs at start-up: ``SeatCgroup.create`` + joining + ``close``, per seat.

Run (as root, where :func:`referee.net.cgroups.detect` finds cgroups):
``python -m bench.bench_cgroups [--rounds 10] [--per-round 10]``. Each round times, in
alternating order (so that the machine's changing load falls on every kind alike):

1. ``plain``: spawn ``/bin/true`` (asyncio) and reap it;
2. ``seat``: ``SeatCgroup.create``, spawn ``join_argv + /bin/true`` and reap it, ``kill`` and
   ``close`` (what a seat adds: the directories, the settings, one ``/bin/sh`` that joins and
   execs, and the removal);
3. ``groups``: ``create`` + ``close`` alone (no process).

Reports milliseconds: the median over every sample with the 10th-90th percentile spread, and
the median of the per-round differences (seat minus plain).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from bench.common import machine, percentile
from referee.net.cgroups import SeatCgroup, detect

GIB = 1 << 30


async def plain() -> None:
    """Spawn ``/bin/true`` and reap it."""
    proc = await asyncio.create_subprocess_exec("/bin/true")
    await proc.wait()


async def seat() -> None:
    """A seat group around a ``/bin/true`` bot, from creation to removal."""
    group = SeatCgroup.create(memory=GIB, processes=64, nice=10)
    try:
        proc = await asyncio.create_subprocess_exec(*group.join_argv, "/bin/true")
        if await proc.wait() != 0:
            raise RuntimeError("joining the seat group failed")
    finally:
        group.kill()
        group.close()


async def groups() -> None:
    """Create and remove a seat group, no process."""
    SeatCgroup.create(memory=GIB, processes=64, nice=10).close()


KINDS: dict[str, Callable[[], Awaitable[None]]] = {"plain": plain, "seat": seat, "groups": groups}


async def run(rounds: int, per_round: int) -> dict[str, object]:
    """Time every kind ``per_round`` times per round; the summary as a dict."""
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    differences = []
    for number in range(rounds):
        order = list(KINDS) if number % 2 == 0 else list(reversed(KINDS))
        medians = {}
        for kind in order:
            times = []
            for _ in range(per_round):
                start = time.perf_counter()
                await KINDS[kind]()
                times.append((time.perf_counter() - start) * 1000)
            samples[kind] += times
            medians[kind] = statistics.median(times)
        differences.append(medians["seat"] - medians["plain"])
    summary: dict[str, object] = {"machine": machine(), "cgroup_version": detect().version}
    for kind, values in samples.items():
        values.sort()
        summary[kind] = {
            "median_ms": round(statistics.median(values), 3),
            "p10_ms": round(percentile(values, 0.1), 3),
            "p90_ms": round(percentile(values, 0.9), 3),
            "n": len(values),
        }
    summary["seat_minus_plain_ms"] = {
        "median_of_rounds": round(statistics.median(differences), 3),
        "min": round(min(differences), 3),
        "max": round(max(differences), 3),
    }
    return summary


def main() -> int:
    """Parse the arguments, run, print the summary as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=10)
    args = parser.parse_args()
    support = detect()
    if support.version is None:
        print(f"no usable cgroups: {support.reason}", file=sys.stderr)
        return 1
    print(json.dumps(asyncio.run(run(args.rounds, args.per_round)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
