"""The PettingZoo and Gymnasium environments pass their libraries' own checks in every observation
form, plug into Stable-Baselines3 as made, and a masked choice is always a legal move."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, seed_test, state_test

import nlmcs.envs  # noqa: F401  (registers nlmcs/Civ-v0)
from nlmcs.envs import civ_v0

SMALL = {"map": "tiny", "max_turns": 4, "max_agents": 8, "max_actions": 12}
FORMS = ("flat", "spatial", "structured")


@pytest.mark.parametrize("form", FORMS)
def test_pettingzoo_api_tests_pass(form):
    api_test(civ_v0.env(**SMALL, observation=form), num_cycles=20)
    parallel_api_test(civ_v0.parallel_env(**SMALL, observation=form), num_cycles=20)


def test_the_global_state_is_an_array_in_its_space():
    env = civ_v0.parallel_env(**SMALL)
    env.reset(seed=5)
    state = env.state()
    assert isinstance(state, np.ndarray) and env.state_space.contains(state)
    assert state.shape == (2 * env.observer.f,)
    assert np.array_equal(state[:env.observer.f], env.game_state.state_vector(0))
    state_test(civ_v0.env(**SMALL), civ_v0.parallel_env(**SMALL))


def test_the_same_seed_gives_the_same_game():
    seed_test(lambda: civ_v0.env(**SMALL), num_cycles=20)


@pytest.mark.parametrize("form", FORMS)
def test_gymnasium_checker_passes_and_make_takes_options(form):
    env = gymnasium.make("nlmcs/Civ-v0", map="tiny", max_turns=4, opponent="random",
                         max_agents=8, max_actions=12, observation=form)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and info["agents"]
    assert env.action_masks().shape == (8 * 12,)
    assert np.array_equal(env.action_masks(), np.concatenate(info["action_mask"]) == 1)


def test_the_made_environment_is_flat_and_the_structured_form_is_a_keyword_away():
    flat = gymnasium.make("nlmcs/Civ-v0", **SMALL)
    assert set(flat.observation_space) == {"state", "agents", "actions"}
    assert all(isinstance(s, gymnasium.spaces.Box) and len(s.shape) == 1
               for s in flat.observation_space.values())
    nested = gymnasium.make("nlmcs/Civ-v0", **SMALL, observation="structured")
    obs, _ = nested.reset(seed=3)
    assert set(obs) == {"observation", "action_mask"} and len(obs["action_mask"]) == 8
    # the flat form is the structured one without the columns no row ever fills
    flat_obs, _ = flat.reset(seed=3)
    observer = flat.unwrapped.observer
    assert flat_obs["agents"].sum() == obs["observation"]["agents"].sum() > 0
    assert flat_obs["actions"].sum() == obs["observation"]["actions"].sum() > 0
    assert flat_obs["actions"].shape == (8 * 12 * len(observer.action_words),)


def test_bad_observation_forms_are_refused_in_one_line():
    with pytest.raises(ValueError, match="observation 'pixels': use one of flat, spatial"):
        gymnasium.make("nlmcs/Civ-v0", observation="pixels")
    with pytest.raises(ValueError, match="observation 'pixels'"):
        civ_v0.parallel_env(observation="pixels")


def test_the_map_shows_terrain_cities_and_units_from_the_players_side():
    env = civ_v0.parallel_env(map="tiny", max_turns=8, observation="spatial")
    obs, infos = env.reset(seed=4)
    rng = np.random.default_rng(0)
    while env.agents and not env.game_state.cities:
        obs, *_, infos = env.step({a: _masked_random(infos[a], rng) for a in env.agents})
    state, channels = env.game_state, env.observer.channels
    assert state.cities, "no city was founded in 8 random turns"
    width = state.map.width
    for p, agent in enumerate(env.possible_agents):
        board = obs[agent]["map"]
        assert board.shape == (state.map.height, width, len(channels))
        terrain = [i for i, c in enumerate(channels) if c.startswith("terrain:")]
        assert (board[..., terrain].sum(-1) == 1).all()
        for city in state.cities.values():
            side = "own_city" if city.owner == p else "enemy_city"
            assert board[city.tile // width, city.tile % width, channels.index(side)] == 1
        for unit in state.units.values():
            side = "own_units" if unit.owner == p else "enemy_units"
            assert board[unit.tile // width, unit.tile % width, channels.index(side)] == 1
        assert board[..., channels.index("own_units")].sum() == len(
            {u.tile for u in state.units.values() if u.owner == p})


def test_maskable_ppo_takes_the_made_environment_as_it_is():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv

    def make():
        return gymnasium.make("nlmcs/Civ-v0", **SMALL, opponent="random")

    env = make()
    env.reset(seed=0)
    assert get_action_masks(env).shape == (8 * 12,)
    vec = DummyVecEnv([make])
    vec.seed(0)
    vec.reset()
    masks = get_action_masks(vec)
    assert masks.shape == (1, 8 * 12) and masks.any()
    model = sb3_contrib.MaskablePPO("MultiInputPolicy", vec, n_steps=8, batch_size=8,
                                    n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=8)
    action, _ = model.predict(vec.reset(), action_masks=get_action_masks(vec))
    legal = get_action_masks(vec)[0].reshape(8, 12)
    assert all(legal[i, a] for i, a in enumerate(action[0]) if legal[i].any())


def _masked_random(obs_or_info, rng):
    mask = np.stack(obs_or_info["action_mask"])
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
                assert move in env.game_state.legal_actions(unit)
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
    with pytest.raises(ValueError, match="not in the action space"):  # outside it: refused
        env.observer.moves(np.full(env.observer.k, -1), info)


def test_rgb_frames_and_bad_render_modes():
    env = civ_v0.parallel_env(map="tiny", max_turns=2, render_mode="rgb_array")
    env.reset(seed=2)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    with pytest.raises(ValueError, match="render_mode"):
        civ_v0.parallel_env(render_mode="human")


def _documented(marker: str) -> str:
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "environments.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if marker in b]
    assert len(blocks) == 1
    return blocks[0]


def _shortened(code: str, *replacements: tuple[str, str]) -> str:
    for old, new in replacements:
        assert old in code, f"the documented example no longer says {old!r}"
        code = code.replace(old, new)
    return code


def test_the_documented_example_runs():
    code = _shortened(_documented("civ_v0"), ("max_turns=20", "max_turns=3"))
    exec(compile(code, "README", "exec"), {})


def test_the_documented_gymnasium_example_runs():
    pytest.importorskip("sb3_contrib")
    code = _shortened(_documented("MaskablePPO"), ("max_turns=30", "max_turns=3"),
                      ("n_steps=256, batch_size=64", "n_steps=8, batch_size=8"),
                      ("total_timesteps=4096", "total_timesteps=8"))
    exec(compile(code, "README", "exec"), {})


def test_the_contracts_after_the_end_and_before_the_start():
    """Issue 60: no step before reset (PettingZoo's raised AttributeError), and none after the
    end (both paid the end reward again on every extra step)."""
    par = civ_v0.parallel_env(map="tiny", max_turns=2)
    with pytest.raises(RuntimeError, match="before reset"):
        par.step({})
    par.reset(seed=1)
    while par.agents:
        par.step({a: np.zeros(par.action_space(a).shape, np.int64) for a in par.agents})
    with pytest.raises(RuntimeError, match="after the game ended"):
        par.step({})
    env = gymnasium.make("nlmcs/Civ-v0", map="tiny", max_turns=2).unwrapped
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(env.action_space.sample())
    env.reset(seed=1)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(np.zeros(env.action_space.shape, np.int64))
        done = terminated or truncated
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(np.zeros(env.action_space.shape, np.int64))
    env.reset(seed=2)  # and a new episode plays
    env.step(np.zeros(env.action_space.shape, np.int64))


@pytest.mark.parametrize("bad", [np.full(3, 0), "wait", None, -1])
def test_an_action_outside_the_space_is_refused_naming_agent_and_action(bad):
    par = civ_v0.parallel_env(map="tiny", max_turns=5)
    par.reset(seed=1)
    space = par.action_space("player_1")
    action = bad if not isinstance(bad, int) else np.full(space.shape, bad)
    with pytest.raises(ValueError, match=r"player_1: action .* is not in the action space"):
        par.step({"player_1": action})
    out_of_range = np.full(space.shape, space.nvec[0])
    with pytest.raises(ValueError, match="player_0"):
        par.step({"player_0": out_of_range})
    with pytest.raises(ValueError, match="'player_9': not a live agent"):
        par.step({"player_9": np.zeros(space.shape, np.int64)})
