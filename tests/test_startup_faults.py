"""A bot that cannot start, as a newcomer meets it: the Node sample bot without its packages
(``npm ci`` never run) and a command that is not found (exit 127). ``gin-referee match`` runs
as a subprocess, the bots in their sandbox, and the printed fault must name the cause and
what to do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import NODE_DIR, RANDOM

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent


def match(a: str, b: str, cwd: Path) -> tuple[int, list[str]]:
    """Run ``gin-referee match A B --games 1``; its exit code and its fault lines."""
    done = subprocess.run(
        [sys.executable, "-m", "referee", "match", a, b, "--games", "1"],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=100,
    )
    return done.returncode, [ln for ln in done.stdout.splitlines() if ln.startswith("  fault:")]


def test_a_node_bot_without_its_packages_names_the_package_and_npm_ci(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "install Node.js >= 18"
    bot = tmp_path / "node"
    bot.mkdir(mode=0o755)
    tmp_path.chmod(0o755)  # a root referee's bot reads its own files as a uid of its own
    for name in ("bot.js", "package.json", "package-lock.json"):
        shutil.copy(NODE_DIR / name, bot / name)
    code, faults = match(f"{node} {bot / 'bot.js'}", RANDOM, ROOT)
    assert code == 3
    (fault,) = faults
    assert fault.startswith("  fault: bot startup: exited with code 1 before saying hello; ")
    assert "Node package 'zeromq' not found: run npm ci in the bot's directory" in fault
    quoted = fault.partition("; last stderr: ")[2]
    # the error line first (its cause), then the tail, as before
    assert quoted.startswith("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zeromq'")
    assert quoted.endswith("| Node.js " + subprocess.check_output([node, "-v"], text=True).strip())
    assert len(quoted) <= 300


def test_a_command_not_found_says_so_and_what_to_do(tmp_path: Path) -> None:
    code, faults = match("sh -c 'exec no_such_program_here'", RANDOM, tmp_path)
    assert code == 3
    (fault,) = faults
    assert "exited with code 127 before saying hello; command not found: " in fault
    assert "not on the bot's PATH" in fault and "activate the venv" in fault
    assert fault.endswith("last stderr: sh: 1: exec: no_such_program_here: not found")
