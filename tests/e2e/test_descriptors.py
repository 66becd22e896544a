"""The daemon raises its soft open-files limit to the hard limit at start, and says so once."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from tests.e2e.daemon import Procs, start_referee, text, wait_for
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(60)


LOW_SOFT_LIMIT = (
    "import os, resource, sys\n"
    "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
)
"""Python that lowers its soft limit to a distribution's usual 256, then runs its arguments."""


def nofile(pid: int) -> tuple[int, int]:
    """(soft, hard) RLIMIT_NOFILE of a running process, from /proc."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open files line")


def test_serve_raises_its_open_files_limit_to_the_hard_limit(tmp_path: Path, procs: Procs) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 256:
        pytest.fail(f"this machine's hard limit ({hard}) leaves nothing to raise")
    config = tmp_path / "serve.toml"
    config.write_text(
        '[tournament]\nname = "fds"\ngames_per_pairing = 2\n'
        '[[bots]]\nname = "alice"\nremote = true\ntoken = "alice-token-123"\n'
        '[[bots]]\nname = "bob"\nremote = true\ntoken = "bob-token-4567"\n'
    )
    serve, _endpoint, out = start_referee("serve", config, procs, python=(PY, "-c", LOW_SOFT_LIMIT))
    assert nofile(serve.pid) == (hard, hard)
    log = out / "referee.log.jsonl"
    wait_for("the log line", lambda: "open files limit" in text(log))
    serve.terminate()
    serve.communicate(timeout=30)
    lines = [line for line in text(log).splitlines() if "open files limit" in line]
    assert len(lines) == 1 and f"raised from 256 to the hard limit {hard}" in lines[0]
