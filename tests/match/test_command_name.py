"""A bot's default name: its program's, whatever arguments follow (README, "Names")."""

from __future__ import annotations

import pytest

from referee.match.bots import BotSpec, command_name


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("./my_bot --depth 3", "my_bot"),
        ("node bot.js --level hard", "bot"),
        ("python3 my_bot.py --seed 4", "my_bot"),
        ("nosuchcmd --x", "nosuchcmd"),
        ("python3 -m sample_bots.random_bot", "random_bot"),
        (".venv/bin/python -u -m sample_bots.greedy_bot --fast", "greedy_bot"),
        ("/usr/bin/python3.11 -X dev bots/alpha.py 7", "alpha"),
        ("bash -x run.sh 2", "run"),
        ("java -cp lib -jar dist/beta.jar --hard", "beta"),
        ("deno run --allow-net bot.ts 3", "bot"),
        ("env DEPTH=3 ./gamma --fast", "gamma"),
        ("python3 -c 'import bot; bot.main()'", "python3"),
        ("node", "node"),
        ("./build/my_bot", "my_bot"),
        ("uv run --frozen python bots/delta.py --fast", "delta"),
        ("poetry run ./epsilon 3", "epsilon"),
    ],
)
def test_a_bot_is_named_after_its_program_not_its_last_argument(command: str, name: str) -> None:
    assert BotSpec.parse(command).name == name
    assert command_name(BotSpec.parse(command).command.argv) == name  # type: ignore[union-attr]
