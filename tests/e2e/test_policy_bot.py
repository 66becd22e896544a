"""One policy, both worlds: a policy written against the environment's observation makes the
same decisions in the environment and as a bot (protocol.policy) on the same deals.

A recorded match (greedy against random) is fed to the policy bot with ``replay --feed``
(:func:`~referee.toolkit.feed.feed_record`: the real messages, through ZeroMQ, to a real
process), and the same hands are stepped through the environment with the recorded moves; at
every decision of the seat the bot's reply and the policy's choice in the environment agree."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from referee.env import ACTIONS, AGENTS, GinRummyEnv
from referee.match.record import read_record_lines
from referee.net.process import BotCommand
from referee.rules import Knock, parse_action
from referee.toolkit.feed import feed_record
from tests.bots.obs_policy import policy
from tests.e2e.helpers import BOTS, GREEDY, PY, RANDOM, play

pytestmark = [pytest.mark.timeout(120)]

POLICY_BOT = f"{PY} {BOTS / 'obs_policy.py'}"
_NUMBER = {action: i for i, action in enumerate(ACTIONS)}


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-game match, greedy (seat 0) against random (seat 1)."""
    out = tmp_path_factory.mktemp("policy")
    result = asyncio.run(play(GREEDY, RANDOM, out, games=2, seed=11))
    assert result.reason == "normal" and not any(s.faults for s in result.seats)
    return out / "match.jsonl"


def number(text: str) -> int:
    """The action number of a recorded move (a knock's declared melds aside)."""
    action = parse_action(text)
    if isinstance(action, Knock):
        return 55 + action.card.index
    return _NUMBER[action]


def env_decisions(path: Path, seat: int) -> list[str]:
    """The policy's choice at each of ``seat``'s decisions, the recorded game stepped through
    the environment."""
    env = GinRummyEnv()
    agent = AGENTS[seat]
    chosen = []
    for _, line in read_record_lines(path):
        if line["type"] != "hand":
            continue
        env.reset(
            options={
                "deck": line["deck"],
                "dealer": line["dealer"],
                "scores": line["scores_before"],
            }
        )
        for who, text, _ in line["actions"]:
            assert env.agent_selection == AGENTS[who]
            if who == seat:
                chosen.append(str(ACTIONS[policy(env.observe(agent))]))
            env.step(number(text))
    return chosen


@pytest.mark.asyncio
@pytest.mark.parametrize("seat", [0, 1])
async def test_the_policy_decides_alike_in_the_env_and_as_a_bot(record: Path, seat: int) -> None:
    report = await feed_record(record, seat, BotCommand.parse(POLICY_BOT), kill_grace=0.5)
    assert report.complete and not report.problem, report.lines()
    bot = [d.new for d in report.decisions]
    in_env = env_decisions(record, seat)
    assert len(bot) == len(in_env) > 20
    assert bot == in_env
    # the policy is not the recorded player: it differs somewhere, and still agrees with itself
    assert report.divergence is not None


@pytest.mark.asyncio
async def test_the_policy_bot_plays_a_match(tmp_path: Path) -> None:
    result = await play(POLICY_BOT, RANDOM, tmp_path, games=1, seed=3)
    assert result.reason == "normal" and not any(s.faults for s in result.seats)
    report = await feed_record(tmp_path / "match.jsonl", 0, BotCommand.parse(POLICY_BOT))
    assert report.complete and report.divergence is None, report.lines()
