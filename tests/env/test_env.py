"""The PettingZoo environment: PettingZoo's own API and seed tests, the encoding against the
protocol's view of the same state, rewards, and the single-agent wrapper."""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from protocol.encoding import KNOCK, NUM_ACTIONS, OBS_SIZE, encode_view, wire_action
from protocol.policy import random_policy
from referee.env import ACTIONS, AGENTS, GinRummyEnv, GinRummySingleEnv, env
from referee.env.spaces import wire_view
from referee.match.wire import to_wire_action
from referee.rules import IllegalAction, legal_actions, observe

CONFIGS = [
    {},
    {"episode": "game", "reward": "win"},
    {"episode": "game", "view": True},
    {"rules": "oklahoma", "reward": "win"},
    {"rules": "straight", "episode": "game", "max_hands": 3},
]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_pettingzoo_api_and_seed_tests(kwargs: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        # PettingZoo warns of any Dict observation that is not one of its own classic games'
        warnings.filterwarnings("ignore", "Observation is not a NumPy array")
        warnings.filterwarnings("ignore", "Observation space for each agent probably")
        api_test(GinRummyEnv(**kwargs), num_cycles=600)
        seed_test(lambda: GinRummyEnv(**kwargs), num_cycles=300)


def test_wrapped_env_passes_the_api_test() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Observation")
        api_test(env(), num_cycles=300)


def test_the_action_numbers_are_the_wire_actions() -> None:
    assert len(ACTIONS) == NUM_ACTIONS
    for number, action in enumerate(ACTIONS):
        assert wire_action(number) == to_wire_action(action)


def play(env_: GinRummyEnv, seed: int, check: Any = None) -> dict[str, float]:
    """Random legal play of one episode, knocking whenever it may (so that hands are won);
    ``check(env, agent, obs)`` at every observation."""
    rng = random.Random(seed)
    env_.reset(seed=seed)
    returns = dict.fromkeys(AGENTS, 0.0)
    for agent in env_.agent_iter():
        obs, reward, terminated, truncated, _ = env_.last()
        returns[agent] += reward
        if check is not None:
            check(env_, agent, obs)
            other = AGENTS[1 - AGENTS.index(agent)]
            if other in env_.agents:
                check(env_, other, env_.observe(other))
        if terminated or truncated:
            env_.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        knocks = [n for n in legal if n >= KNOCK]
        env_.step(rng.choice(knocks or legal))
    return returns


def same_as_the_protocol_view(env_: GinRummyEnv, agent: str, obs: dict[str, Any]) -> None:
    """The observation is the encoding of the view a bot gets for the same state."""
    seat = AGENTS.index(agent)
    state = env_.state
    view = wire_view(observe(state, seat))
    mine = state.to_act == seat and not state.is_over
    legal = [to_wire_action(a) for a in legal_actions(state)] if mine else []
    expected, mask = encode_view(view, legal, target=env_.rules.target)
    assert obs["observation"].shape == (OBS_SIZE,)
    assert np.array_equal(obs["observation"], expected)
    assert np.array_equal(obs["action_mask"], mask)
    if "view" in obs:
        assert obs["view"] == view


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_observation_is_the_encoded_protocol_view(kwargs: dict[str, Any]) -> None:
    for seed in range(4):
        play(GinRummyEnv(**kwargs), seed, same_as_the_protocol_view)


def test_hand_rewards_are_the_hand_points() -> None:
    env_ = GinRummyEnv()
    seen = set()
    for seed in range(40):
        returns = play(env_, seed)
        result = env_.state.result
        assert result is not None
        assert returns["player_0"] == -returns["player_1"]
        if result.winner is None:
            assert returns["player_0"] == 0
        else:
            assert returns[AGENTS[result.winner]] == result.points
        seen.add(result.winner is None)
    assert seen == {True, False}


def test_game_return_is_the_final_margin() -> None:
    from referee.rules import final_score

    env_ = GinRummyEnv(episode="game")
    for seed in range(3):
        returns = play(env_, seed)
        assert env_.game is not None
        final = final_score(env_.game)
        assert returns[AGENTS[final.winner]] == final.margin
        assert returns[AGENTS[1 - final.winner]] == -final.margin
        assert env_.hands_played == env_.game.hands_played > 1


def test_max_hands_truncates_a_game() -> None:
    env_ = GinRummyEnv(rules="straight", episode="game", max_hands=2)
    play(env_, 1)
    assert env_.hands_played == 2 and env_.game is not None and not env_.game.is_over


def test_win_rewards() -> None:
    env_ = GinRummyEnv(episode="game", reward="win")
    returns = play(env_, 5)
    assert sorted(returns.values()) == [-1.0, 1.0]


def test_same_seed_same_episode() -> None:
    first = GinRummyEnv()
    first.reset(seed=9)
    second = GinRummyEnv()
    second.reset(seed=9)
    assert first.state == second.state
    second.reset(seed=10)
    assert first.state.deck != second.state.deck


def test_an_illegal_action_is_refused() -> None:
    env_ = GinRummyEnv()
    env_.reset(seed=1)
    obs = env_.observe(env_.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalAction):
        env_.step(illegal)
    with pytest.raises(IllegalAction):
        env_.step(NUM_ACTIONS)
    with pytest.raises(ValueError, match="None"):
        env_.step(None)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="episode"):
        GinRummyEnv(episode="match")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="preset"):
        GinRummyEnv(rules="nope")


def test_single_agent_wrapper() -> None:
    single = GinRummySingleEnv(opponent=random_policy(seed=2), seat=None, episode="hand")
    learner = random_policy(seed=3)
    seats = set()
    for seed in range(20):
        obs, _ = single.reset(seed=seed)
        seats.add(single.seat)
        total, done = 0.0, False
        while not done:
            assert np.array_equal(single.action_masks(), obs["action_mask"])
            obs, reward, done, truncated, _ = single.step(learner(obs))
            total += float(reward)
            assert not truncated
        result = single.aec.state.result
        assert result is not None
        expected = 0 if result.winner is None else result.points
        assert total == (expected if result.winner in (None, single.seat) else -expected)
    assert seats == {0, 1}


def test_render() -> None:
    env_ = GinRummyEnv(render_mode="ansi")
    env_.reset(seed=1)
    text = env_.render()
    assert text is not None and "player_0" in text and "to act" in text
