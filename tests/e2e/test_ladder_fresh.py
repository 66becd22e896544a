"""A fresh ladder with ``--spectate``, as an organiser first starts one: no entrant yet, no
ladder in its store. It once logged an ERROR and a 250-line traceback (the live page's
leaderboard read the store before the ladder was in it); now the page serves an empty
leaderboard and the run logs no error, then stops on SIGINT with exit 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest

from bench.common import free_port, serving_line
from tests.e2e.daemon import Procs, text, wait_for
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(90)


def test_a_fresh_ladder_with_a_live_page_logs_no_error(tmp_path: Path, procs: Procs) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text('[ladder]\nname = "fresh"\npoll = 0.2\n')
    port, out = free_port(), tmp_path / "out"
    ladder = subprocess.Popen(
        [PY, "-m", "referee", "ladder", "run", str(config), "--out", str(out), "--insecure",
         "--bind", f"tcp://127.0.0.1:{free_port()}", "--spectate", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    procs.append(ladder)
    assert ladder.stderr is not None
    serving_line(ladder.stderr.readline)

    def board() -> dict[str, object] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/leaderboard.json") as r:
                found: dict[str, object] = json.loads(r.read())
                return found
        except urllib.error.HTTPError:
            return None  # not published yet

    wait_for("the empty leaderboard", lambda: board() is not None)
    assert board() is not None and board()["players"] == []  # type: ignore[index]
    ladder.send_signal(signal.SIGINT)
    _, err = ladder.communicate(timeout=60)
    assert ladder.returncode == 0, err
    log = text(out / "referee.log.jsonl")
    assert "Traceback" not in err + log and '"level": "error"' not in log, log[-2000:]


def workers_of(pid: int) -> list[int]:
    """Live ``gin-referee worker`` processes started by ``pid`` (``--parent PID``)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if state != "Z" and b"\0worker\0" in cmdline and f"\0--parent\0{pid}\0".encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_a_killed_worker_is_reaped_logged_and_replaced(tmp_path: Path, procs: Procs) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text('[ladder]\nname = "kept"\npoll = 0.2\n')
    out = tmp_path / "out"
    ladder = subprocess.Popen(
        [PY, "-m", "referee", "ladder", "run", str(config), "--out", str(out), "--insecure",
         "--bind", f"tcp://127.0.0.1:{free_port()}", "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    procs.append(ladder)
    assert ladder.stderr is not None
    serving_line(ladder.stderr.readline)
    wait_for("its worker", lambda: len(workers_of(ladder.pid)) == 1)
    (first,) = workers_of(ladder.pid)
    os.kill(first, signal.SIGKILL)
    wait_for("another worker", lambda: workers_of(ladder.pid) not in ([], [first]))
    log = out / "referee.log.jsonl"
    wait_for("the log line", lambda: f"(pid {first}) ended" in text(log))
    (line,) = [ln for ln in text(log).splitlines() if f"(pid {first}) ended" in ln]
    assert "killed by SIGKILL; starting another in 1 s" in line, line
    ladder.send_signal(signal.SIGINT)
    ladder.communicate(timeout=60)
    assert ladder.returncode == 0
    assert workers_of(ladder.pid) == []
