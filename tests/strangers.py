"""Interpreters a bot of a root referee can run at sandbox level ``rlimits``.

At ``rlimits`` there are no mounts: a bot running as a host uid of its own
(:mod:`referee.net.botuid`) reaches its interpreter through the host's own paths, so only
through directories that let other users in. This repository's interpreter may live under a
0700 home (pyenv under ``/root``): then these tests use Debian's ``/usr/bin/python3``, with the
SDK's packages from Debian (``python3-zmq``, ``python3-msgpack``: ``.ci/run`` installs them)
and this checkout on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.net.mounts import UnreachableError, check_reachable

REPO = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"


def _reachable(program: str, cwd: str) -> bool:
    try:
        check_reachable([program], cwd, None, 60999)
    except UnreachableError:
        return False
    return True


def stranger_python(*, sdk: bool = False) -> tuple[str, dict[str, str]]:
    """A Python (and the environment it needs) that a bot uid can run at ``rlimits``: this
    one when root does not run bots as strangers or it is reachable, else Debian's. With
    ``sdk``, one that imports the SDK. Skips, naming why, when there is none."""
    if os.geteuid() != 0 or _reachable(sys.executable, str(REPO)):
        return sys.executable, {}
    if not _reachable(SYSTEM_PYTHON, str(REPO)):
        pytest.skip(f"NO PYTHON A BOT UID CAN REACH: {sys.executable} and {SYSTEM_PYTHON}")
    env = {"PYTHONPATH": str(REPO)} if sdk else {}
    if sdk:
        probe = subprocess.run([SYSTEM_PYTHON, "-c", "import zmq, msgpack"], check=False)
        if probe.returncode != 0:
            pytest.skip(
                "Debian's python3 lacks python3-zmq/python3-msgpack (.ci/run installs them)"
            )
    return SYSTEM_PYTHON, env
