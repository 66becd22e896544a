"""SIGTERM of ``serve``, ``tournament`` and ``match``, with real referee processes and real
bots seated in a game and waiting in the lobby: every bot is told (``error`` ``shutdown``),
nobody is charged a fault, every bot process is gone, and the referee exits within 6 s."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from referee.tournament.store import SqliteStore
from tests.e2e.daemon import Procs, start_referee, text, wait_for
from tests.e2e.helpers import BOTS, PY

pytestmark = pytest.mark.timeout(120)

SLOW = f"{PY} {BOTS / 'slow_bot.py'}"
EXIT_WITHIN = 6.0
TOLD = "referee reports shutdown"
SEATED = '"type":"seats"'  # the record line written once both bots said hello


def records(out: Path) -> list[Path]:
    return sorted((out / "games").glob("*.jsonl")) if (out / "games").exists() else []


def pids_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker`` (in any pid namespace)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit():
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if marker in cmdline and "bwrap" not in cmdline and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


class Remote:
    """A remote bot process (the slow SDK bot, asking for ``multi_match``)."""

    def __init__(self, endpoint: str, token: str, name: str, stderr: Path) -> None:
        env = {**os.environ, "GIN_REFEREE_ENDPOINT": endpoint, "GIN_REFEREE_TOKEN": token,
               "SLOW_BOT_NAME": name}  # fmt: skip
        self.stderr = stderr
        with stderr.open("w") as sink:
            self.proc = subprocess.Popen(
                [PY, str(BOTS / "slow_bot.py"), "0.3", "multi"], env=env, stderr=sink
            )


def sigterm_and_time(proc: subprocess.Popen[str]) -> tuple[float, str]:
    """SIGTERM the referee; (seconds until it exited, its stderr)."""
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    elapsed = time.monotonic() - started
    print(f"exit {elapsed:.2f} s after SIGTERM")
    return elapsed, err


def assert_interrupted_without_faults(record: Path) -> None:
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[-1]["type"] == "match_end" and lines[-1]["interrupted"] is True
    assert not [line for line in lines if line["type"] == "fault"]


def test_serve_sigterm_tells_seated_and_lobby_bots_and_exits_within_6_s(
    tmp_path: Path, procs: Procs
) -> None:
    config = tmp_path / "serve.toml"
    bots = "".join(
        f'[[bots]]\nname = "{name}"\nremote = true\ntoken = "{name}-token-123"\n'
        for name in ("alice", "bob", "carol")
    )
    config.write_text(
        f'[tournament]\nname = "s"\ngames_per_pairing = 2\nconcurrency = 1\n'
        f"[time]\nmove = 2.0\nbank = 10.0\nstartup = 15.0\n{bots}"
    )
    serve, endpoint, out = start_referee("serve", config, procs)
    remotes = [
        Remote(endpoint, f"{name}-token-123", name, tmp_path / f"{name}.stderr")
        for name in ("alice", "bob", "carol")
    ]
    procs.extend(r.proc for r in remotes)
    log = out / "referee.log.jsonl"
    # One game in progress (two bots seated), the third bot waiting in the lobby.
    wait_for("a game in progress", lambda: any(SEATED in text(r) for r in records(out)))
    # (each bot enters the lobby once; two of them then leave it for the game)
    wait_for("three lobby arrivals", lambda: text(log).count("waits in the lobby") == 3)
    elapsed, err = sigterm_and_time(serve)
    assert serve.returncode == 130, err
    assert elapsed < EXIT_WITHIN
    for remote in remotes:
        assert remote.proc.wait(10) == 0, remote.stderr.read_text()
        assert TOLD in remote.stderr.read_text(), remote.stderr.read_text()
    (record,) = records(out)
    assert_interrupted_without_faults(record)
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        assert not store.faults()
        assert all(row.status == "pending" for row in store.games())  # replayed on resume
    finally:
        store.close()


def test_tournament_sigterm_ends_local_and_remote_bots_and_exits_within_6_s(
    tmp_path: Path, procs: Procs
) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        '[tournament]\nname = "t"\ngames_per_pairing = 2\nconcurrency = 1\n'
        "[time]\nmove = 2.0\nbank = 10.0\nstartup = 15.0\n"
        f'[[bots]]\nname = "stubborn"\ncommand = "{SLOW} 0.3 stubborn mark-4471"\n'
        f'[[bots]]\nname = "slow"\ncommand = "{SLOW} 0.3 mark-4471"\n'
        '[[bots]]\nname = "dave"\nremote = true\ntoken = "dave-token-123"\n'
    )
    referee, endpoint, out = start_referee("tournament", config, procs)
    dave = Remote(endpoint, "dave-token-123", "dave", tmp_path / "dave.stderr")
    procs.append(dave.proc)
    wait_for("a game in progress", lambda: any(SEATED in text(r) for r in records(out)))
    wait_for("dave in the lobby", lambda: "waits in the lobby" in text(out / "referee.log.jsonl"))
    assert len(pids_with("mark-4471")) == 2
    elapsed, err = sigterm_and_time(referee)
    assert referee.returncode == 130, err
    assert elapsed < EXIT_WITHIN
    assert not pids_with("mark-4471")
    stderr_files = sorted((out / "stderr").glob("*.stderr"))
    assert len(stderr_files) == 2
    for path in stderr_files:
        assert TOLD in text(path), text(path)
    assert dave.proc.wait(10) == 0 and TOLD in text(dave.stderr)
    assert_interrupted_without_faults(records(out)[0])
    store = SqliteStore.open(out / "tournament.sqlite")
    try:
        assert not store.faults()
    finally:
        store.close()


def test_match_sigterm_tells_a_local_and_a_remote_bot_and_exits_within_6_s(
    tmp_path: Path, procs: Procs
) -> None:
    referee = subprocess.Popen(
        [PY, "-m", "referee", "match", f"{SLOW} 0.3 stubborn mark-5582", "remote:alice",
         "--games", "5", "--insecure",
         "--move-time", "2", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    procs.append(referee)
    assert referee.stderr is not None
    notice = referee.stderr.readline()
    while "connect to" not in notice and notice:  # past the --insecure warning
        notice = referee.stderr.readline()
    found = re.search(r"connect to (\S+) with token (\S+)", notice)
    assert found, notice
    alice = Remote(found.group(1), found.group(2), "alice", tmp_path / "alice.stderr")
    procs.append(alice.proc)
    record, local = tmp_path / "match.jsonl", tmp_path / "match.seat0.stderr"
    wait_for("the match in progress", lambda: SEATED in text(record))
    assert pids_with("mark-5582"), "the local bot runs"
    elapsed, err = sigterm_and_time(referee)
    assert referee.returncode == 130, err
    assert elapsed < EXIT_WITHIN
    assert not pids_with("mark-5582")
    assert alice.proc.wait(10) == 0
    assert TOLD in text(local) and TOLD in text(alice.stderr)
    assert_interrupted_without_faults(record)
