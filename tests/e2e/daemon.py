"""Helpers for tests that run the referee as a daemon process (``serve``, ``tournament``)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.common import free_port, serving_line
from tests.e2e.helpers import PY

Procs = list[subprocess.Popen[str] | subprocess.Popen[bytes]]
"""Processes a test started; the ``procs`` fixture kills what is left of them."""


def wait_for(what: str, check: Callable[[], bool], within: float = 60.0) -> None:
    """Poll another process's progress (files it writes): there is nothing to await."""
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def text(path: Path) -> str:
    """A file's text, or "" while it does not exist."""
    return path.read_text(errors="replace") if path.exists() else ""


def start_referee(
    command: str,
    config: Path,
    procs: Procs,
    *extra: str,
    python: Sequence[str] = (PY,),
) -> tuple[subprocess.Popen[str], str, Path]:
    """``gin-referee COMMAND CONFIG --insecure [EXTRA...]`` on a free port (added to
    ``procs``), run by ``python`` (a command line ending where ``-m referee`` goes); (process,
    endpoint, output directory), once it says it is serving. ``--insecure``: these tests' remote
    bots connect without CURVE keys (tests/e2e/test_curve.py and test_serve.py use keys)."""
    endpoint, out = f"tcp://127.0.0.1:{free_port()}", config.parent / "out"
    referee = subprocess.Popen(
        [*python, "-m", "referee", command, str(config), "--bind", endpoint, "--out", str(out),
         "--insecure", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    procs.append(referee)
    assert referee.stderr is not None
    serving_line(referee.stderr.readline)  # past the --insecure warning
    return referee, endpoint, out
