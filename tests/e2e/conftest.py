"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.daemon import Procs


@pytest.fixture
def procs() -> Iterator[Procs]:
    """A list for the processes a test starts; whatever still runs at the end is killed."""
    started: Procs = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
