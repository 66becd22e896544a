"""What training libraries ask of the environment: seeded resets that replay exactly (the
opponent included), Gymnasium's ``check_env`` on the single-agent environments, PettingZoo's
parallel API tests, and the vector environment's batches against the single-agent game."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test, parallel_seed_test

from protocol.policy import random_policy
from referee.env import SINGLE_ID, GinRummySingleEnv
from referee.env.parallel import parallel_env
from referee.env.vector import GinRummyVectorEnv
from referee.rules import IllegalAction
from referee.toolkit import BotOpponentEnv
from tests.env.test_bot_opponent import CLOCKS, GREEDY


def first_legal(obs: Mapping[str, Any]) -> int:
    """A deterministic policy: the lowest legal action number."""
    return int(np.flatnonzero(obs["action_mask"])[0])


def trajectory(single: GinRummySingleEnv, seed: int, steps: int = 60) -> list[Any]:
    """Observations and rewards of ``steps`` random-but-seeded learner steps from a reset."""
    obs, _ = single.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen: list[Any] = [obs["observation"].tobytes()]
    for _ in range(steps):
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, _ = single.step(int(rng.choice(legal)))
        seen.append((obs["observation"].tobytes(), reward, terminated))
        if terminated or truncated:
            obs, _ = single.reset()
    return seen


def test_a_seeded_reset_replays_the_random_opponent_too() -> None:
    """The issue's case: one instance reset twice with seed 123 (it diverged at step 3)."""
    single = GinRummySingleEnv(opponent=random_policy(), episode="game", seat=None)
    first = trajectory(single, 123)
    assert trajectory(single, 123) == first
    assert trajectory(single, 124) != first  # the seed matters (the check above is not idle)


