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


LONGEST_FIRST = (
    "tests/e2e/test_fair_clocks.py",
    "tests/tournament/test_ladder_timing.py",
    "tests/live/test_live_cli.py::test_a_run_with_nothing_left_to_play",
    "tests/e2e/test_shipped_bots.py",
    "tests/e2e/test_host_attacks.py::test_a_cpu_burner_cannot_starve_the_other_seat",
    "tests/e2e/test_log_discipline.py::test_50000_bad_hellos",
    "tests/e2e/test_misbehaving.py::test_the_opponent_is_told_of_the_safe_moves",
    "tests/e2e/test_referee_stall.py",
    "tests/e2e/test_ping_flood.py",
    "tests/tournament/test_sprt_cli.py::test_sigterm_during_sprt",
    "tests/tournament/test_tournament_e2e.py::test_kept_bot_processes_play_exactly",
    "tests/e2e/test_boundary.py",
    "tests/test_cli.py::test_local_transport_flag",
    "tests/live/test_live_cli.py",
    "tests/tournament/test_ladder_e2e.py",
    "tests/live/test_live_browser.py",
    "tests/tournament/test_workers.py",
    "tests/tournament/test_serve.py",
    "tests/view/test_report_browser.py",
)
"""Where the longest tests are (measured: ``pytest --durations=40``). Run in parallel
(``pytest -n 4``, as ``.ci/run`` does), a long test started last makes every other worker wait
for it; started first, it runs beside the short ones. The order of tests inside a file holds."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests under :data:`LONGEST_FIRST` first, in its order (stable otherwise)."""

    def rank(item: pytest.Item) -> int:
        for index, prefix in enumerate(LONGEST_FIRST):
            if item.nodeid.startswith(prefix):
                return index
        return len(LONGEST_FIRST)

    items.sort(key=rank)
