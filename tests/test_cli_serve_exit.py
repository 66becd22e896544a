"""``serve`` stopped by SIGINT exits 130, as every interrupted command does, even once every
game is played (README, "Exit status"; docs/tournaments.md, "serve")."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import REPO
from tests.e2e.helpers import GREEDY, RANDOM

pytestmark = pytest.mark.timeout(120)


def test_serve_interrupted_after_its_last_game_exits_130_and_says_so(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        '[tournament]\nname = "c"\ngames_per_pairing = 2\nseed = 1\nconcurrency = 1\n'
        f'[[bots]]\nname = "greedy"\ncommand = "{GREEDY}"\n'
        f'[[bots]]\nname = "random"\ncommand = "{RANDOM}"\n'
    )
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", str(config), "--out", str(tmp_path / "out"),
         "--bind", "tcp://127.0.0.1:0", "--insecure"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert serve.stderr is not None
        seen = []
        for line in serve.stderr:  # the progress line of the last game: every game is played
            seen.append(line)
            if "2/2 games" in line:
                break
        else:
            pytest.fail(f"serve ended before its last game: {''.join(seen)}")
        serve.send_signal(signal.SIGINT)
        out, err = serve.communicate(timeout=60)
    finally:
        if serve.poll() is None:
            serve.kill()
        serve.wait(10)
    assert serve.returncode == 130, err
    assert "interrupted: every game had been played" in err, err
    assert "greedy" in out and "random" in out  # the standings
