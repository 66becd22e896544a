"""The names the organiser gives: a bot is named after its program (not its last argument),
and in a tournament after the config's ``name``, in every record and page (README, "Names")."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from bench.common import free_port
from referee.match import read_record_lines
from tests.cli_helpers import REPO, gin
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


def test_every_record_of_a_kept_bots_tournament_names_the_configs_names(tmp_path: Path) -> None:
    """The sample bots ask for ``multi_match``: each is kept between its pairing's games, its
    seat bound to its earlier hello before the next record's header is written."""
    config = tmp_path / "cup.toml"
    config.write_text(
        '[tournament]\nname = "kept"\ngames_per_pairing = 4\nseed = 7\nconcurrency = 2\n'
        "reuse_bots = true\n"
        f'[[bots]]\nname = "alpha"\ncommand = "{PY} -m sample_bots.greedy_bot"\n'
        f'[[bots]]\nname = "beta"\ncommand = "{PY} -m sample_bots.random_bot"\n'
        f'[[bots]]\nname = "gamma"\ncommand = "{PY} -m sample_bots.greedy_bot"\n'
    )
    out = tmp_path / "out"
    done = gin("tournament", str(config), "--out", str(out))
    assert done.returncode == 0, done.stderr
    records = sorted((out / "games").glob("*.jsonl*"))
    assert len(records) == 12, records
    given = {"alpha", "beta", "gamma"}
    for record in records:
        lines = [value for _, value in read_record_lines(record)]
        header = lines[0]
        assert set(header["seats"]) <= given, (record.name, header["seats"])
        (hello,) = [line["names"] for line in lines if line["type"] == "seats"]
        assert all(name.startswith(("greedy-bot", "random-bot")) for name in hello), hello
    started = list((out / "stderr").iterdir())  # one file per bot process, for its first game
    assert len(started) < 2 * len(records), "no bot was kept: this would test nothing"


def test_the_live_pages_games_name_kept_bots_by_the_configs_names(tmp_path: Path) -> None:
    """``serve`` keeps its page up once every game is played: its last games' chips."""
    config = tmp_path / "cup.toml"
    config.write_text(
        '[tournament]\nname = "live"\ngames_per_pairing = 4\nseed = 3\nconcurrency = 1\n'
        f'[[bots]]\nname = "alpha"\ncommand = "{PY} -m sample_bots.greedy_bot"\n'
        f'[[bots]]\nname = "beta"\ncommand = "{PY} -m sample_bots.random_bot"\n'
    )
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", str(config), "--out", str(tmp_path / "out"),
         "--bind", "tcp://127.0.0.1:0", "--insecure", "--spectate", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert serve.stderr is not None
        for line in serve.stderr:  # the progress line of the last game
            if "4/4 games" in line:
                break
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/snapshot", timeout=30) as page:
            html = page.read().decode()
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=60)
    finally:
        if serve.poll() is None:
            serve.kill()
        serve.wait(10)
    assert serve.returncode == 130
    chips = re.findall(r'\\"names\\":\[([^]]*)\]', html)  # each game's (JSON in the page)
    assert chips, html[:2000]
    for chip in chips:
        assert set(json.loads(f"[{chip}]".replace('\\"', '"'))) <= {"alpha", "beta"}, chip
    assert len(list((tmp_path / "out" / "stderr").iterdir())) < 8  # bots were kept
