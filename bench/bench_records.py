"""Disk per game: what a tournament's compressed records take, and what compressing costs.

Run: ``python -m bench.bench_records [--games 40] [--rounds 3]``. Plays two real tournaments
(``--games`` games each, 2 at once, no sandbox, a public seed): ``short``, the greedy sample bot
against the random one, and ``long``, two ``bench/instant_bot.py`` (games of ~1,000 decisions,
the longest a tournament sees). For each it reads the records left in ``games/`` and prints,
per game: the JSON's bytes, the gzip file's bytes and the ratio; the disk the gzip file takes
(its allocated blocks, what ``du`` counts) and what the plain file would take; and the CPU and
wall time of :func:`referee.match.record_gzip.compress_record` on each record, repeated
``--rounds`` times on fresh copies, as median [min-max]. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import machine
from referee.match.record_gzip import compress_record

PY = sys.executable
BOTS = {
    "short": (f"{PY} -m sample_bots.greedy_bot", f"{PY} -m sample_bots.random_bot"),
    "long": (f"{PY} -m bench.instant_bot", f"{PY} -m bench.instant_bot"),
}


def _config(path: Path, games: int, bots: tuple[str, str]) -> Path:
    lines = [
        "[tournament]",
        'name = "records"',
        f"games_per_pairing = {games}",
        "concurrency = 2",
        "seed = 7",
        'sandbox = "none"',
    ]
    for name, command in zip(("a", "b"), bots, strict=True):
        lines += ["[[bots]]", f'name = "{name}"', f"command = {json.dumps(command)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    scaled = [v * scale for v in values]
    return (
        f"{statistics.median(scaled):.{digits}f} "
        f"[{min(scaled):.{digits}f}-{max(scaled):.{digits}f}]"
    )


def measure(kind: str, games: int, rounds: int, tmp: Path) -> dict[str, Any]:
    """Play one tournament of ``kind`` and measure its records (see the module docstring)."""
    out = tmp / kind
    config = _config(tmp / f"{kind}.toml", games, BOTS[kind])
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    packed = sorted((out / "games").glob("*.jsonl.gz"))
    if len(packed) != games:
        raise RuntimeError(f"{kind}: {len(packed)} compressed records for {games} games")
    plain = [gzip.decompress(path.read_bytes()) for path in packed]
    block = os.statvfs(out).f_bsize
    cpu: list[float] = []
    wall: list[float] = []
    scratch = tmp / f"{kind}-scratch"
    scratch.mkdir()
    for _ in range(rounds):
        for index, data in enumerate(plain):
            path = scratch / f"g{index:06d}-a1.jsonl"
            path.write_bytes(data)
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            target = compress_record(path)
            cpu.append(time.process_time() - cpu_start)
            wall.append(time.perf_counter() - wall_start)
            target.unlink()
    plain_bytes = sum(len(data) for data in plain) / games
    gz_bytes = sum(path.stat().st_size for path in packed) / games
    return {
        "games": games,
        "json_bytes_per_game": round(plain_bytes),
        "gzip_bytes_per_game": round(gz_bytes),
        "ratio": round(plain_bytes / gz_bytes, 2),
        "disk_bytes_per_game_gzip": round(sum(p.stat().st_blocks * 512 for p in packed) / games),
        "disk_bytes_per_game_if_plain": round(
            sum(-(-len(data) // block) * block for data in plain) / games
        ),
        "compress_cpu_ms": _spread(cpu, 1e3),
        "compress_wall_ms": _spread(wall, 1e3),
    }


def main() -> None:
    """Measure both kinds of games and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = {kind: measure(kind, args.games, args.rounds, Path(tmp)) for kind in BOTS}
    print(json.dumps({"machine": machine(), **found}, indent=2))


if __name__ == "__main__":
    main()
