"""The single-agent environment whose opponent is a real bot process (the Python greedy bot)
playing real matches through the protocol: episodes, rewards, seeding, and no process left
behind after ``close()``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.match.clock import TimeControl
from referee.net.process import BotCommand, BotProcess
from referee.toolkit import BotOpponentEnv
from tests.e2e.helpers import BOTS

pytestmark = pytest.mark.timeout(120)

GREEDY = (sys.executable, "-m", "sample_bots.greedy_bot")
# a loaded CI machine may deschedule the bot for a good part of a second (tests/e2e/helpers.py)
CLOCKS = TimeControl(move=1.0, bank=2.0, grace=0.05, startup=15.0, heartbeat=0.5)


def gone(process: BotProcess | None) -> bool:
    """Whether the bot's process group has no live process left (a zombie the sandbox's
    outer process leaves for its own parent to reap is not one: tests/net/conftest.py)."""
    assert process is not None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # vanished while we looked
            continue
        state, _, group = stat.rsplit(")", 1)[1].split()[:3]
        if int(group) == process.pgid and state not in ("Z", "X"):
            return False
    return True


@pytest.fixture
def make() -> Iterator[Any]:
    """Build environments against the greedy bot; each is closed at the end, and its bot's
    process group must be gone."""
    made: list[BotOpponentEnv] = []

    def build(**kwargs: Any) -> BotOpponentEnv:
        env = BotOpponentEnv(GREEDY, time=CLOCKS, **kwargs)
        made.append(env)
        return env

    yield build
    for env in made:
        env.close()
        if env.process is not None:
            assert gone(env.process)


def play(
    env: BotOpponentEnv, obs: dict[str, Any], seed: int
) -> tuple[float, list[Any], dict[str, Any]]:
    """Random legal play to the end of the episode: its return, the observations, the last
    info."""
    rng = np.random.default_rng(seed)
    total, seen = 0.0, [obs["observation"]]
    while True:
        assert obs["action_mask"].any()
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        total += float(reward)
        seen.append(obs["observation"])
        if terminated or truncated:
            assert terminated and not truncated
            assert not obs["action_mask"].any()
            return total, seen, info


def test_hands_against_the_greedy_bot_score_as_the_protocol_says(make: Any) -> None:
    env = make(seat=1)
    obs, _ = env.reset(seed=5)
    assert env.observation_space.contains(obs)
    for _ in range(3):
        total, _, info = play(env, obs, 1)
        end = info["hand_end"]
        sign = 0 if end.winner is None else (1 if end.winner == 1 else -1)
        assert total == sign * end.points
        obs, _ = env.reset()
    env.close()
    assert gone(env.process)


def test_a_game_episode_returns_the_final_margin(make: Any) -> None:
    env = make(episode="game", games=1)
    obs, _ = env.reset(seed=2)
    total, _, info = play(env, obs, 3)
    scores = info["game_end"].scores
    assert total == scores[0] - scores[1] != 0


def test_the_same_seed_gives_the_same_episode(make: Any) -> None:
    runs = []
    for _ in range(2):
        env = make(view=True)
        obs, _ = env.reset(seed=11)
        assert obs["view"].seat == 0
        runs.append(play(env, obs, 4))
        env.close()
    (total_a, seen_a, _), (total_b, seen_b, _) = runs
    assert total_a == total_b
    assert len(seen_a) == len(seen_b)
    assert all(np.array_equal(a, b) for a, b in zip(seen_a, seen_b, strict=True))


def test_reset_mid_hand_and_after_the_match_goes_on(make: Any) -> None:
    env = make(games=1, episode="hand")
    obs, _ = env.reset(seed=9)
    first = env.process
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    obs, _ = env.reset()  # the rest of the hand is played out
    assert obs["action_mask"].any() and env.process is first
    with pytest.raises(ValueError, match="not legal"):
        env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    while env.result is None or env.process is first:  # to the match's end, then a new one
        play(env, obs, 6)
        obs, _ = env.reset()
    assert env.result is not None and env.result.reason == "normal"
    assert gone(first)
    play(env, obs, 7)


def test_a_bot_that_cannot_start_is_reported(make: Any) -> None:
    env = make()
    env.command = BotCommand((sys.executable, "-c", "raise SystemExit(3)"))
    with pytest.raises(RuntimeError, match="ended at once: startup: exited with code 3"):
        env.reset(seed=1)
    assert env.process is not None and env.process.returncode == 3


@pytest.mark.parametrize("mode", ["illegal", "crash"])
def test_a_faulting_bot_forfeits_and_the_next_reset_plays_on(make: Any, mode: str) -> None:
    env = make(reward="win")
    env.command = BotCommand((sys.executable, str(BOTS / "misbehave.py"), mode, "3"))
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    while True:  # the bot faults at its third decision: the hand ends there
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        if terminated or truncated:
            break
    end = info["hand_end"]
    assert terminated and end.termination == "forfeit" and end.winner == 0 and reward == 1.0
    first = env.process
    obs, _ = env.reset()  # the next game (illegal) or a new match (a crash forfeits the match)
    assert obs["action_mask"].any()
    assert (env.process is first) == (mode == "illegal")
