"""A remote seat of ``match``: a person starts its bot by hand, so it gets 300 s to say hello
by default (``--startup-time`` overrides; the bots started here keep 10 s), and a ``--bind``
on a wildcard address is told as the addresses a remote bot can use (README, "Playing
matches")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.common import free_port
from tests.cli_helpers import REPO, gin
from tests.e2e.helpers import GREEDY, PY

pytestmark = pytest.mark.timeout(120)


def test_a_remote_seat_waits_past_the_local_limit_and_is_told_usable_addresses(
    tmp_path: Path,
) -> None:
    port = free_port()
    referee = subprocess.Popen(
        [sys.executable, "-m", "referee", "match", GREEDY, "remote:alice", "--games", "1",
         "--bind", f"tcp://0.0.0.0:{port}", "--insecure", "--key-dir", str(tmp_path / "keys"),
         "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    bot: subprocess.Popen[bytes] | None = None
    try:
        assert referee.stderr is not None
        line = ""
        for line in referee.stderr:
            if line.startswith("remote seat alice: connect to "):
                break
        assert "connect to tcp://0.0.0.0" not in line, line  # no one can connect to that
        assert f"tcp://127.0.0.1:{port} on this machine" in line, line
        assert f"bound to tcp://0.0.0.0:{port}: port {port} of every address" in line, line
        first = line.removeprefix("remote seat alice: connect to ").split(" ", 1)[0]
        assert re.fullmatch(rf"tcp://[0-9.]+:{port},?", first), line
        token = line.split(" with token ", 1)[1].split(" ", 1)[0]
        time.sleep(10.5)  # alice starts her bot later than a local bot's 10 s: the scenario
        env = {**os.environ, "GIN_REFEREE_ENDPOINT": first.rstrip(","), "GIN_REFEREE_TOKEN": token}
        bot = subprocess.Popen([PY, "-m", "sample_bots.random_bot"], env=env, cwd=REPO)
        out, err = referee.communicate(timeout=60)
        assert bot.wait(30) == 0
    finally:
        for proc in (referee, bot):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.wait(10)
    assert referee.returncode == 0, err
    assert "match: 1 game(s), normal" in out and "fault:" not in out, out
    header = json.loads((tmp_path / "out" / "match.jsonl").read_text().splitlines()[0])
    assert header["time_control"]["startup_ms"] == 10_000  # the local bot's limit, as before


def test_startup_time_overrides_a_remote_seats_limit(tmp_path: Path) -> None:
    done = gin("match", GREEDY, "remote:alice", "--games", "1", "--insecure", "--key-dir",
               str(tmp_path), "--startup-time", "1")  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "  fault: alice startup: no hello within 1.0 s" in done.stdout, done.stdout
