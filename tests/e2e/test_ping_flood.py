"""PINGs from peers that never read, against a real referee process (issue #29).

The attack grew the referee from 34 MiB to 1,235 MiB in two minutes: every PING was answered
with a PONG queued towards a peer that read nothing, and a connection the referee closed
waited for a drain that never came, holding its bytes, its descriptor, its connection slot
and its CURVE key until the attacker left. Here the referee writes one PONG at most to such a
peer and aborts a close that does not drain (also one the peer began by ending its side of
the stream), so its memory stays flat and the attacker's connections come back to it (the
slots and the key are free again).

Two attackers, each a real process: a local bot in a ``match`` whose helpers flood the
private ``ipc://`` socket (``tests/bots/pingflood_bot.py``; not sandboxed, so that it can
write its report where the test reads it: a sandboxed bot reaches the socket the same way;
``bench/bench_pingflood.py`` runs it), and a TCP client with a registered CURVE key against
``serve``. Growth is bounded at 64 MiB (a generous margin: the attack without the bound
reached about 250 MiB in 20 s; the figures of ``bench/pingflood.py`` are in
docs/security.md).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from bench.bench_boundary import MiB
from bench.bench_pingflood import run_match, watch
from bench.common import free_port, serving_line
from bench.soak import _config, _start_daemon
from referee.net.keys import KeyPair, decode_key
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(180)

ATTACK_S = 15.0


@pytest.mark.parametrize("half_close", [0.0, 1.0], ids=["pings", "half-close"])
def test_a_local_bot_flooding_pings_over_ipc_leaves_the_referee_flat(
    tmp_path: Path, half_close: float
) -> None:
    """The bot's helpers PING and never read; or, half-closing, end their side of each
    connection after 1 s, with PONGs queued towards them, and keep their sockets."""
    samples, report, _ = run_match(ATTACK_S, tmp_path, half_close)
    assert report["pings"] > 100_000, report  # it really flooded
    # 5 waves of 2 processes held 32 connections each at most at once (the per-process cap):
    # more than that means connections were dropped and their slots given back.
    assert report["connections"] > report["processes"] * 32, report
    assert report["reconnect_s"]["count"] > 0, report
    if half_close:  # each closed by the referee while its socket was still open
        assert report["released_s"]["count"] > 0 and report["pinned"] == 0, report
    grew = samples.rss_peak - samples.rss_start
    assert grew < 64 * MiB, f"the referee grew {grew / MiB:.0f} MiB"


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
                 "--processes", "1", f"--server-key={server}",
                 f"--client-secret={pair.secret_z85}"],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            samples = watch(daemon.pid, lambda: flood.poll() is not None, ATTACK_S + 60)
            report = json.loads(flood.communicate(timeout=30)[0])
            assert daemon.poll() is None
        finally:
            daemon.terminate()
            daemon.communicate(timeout=60)
    assert report["pings"] > 10_000, report
    # One live connection per key: every connection after the first got in only because the
    # referee had dropped the one before (no hello: the admission deadline) and freed its key.
    assert report["connections"] >= 2 and report["reconnect_s"]["count"] >= 1, report
    grew = samples.rss_peak - samples.rss_start
    assert grew < 64 * MiB, f"the daemon grew {grew / MiB:.0f} MiB"
