"""PINGs from peers that never read, against a real referee process (issue #29).

The attack grew the referee from 34 MiB to 1,235 MiB in two minutes: every PING was answered
with a PONG queued towards a peer that read nothing, and a connection the referee closed
waited for a drain that never came, holding its bytes, its descriptor, its connection slot
and its CURVE key until the attacker left. Here the referee writes one PONG at most to such a
peer and aborts a close that does not drain, so its memory stays flat and the attacker's
connections come back to it (the slots and the key are free again).

Two attackers, each a real process: a local bot in a ``match`` whose helpers flood the
private ``ipc://`` socket (``tests/bots/pingflood_bot.py``; not sandboxed, so that it can
write its report where the test reads it: a sandboxed bot reaches the socket the same way),
and a TCP client with a registered CURVE key against ``serve``. Growth is bounded at 64 MiB
(a generous margin: the attack without the bound reached about 250 MiB in 20 s; the figures
of ``bench/pingflood.py`` are in docs/security.md).
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.bench_boundary import MiB, rss
from bench.common import free_port, serving_line
from bench.soak import _config, _start_daemon
from referee.net.keys import KeyPair, decode_key
from tests.e2e.daemon import text, wait_for
from tests.e2e.helpers import BOTS, PY, RANDOM

pytestmark = pytest.mark.timeout(180)

ATTACK_S = 15.0


def watch(pid: int, done: Callable[[], bool], within: float) -> tuple[int, int]:
    """Sample ``pid``'s RSS every 0.1 s until ``done()``; (RSS at the start, the peak)."""
    start = peak = rss(pid)
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, "the attack did not end in time"
        assert rss(pid) > 0, "the referee ended during the attack"
        peak = max(peak, rss(pid))
        time.sleep(0.1)  # another process's progress: nothing to await
    return start, peak


def test_a_local_bot_flooding_pings_over_ipc_leaves_the_referee_flat(tmp_path: Path) -> None:
    out, seat = tmp_path / "out", tmp_path / "flood.report"
    bot = f"{PY} {BOTS / 'pingflood_bot.py'} {ATTACK_S} {seat}"
    referee = subprocess.Popen(
        [PY, "-m", "referee", "match", bot, RANDOM, "--games", "1000",
         "--seed", "1", "--out", str(out), "--move-time", "1", "--bank", "2",
         "--startup-time", "30", "--sandbox", "none"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for("the flood to start", lambda: "start" in text(seat))
        start, peak = watch(referee.pid, lambda: "{" in text(seat), ATTACK_S + 60)
        assert referee.poll() is None
    finally:
        referee.send_signal(signal.SIGTERM)
        referee.communicate(timeout=60)
    report = json.loads(text(seat).splitlines()[-1])
    assert report["pings"] > 100_000, report  # it really flooded
    # 5 waves of 2 processes held 32 connections each at most at once (the per-process cap):
    # more than that means connections were dropped and their slots given back.
    assert report["connections"] > report["processes"] * 32, report
    assert report["reconnect_s"]["count"] > 0, report
    assert peak - start < 64 * MiB, f"the referee grew {(peak - start) / MiB:.0f} MiB"


def test_a_curve_client_flooding_pings_over_tcp_gets_its_key_back() -> None:
    with tempfile.TemporaryDirectory(prefix="gin-pingflood-") as tmp:
        directory = Path(tmp)
        pair = KeyPair.generate()
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        daemon = _start_daemon(_config(directory, [pair]), endpoint, directory / "out", True)
        try:
            assert daemon.stderr is not None
            line = serving_line(daemon.stderr.readline)
            server = line.rsplit("referee key ", 1)[1].strip()
            decode_key(server)
            flood = subprocess.Popen(
                [PY, "-m", "bench.pingflood", endpoint, str(ATTACK_S), "--connections", "1",
                 "--processes", "1", "--server-key", server, "--client-secret",
                 pair.secret_z85],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            start, peak = watch(daemon.pid, lambda: flood.poll() is not None, ATTACK_S + 60)
            report = json.loads(flood.communicate(timeout=30)[0])
            assert daemon.poll() is None
        finally:
            daemon.terminate()
            daemon.communicate(timeout=60)
    assert report["pings"] > 10_000, report
    # One live connection per key: every connection after the first got in only because the
    # referee had dropped the one before (no hello: the admission deadline) and freed its key.
    assert report["connections"] >= 2 and report["reconnect_s"]["count"] >= 1, report
    assert peak - start < 64 * MiB, f"the daemon grew {(peak - start) / MiB:.0f} MiB"
