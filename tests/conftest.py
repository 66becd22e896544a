"""Shared fixtures: every test fails if it leaves a child process behind."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# CI must be reproducible: the same examples on every run (locally, hypothesis explores).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
