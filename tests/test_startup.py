"""Start-up stays cheap: what ``gin-referee match`` and a Python bot import, and how the
program exits. Each check runs a fresh interpreter and reads its ``sys.modules``; nothing here
is timed (``bench/bench_startup.py`` measures the time)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.rules import melds
from tests.e2e.helpers import GREEDY, RANDOM

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent

NOT_FOR_A_MATCH = (
    "referee.tournament.config",
    "referee.tournament.runner",
    "referee.tournament.store",
    "referee.tournament.stats",
    "referee.tournament.report",
    "referee.view",
    "referee.live",
    "referee.toolkit.check",
    "referee.toolkit.feed",
    "referee.toolkit.battery",
    "referee.toolkit.checklist",
    "referee.toolkit.probe",
    "referee.cli.tournament",
    "referee.cli.results",
    "referee.cli.sprt",
    "referee.cli.view",
    "referee.cli.workers",
    "referee.cli.toolkit",
    "sqlite3",
    "psycopg",
    "aiohttp",
    "tomllib",
    "zmq",
)
"""Modules of other commands (and pyzmq, which only bots use): a match imports none."""


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    names: list[str] = json.loads(done.stdout.splitlines()[-1])
    return set(names)


def loaded(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules that are one of ``prefixes`` or inside one of them."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


AFTER_THE_BOTS_START = (
    "referee.net.transport",
    "referee.match.hub",
    "referee.match.seat",
    "referee.match.play",
    "referee.match.record",
    "protocol.codec",
    "protocol.schema",
    "referee.rules.cards",
    "referee.rules.state",
    "referee.rules.moves",
    "referee.match.runner",
    "referee.net.process",
)
"""What a match imports only once its bots are started: their start overlaps these imports."""


def test_the_command_line_imports_only_what_a_match_needs() -> None:
    modules = modules_after("import referee.cli.main")
    assert loaded(modules, NOT_FOR_A_MATCH) == []
    assert loaded(modules, ("nacl", "referee.net.curve")) == []  # CURVE: only when used
    assert loaded(modules, (*AFTER_THE_BOTS_START, "asyncio", "structlog")) == []
    # what it does import: the match's early start, the bots' spawn, the rule sets
    assert {"referee.match.early", "referee.net.spawn", "referee.rules.ruleset"} <= modules


def test_the_rules_load_only_the_modules_a_program_uses() -> None:
    counting = modules_after("from referee.rules import Card, CardSet, deadwood")
    compiled = ["referee.rules._melds"] if melds.COMPILED else []  # the searches, compiled
    assert loaded(counting, ("referee.rules",)) == [
        "referee.rules",
        *compiled,
        "referee.rules.cards",
        "referee.rules.compiled",
        "referee.rules.errors",
        "referee.rules.melds",
    ]
    playing = modules_after("from referee.rules import legal_actions, apply")
    assert {"referee.rules.state", "referee.rules.moves"} <= playing


def test_every_public_rules_name_has_a_home_and_resolves() -> None:
    from referee import rules

    homes = rules._HOME
    assert set(homes) == set(rules.__all__)
    for name, module in homes.items():
        assert getattr(rules, name) is getattr(
            importlib.import_module(f"referee.rules.{module}"), name
        )
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = rules.nothing


def test_a_match_starts_its_bots_before_it_imports_the_loop_the_endpoint_and_the_game(
    tmp_path: Path,
) -> None:
    argv = ["match", GREEDY, RANDOM, "--games", "1", "--target-points", "10", "--seed", "1"]
    argv += ["--out", str(tmp_path)]
    seen = tmp_path / "at-spawn.json"
    code = f"""
import json, sys
import referee.net.spawn as spawning
spawn = spawning.spawn
def noted(*args, **kwargs):
    with open({str(seen)!r}, "a") as f:
        f.write(json.dumps(sorted(sys.modules)) + "\\n")
    return spawn(*args, **kwargs)