@pytest.mark.parametrize("kwargs", [{}, {"view": True, "seat": None, "episode": "game"}], ids=str)
def test_check_env_passes_with_illegal_actions_ending_the_episode(kwargs: dict[str, Any]) -> None:
    made = gymnasium.make(SINGLE_ID, illegal_action="end", **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(made.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_an_illegal_action_raises_by_default_and_ends_the_episode_when_asked() -> None:
    strict = GinRummySingleEnv()
    obs, _ = strict.reset(seed=4)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalAction):
        strict.step(illegal)
    lenient = GinRummySingleEnv(illegal_action="end", illegal_reward=-5)
    obs, _ = lenient.reset(seed=4)
    after, reward, terminated, truncated, info = lenient.step(illegal)
    assert (reward, terminated, truncated, info) == (-5.0, True, False, {"illegal_action": illegal})
    assert not after["action_mask"].any()
    assert (after["observation"] == obs["observation"]).all()
    assert after["observation"] is not obs["observation"]
    with pytest.raises(ValueError, match="illegal_action must be"):
        GinRummySingleEnv(illegal_action="ignore")


@pytest.fixture
def bot_env() -> Iterator[BotOpponentEnv]:
    made = BotOpponentEnv(GREEDY, time=CLOCKS, illegal_action="end")
    yield made
    made.close()


def test_check_env_passes_against_a_bot_process(bot_env: BotOpponentEnv) -> None:
    """The other single-agent environment: a real bot process plays the other seat (every
    seeded reset starts a match with that seed, so the greedy bot replays)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(bot_env, skip_render_check=True)
    assert [str(w.message) for w in caught] == []
    assert bot_env.process is not None  # the bot did play


def test_the_parallel_api_and_seed_tests_pass() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(parallel_env(), num_cycles=2000)
        parallel_api_test(parallel_env(episode="game", max_hands=3), num_cycles=2000)
        parallel_seed_test(lambda: parallel_env(illegal_action="end"))
    assert [str(w.message) for w in caught] == []


def test_the_parallel_env_plays_one_agent_per_step_and_ignores_the_other() -> None:
    par = parallel_env()
    obs, _ = par.reset(seed=9)
    steps = 0
    while par.agents:
        acting = [a for a in par.agents if obs[a]["action_mask"].any()]
        assert len(acting) == 1
        actions = {a: first_legal(obs[a]) if a in acting else 107 for a in par.agents}
        obs, _, terminations, _, _ = par.step(actions)
        steps += 1
    assert steps > 10 and all(terminations.values())


def test_the_vector_env_rows_are_the_single_env_episodes() -> None:
    """Game ``i`` of a vector env seeded 50 is the single-agent game seeded 50 + i, step by
    step, against the same (deterministic) opponent; an episode's end comes back in
    ``final_obs`` and the row starts the next episode."""
    n = 3
    vec = GinRummyVectorEnv(n, opponent=first_legal)
    singles = [GinRummySingleEnv(opponent=first_legal) for _ in range(n)]
    obs, _ = vec.reset(seed=50)
    mine = [single.reset(seed=50 + i)[0] for i, single in enumerate(singles)]
    ended = 0
    for _ in range(200):
        for i in range(n):
            assert (obs["observation"][i] == mine[i]["observation"]).all()
            assert (obs["action_mask"][i] == mine[i]["action_mask"]).all()
        actions = np.array([first_legal(m) for m in mine])
        obs, rewards, terminations, truncations, infos = vec.step(actions)
        for i, single in enumerate(singles):
            after, reward, terminated, _, _ = single.step(int(actions[i]))
            assert (rewards[i], terminations[i]) == (reward, terminated)
            if terminated:
                ended += 1
                assert infos["_final_obs"][i]
                final = infos["final_obs"][i]
                assert (final["observation"] == after["observation"]).all()
                mine[i] = single.reset()[0]
            else:
                mine[i] = after
        assert not truncations.any()
    assert ended >= 3  # the autoreset was exercised


def test_the_vector_env_default_opponent_is_seeded_and_counts_skipped_episodes() -> None:
    def run(seed: int) -> list[Any]:
        vec = GinRummyVectorEnv(8, seat=None)
        obs, _ = vec.reset(seed=seed)
        rng = np.random.default_rng(0)
        seen = []
        for _ in range(300):
            mask = obs["action_mask"]
            assert mask.any(axis=1).all()  # every row's learner is to act
            obs, rewards, terminations, _, _ = vec.step(
                np.argmax(mask * rng.random(mask.shape), axis=1)
            )
            seen.append((obs["observation"].tobytes(), rewards.tobytes(), terminations.tobytes()))
        return seen

    assert run(3) == run(3)
    assert run(3) != run(4)


def greedy_knocker(obs: Mapping[str, Any]) -> int:
    """Takes the first upcard when it may, knocks whenever it may (action numbers 55-107)."""
    legal = np.flatnonzero(obs["action_mask"])
    knocks = legal[legal >= 55]
    if len(knocks):
        return int(knocks[-1])
    return 1 if obs["action_mask"][1] else int(legal[0])


def test_an_episode_the_opponent_ends_before_the_learners_turn_is_dealt_again() -> None:
    """The opponent takes the first upcard and knocks at once: no step is left for the
    learner, so reset deals again and names what it skipped (a vector env the same)."""
    single = GinRummySingleEnv(opponent=greedy_knocker, seat=None)
    for seed in range(3000):
        obs, info = single.reset(seed=seed)
        assert obs["action_mask"].any()
        if "skipped" in info:
            break
    else:
        pytest.fail("no opponent knocked before the learner's first turn in 3,000 deals")
    assert all(reward < 0 for reward in info["skipped"]), info
    vec = GinRummyVectorEnv(1, opponent=greedy_knocker, seat=single.seat)
    obs, infos = vec.reset(seed=[seed])
    assert obs["action_mask"].any() and infos["skipped"][0] == info["skipped"]


def test_the_wrapped_env_checks_as_pettingzoos_own_wrappers_do() -> None:
    """``env()``'s wrappers (referee/env/wrapped.py) raise what PettingZoo's raise: attributes
    before reset, an action out of bounds, None for an agent that is to act."""
    from pettingzoo.utils import wrappers

    from referee.env import GinRummyEnv, env

    def theirs() -> Any:
        return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(GinRummyEnv()))

    def outcome(made: Any, probe: Any) -> str:
        try:
            return repr(probe(made))
        except (AttributeError, AssertionError, ValueError) as err:
            return f"{type(err).__name__}: {err}"

    probes = [
        lambda e: e.agent_selection,
        lambda e: e.terminations,
        lambda e: (e.reset(seed=3), e.agent_selection)[1],
    ]
    after_reset = [
        lambda e: e.step(108),
        lambda e: e.step(np.int64(-1)),
        lambda e: e.step(1.0),
        lambda e: e.step(None),
        lambda e: (e.step(np.array(2)), e.agent_selection, e._cumulative_rewards)[1:],
        lambda e: e.last()[1:],
    ]
    ours, pz = env(), theirs()
    for probe in probes:
        assert outcome(ours, probe) == outcome(pz, probe)
    for probe in after_reset:
        assert outcome(ours, probe) == outcome(pz, probe)
    assert "cannot be accessed before reset" in outcome(env(), probes[0])
    assert outcome(env(), lambda e: (e.reset(), e.step(500))) == (
        "AssertionError: action is not in action space"
    )
