"""What a real ``gin-referee match`` of local bots listens on, seen by its bots from ``/proc``:
on its bots' private ``ipc://`` socket only, no TCP port and no CURVE keys; where no ipc
socket can be bound, on its TCP endpoint, which then requires CURVE (a connection offering the
NULL mechanism is refused) and gives each bot its keys (docs/security.md, "Keys: who may
connect")."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import BOTS, PY

pytestmark = pytest.mark.timeout(120)

PROBE = f"{PY} {BOTS / 'endpoint_probe.py'}"
CURVE_VARIABLES = ["GIN_BOT_PUBLIC_KEY", "GIN_BOT_SECRET_KEY", "GIN_REFEREE_SERVER_KEY"]


def match(out: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """``gin-referee match`` of two probe bots (not sandboxed: each bot's parent is the
    referee); its completed process and each seat's report."""
    done = subprocess.run(
        [PY, "-m", "referee", "match", PROBE, PROBE, "--games", "1", "--target-points", "10",
         "--seed", "1", "--sandbox", "none", "--out", str(out), "--move-time", "1",
         "--bank", "2", "--startup-time", "30"],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=90, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports = []
    for seat in (0, 1):
        lines = (out / f"match.seat{seat}.stderr").read_text().splitlines()
        reports.append(json.loads(next(line for line in lines if line.startswith("{"))))
    return done, reports


def test_a_match_of_local_bots_listens_on_no_tcp_port(tmp_path: Path) -> None:
    _, reports = match(tmp_path / "out", {"GIN_REFEREE_HOME": str(tmp_path / "home")})
    for report in reports:
        assert report["scheme"] == "ipc"
        assert report["referee_listens"] == []
        assert report["curve_variables"] == []
    assert not (tmp_path / "home").exists()  # no key file read or made


def test_where_no_ipc_socket_can_be_bound_local_bots_use_tcp_with_curve(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 110)  # a unix socket's path holds at most 107 bytes
    deep.mkdir()
    home = tmp_path / "home"
    done, reports = match(tmp_path / "out", {"TMPDIR": str(deep), "GIN_REFEREE_HOME": str(home)})
    assert "local bots use TCP" in done.stderr
    for report in reports:
        assert report["scheme"] == "tcp"
        assert report["referee_listens"] == [report["port"]]  # the check sees a listener
        assert report["curve_variables"] == CURVE_VARIABLES
        assert report["null_probe"] == {"mechanism": "CURVE", "closed": True}
    assert not home.exists()  # a throw-away pair: no key file read or made
