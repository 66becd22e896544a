"""Fixtures of the viewer tests: one real match record and one headless browser per module."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import GREEDY, RANDOM, play
from tests.view.browser import Browser


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The record of a real 2-game match between the sample bots."""
    out = tmp_path_factory.mktemp("match")
    result = asyncio.run(play(GREEDY, RANDOM, out, games=2))
    assert result.record_path is not None
    return Path(result.record_path)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A headless Chromium for the module's tests (its process group is killed at the end)."""
    chromium = Browser()
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the module's screenshots go (printed as they are saved)."""
    return tmp_path_factory.mktemp("screenshots")