spawning.spawn = noted
from referee.cli.main import main
assert main({argv!r}) == 0, "the match failed"
"""
    after = modules_after(code)
    at_spawns = [set(json.loads(line)) for line in seen.read_text().splitlines()]
    assert len(at_spawns) == 2  # both bots
    assert loaded(at_spawns[1], (*AFTER_THE_BOTS_START, "asyncio", "structlog")) == []
    assert {*AFTER_THE_BOTS_START, "asyncio", "structlog"} <= after  # imported after both
    assert loaded(after, ("nacl", "referee.net.curve")) == []  # no TCP endpoint, no keys


def test_a_played_match_imports_nothing_of_the_other_commands(tmp_path: Path) -> None:
    argv = ["match", GREEDY, RANDOM, "--games", "1", "--target-points", "10", "--seed", "1"]
    argv += ["--out", str(tmp_path)]
    modules = modules_after(
        f"from referee.cli.main import main\nassert main({argv!r}) == 0, 'the match failed'"
    )
    assert (tmp_path / "match.jsonl").is_file()
    assert loaded(modules, NOT_FOR_A_MATCH) == []
    assert "referee.match.play" in modules and "referee.cli.parsers" in modules


def test_other_commands_import_their_modules_when_they_run(tmp_path: Path) -> None:
    modules = modules_after(
        f"from referee.cli.main import main\nassert main(['results', {str(tmp_path)!r}]) == 2"
    )
    assert "referee.cli.results" in modules and "referee.tournament.store" in modules
    assert "referee.cli.tournament" not in modules


def test_the_bot_sdk_imports_neither_curve_helpers_nor_asyncio() -> None:
    modules = modules_after("import protocol.bot")
    unwanted: tuple[str, ...] = ("zmq.auth", "zmq.utils.monitor", "zmq.asyncio", "asyncio")
    unwanted += ("nacl", "referee")
    unwanted += ("argparse", "traceback")  # options to read, an error to print: when needed
    assert loaded(modules, unwanted) == []
    assert "zmq" in modules and "protocol.codec" in modules


def test_the_toolkit_imports_the_bot_authors_tools_on_first_use() -> None:
    modules = modules_after(
        "import sys, referee.toolkit as m\n"
        "assert 'referee.toolkit.check' not in sys.modules\n"
        "from referee.toolkit.check import run_check\n"
        "assert m.run_check is run_check and m.CheckOptions.__name__ == 'CheckOptions'\n"
        "assert m.feed_record.__module__ == 'referee.toolkit.feed'\n"
        "try:\n    m.no_such_name\nexcept AttributeError as err:\n    print(err)\n"
        "else:\n    raise SystemExit('no AttributeError')"
    )
    assert {"referee.toolkit.check", "referee.toolkit.feed"} <= modules


def run_program(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed program's entry point on ``args``, in a fresh process that has run
    ``code`` just before it."""
    script = "import sys\nfrom referee.cli.main import run\n"
    script += f"{code}\nsys.argv = ['gin-referee', *{list(args)!r}]\nrun()"
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_the_program_exits_with_the_commands_code_after_the_exit_handlers(
    tmp_path: Path,
) -> None:
    handler = "import atexit\natexit.register(lambda: print('exit handler ran', flush=True))"
    usage = run_program(handler, "match", "only-one-bot")
    assert usage.returncode == 2
    assert "the following arguments are required: bot_b" in usage.stderr
    assert usage.stdout == "exit handler ran\n"
    keys = run_program(handler, "keygen", "--bot", "b1", "--out", str(tmp_path))
    assert keys.returncode == 0, keys.stderr
    public = keys.stdout.splitlines()
    assert len(public[0]) == 40 and public[1] == "exit handler ran"  # stdout flushed, in order
    assert (tmp_path / "b1.key_secret").is_file()


def test_the_program_waits_for_a_running_thread() -> None:
    thread = (
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(1), print('thread done', flush=True)))"
        ".start()"
    )  # still running when the command (a usage error: milliseconds) returns
    done = run_program(thread, "match", "only-one-bot")
    assert done.returncode == 2 and done.stdout == "thread done\n"
