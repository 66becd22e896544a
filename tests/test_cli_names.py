"""The names the organiser gives: a bot is named after its program (not its last argument),
and in a tournament after the config's ``name``, in every record and page (README, "Names")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import gin
from tests.e2e.helpers import BOTS, PY

pytestmark = pytest.mark.timeout(120)


def test_a_bot_is_named_after_its_program_whatever_its_arguments(tmp_path: Path) -> None:
    tracker = f"{PY} {BOTS / 'tracker.py'} inline"
    done = gin("match", "nosuchcmd --x", tracker, "--games", "1", "--out", str(tmp_path))
    assert done.returncode == 3, done.stderr
    assert "fault: nosuchcmd startup: cannot start bot 'nosuchcmd --x'" in done.stdout
    assert "tracker calls itself tracker-inline" in done.stdout
    header = json.loads((tmp_path / "match.jsonl").read_text().splitlines()[0])
    assert header["seats"] == ["nosuchcmd", "tracker"], header
