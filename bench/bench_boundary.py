"""Memory of a real ``serve`` daemon under network attacks (``bench/netflood.py``).

Run: ``python -m bench.bench_boundary [--seconds 5]``. For each attack mode, one attacking
process, then sixteen at once (all modes mixed), against a daemon playing its own games
between two local bots: the daemon's RSS growth (peak during the attack minus the baseline
with a match under way), whether it survived, and what the attackers managed. The tests in
``tests/e2e/test_boundary.py`` run the same helpers with assertions.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import free_port, serving_line
from referee.tournament.store import GameRow, SqliteStore

__all__ = ["MIXED", "MODES", "attack", "finish", "rss", "start_daemon"]

PY = sys.executable
MODES = ("multipart", "bigframes", "garbage", "storm", "idle", "squat")
MIXED = ["multipart"] * 4 + ["bigframes"] * 4 + ["garbage"] * 2 + ["storm"] * 2
MIXED += ["idle"] * 2 + ["squat"] * 2


MiB = 1 << 20


def rss(pid: int) -> int:
    """Resident set size of ``pid`` in bytes (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), "")
    return int(line.split()[1]) * 1024 if line else 0  # no VmRSS: a zombie


def start_daemon(
    tmp_path: Path, games: int, prefix: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[str], str, Path]:
    """``serve`` with two local bots; clocks generous enough for a machine whose other work
    starves the bots (they run ten nice steps below everything else). ``prefix`` goes before
    the command (e.g. ``prlimit --nofile=256``). ``--insecure``: the attackers complete a NULL
    handshake, so their bytes reach the parser past it (under CURVE, unknown keys stop at the
    handshake)."""
    config = tmp_path / "serve.toml"
    config.write_text(
        f"""
[tournament]
name = "attacked"
games_per_pairing = {games}
concurrency = 1
[time]
move = 2.0
bank = 5.0
startup = 60.0
[[bots]]
name = "greedy"
command = "{PY} -m sample_bots.greedy_bot"
[[bots]]
name = "random"
command = "{PY} -m sample_bots.random_bot"
"""
    )
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    daemon = subprocess.Popen(
        [*prefix, sys.executable, "-m", "referee", "serve", str(config), "--bind", endpoint,
         "--out", str(out), "--insecure"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert daemon.stderr is not None
    serving_line(daemon.stderr.readline)
    return daemon, endpoint, out


def attack(
    daemon: subprocess.Popen[str], endpoint: str, modes: list[str], seconds: float
) -> tuple[int, list[dict[str, int]]]:
    """Run one flood process per mode against the daemon; (peak RSS growth, their reports)."""
    time.sleep(0.5)  # the daemon's first game is under way: its baseline includes a match
    baseline = rss(daemon.pid)
    # Niced below the bots (which run at +10): the attackers stand for other machines and
    # must not starve the daemon's own bots of this machine's two cores.
    floods = [
        subprocess.Popen(
            [
                "nice",
                "-n",
                "19",
                sys.executable,
                "-m",
                "bench.netflood",
                mode,
                endpoint,
                str(seconds),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for mode in modes
    ]
    peak = baseline
    try:
        while any(f.poll() is None for f in floods):
            peak = max(peak, rss(daemon.pid))
            assert daemon.poll() is None, "the daemon ended during the attack"
            time.sleep(0.05)
        reports = [json.loads(f.communicate(timeout=30)[0]) for f in floods]
    finally:
        for f in floods:
            if f.poll() is None:
                f.kill()
                f.wait(10)
    return peak - baseline, reports


def finish(daemon: subprocess.Popen[str], out: Path, games: int, within: float = 150.0) -> None:
    """Assert that the daemon plays every game without a fault charged to its bots, then
    stops cleanly on SIGTERM with 130 (it serves on after its last game: a quick machine may
    play them all during an attack, and the attack must still find it up)."""
    deadline = time.monotonic() + within
    rows = _games(out)
    try:
        while sum(r.status == "done" for r in rows) < games and daemon.poll() is None:
            assert time.monotonic() < deadline, f"{games} games not played in {within:g} s"
            time.sleep(0.2)  # another process's progress: nothing to await
            rows = _games(out)
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)
    assert daemon.returncode == 130, err  # serve, interrupted (README, "Exit status")
    assert "interrupted: every game had been played" in err, err
    rows = _games(out)
    assert len(rows) == games and all(r.status == "done" for r in rows), err[-2000:]
    assert all(r.result is not None and not r.result["faults"] for r in rows), err[-2000:]


def _games(out: Path) -> list[GameRow]:
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        return store.games()
    finally:
        store.close()


def main() -> None:
    """Every mode alone, then the sixteen-peer mix; one JSON line per scenario."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    scenarios = [[mode] for mode in MODES] + [MIXED]
    for modes in scenarios:
        with tempfile.TemporaryDirectory(prefix="gin-boundary-") as tmp:
            daemon, endpoint, _ = start_daemon(Path(tmp), games=1000)
            try:
                growth, reports = attack(daemon, endpoint, modes, args.seconds)
                alive = daemon.poll() is None
            finally:
                daemon.terminate()
                daemon.wait(30)
            sent = sum(r.get("bytes", 0) for r in reports)
            conns = sum(r.get("connections", 0) for r in reports)
            name = modes[0] if len(modes) == 1 else f"mixed x{len(modes)}"
            line = {
                "attack": name,
                "rss_growth_mib": round(growth / MiB, 1),
                "alive": alive,
                "attacker_mib_sent": round(sent / MiB),
                "attacker_connections": conns,
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
