"""Fixtures of the live page's tests: the viewer tests' headless browser and screenshot folder."""

from __future__ import annotations

from tests.view.conftest import browser, shots

__all__ = ["browser", "shots"]
