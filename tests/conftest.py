"""Shared fixtures: every test fails if it leaves a child process behind, or if anything logs
at ERROR (a referee bug) unless the test is marked ``expect_error_log``."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# CI must be reproducible: the same examples on every run (locally, hypothesis explores).
# No deadline anywhere: a per-example time limit is a timed assertion, and on a shared, loaded
# machine a 1 ms example took 490 ms (speed goals live in bench/).
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def live_children() -> list[int]:
    """PIDs of this process's children that are not zombies (from /proc)."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if fields.get("PPid", "").strip() == str(me) and not fields.get("State", "").startswith(
            "Z"
        ):
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_leaked_children() -> Iterator[None]:
    """Fail the test if any child process outlives it (a short reaping window is allowed)."""
    before = set(live_children())
    yield
    deadline = time.monotonic() + 2.0
    leaked = set(live_children()) - before
    while leaked and time.monotonic() < deadline:
        time.sleep(0.05)  # polling /proc: there is nothing to await for another's child
        leaked = set(live_children()) - before
    assert not leaked, f"leaked child processes: {sorted(leaked)}"


class _ErrorRecords(logging.Handler):
    """Keeps every record at ERROR or above that reaches the root logger."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def no_error_logs(request: pytest.FixtureRequest) -> Iterator[_ErrorRecords]:
    """Fail the test if anything logs at ERROR (a referee bug, a failed callback...), unless
    it is marked ``expect_error_log`` (it then asserts on the records itself: request this
    fixture by name to read them)."""
    handler = _ErrorRecords()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
    if request.node.get_closest_marker("expect_error_log") is None:
        lines = [f"{r.name}: {r.getMessage()}" for r in handler.records]
        assert not lines, f"unexpected ERROR log records: {lines}"
