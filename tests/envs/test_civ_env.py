"""The PettingZoo and Gymnasium environments pass their libraries' own checks, and a masked
choice is always a legal move."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, seed_test

import nlmcs.envs  # noqa: F401  (registers nlmcs/Civ-v0)
from nlmcs.envs import civ_v0

SMALL = {"map": "tiny", "max_turns": 4, "max_agents": 8, "max_actions": 12}


def test_pettingzoo_api_tests_pass():
    api_test(civ_v0.env(**SMALL), num_cycles=20)
    parallel_api_test(civ_v0.parallel_env(**SMALL), num_cycles=20)


def test_the_same_seed_gives_the_same_game():
    seed_test(lambda: civ_v0.env(**SMALL), num_cycles=20)


def test_gymnasium_checker_passes_and_make_takes_options():
    env = gymnasium.make("nlmcs/Civ-v0", map="tiny", max_turns=4, opponent="random",
                         max_agents=8, max_actions=12)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and info["agents"]
    assert env.unwrapped.action_masks().shape == (8 * 12,)


def _masked_random(obs, rng):
    mask = np.stack(obs["action_mask"])
    choice = np.zeros(len(mask), np.int64)
    for i, row in enumerate(mask):
        legal = np.flatnonzero(row)
        choice[i] = rng.choice(legal) if len(legal) else 0
    return choice


def test_a_masked_random_policy_plays_only_legal_moves_to_the_end():
    env = civ_v0.parallel_env(map="tiny", max_turns=6)
    obs, infos = env.reset(seed=7)
    rng = np.random.default_rng(0)
    steps = 0
    while env.agents:
        actions = {a: _masked_random(obs[a], rng) for a in env.agents}
        for agent in env.possible_agents:
            joint = env.observer.moves(actions[agent], infos[agent])
            assert len(joint) == len(infos[agent]["agents"])
            for unit, move in joint.items():
                assert move in env.state.legal_actions(unit)
        obs, rewards, term, trunc, infos = env.step(actions)
        steps += 1
    assert steps == 6 and all(trunc.values()) and not any(term.values())
    assert "winner" in next(iter(infos.values()))


def test_an_unmasked_choice_lets_the_agent_wait():
    env = civ_v0.parallel_env(map="tiny", max_turns=4, max_actions=12)
    _, infos = env.reset(seed=1)
    info = infos["player_0"]
    beyond = np.full(env.observer.k, 11, np.int64)
    joint = env.observer.moves(beyond, info)
    assert all(len(info["moves"][i]) > 11 for i, a in enumerate(info["agents"]) if a in joint)
    assert env.observer.moves(np.full(env.observer.k, -1), info) == {}


def test_rgb_frames_and_bad_render_modes():
    env = civ_v0.parallel_env(map="tiny", max_turns=2, render_mode="rgb_array")
    env.reset(seed=2)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    with pytest.raises(ValueError, match="render_mode"):
        civ_v0.parallel_env(render_mode="human")


def test_the_documented_example_runs():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "environments.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "civ_v0" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0].replace("max_turns=20", "max_turns=3"), "README", "exec"), {})
