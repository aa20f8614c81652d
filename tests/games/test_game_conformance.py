"""What every game behind `nlmcs.games.base` must do, checked on every registered game.

Planners clone states thousands of times a step, workers get games and states by pickling, the
corpus stores states as JSON and vectors as features, and the model reads the words: a game
that breaks one of these breaks the search quietly. Each check runs on every game in the table
of games (`nlmcs.games.registry`) plus the games only tests register (the toy game); a game
whose engine does not run here (`simulated` False, e.g. a FreeCiv server match) is skipped.
"""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from extra_games import extra_games_registered

from nlmcs.games import game_entries, make_game
from nlmcs.games.base import Action, Game, State
from nlmcs.games.runner import play_game

TURN_LIMIT = 60
"""Every game is made with this turn limit, so random play must end within it."""


def pytest_generate_tests(metafunc):
    if "entry" in metafunc.fixturenames:
        with extra_games_registered():
            entries = game_entries()
        metafunc.parametrize("entry", entries, ids=[e.name for e in entries])


@pytest.fixture(autouse=True)
def _extra_games():
    with extra_games_registered():
        yield


@pytest.fixture
def game(entry) -> Game:
    if not entry.simulated:
        pytest.skip(f"{entry.name} is not simulated here (it runs on a server)")
    default_map = entry.maps[0] if entry.maps else None
    return make_game(entry.name, **entry.options(map_preset=default_map, max_turns=TURN_LIMIT))


def _advance(game: Game, seed: int, turns: int, players=("builtin", "random")) -> State:
    state = game.new_initial_state(seed)
    policies = {p: game.policy(players[p % len(players)]) for p in range(game.num_players)}
    play_game(game, policies, seed=seed, max_turns=turns, state=state)
    return state


def _random_turns(state: State, game: Game, turns: int, seed: int) -> None:
    policies = {p: game.policy("random") for p in range(state.num_players)}
    play_game(game, policies, seed=seed, max_turns=turns, state=state)


def _dump(state: State) -> str:
    return json.dumps(state.to_json(), sort_keys=True)


def test_the_game_answers_to_its_registered_name(entry, game):
    assert game.name == entry.name  # the corpus looks a recorded game up by this name
    assert game.num_players >= 2


def test_same_seed_same_game(game):
    a, b = _advance(game, 5, 30), _advance(game, 5, 30)
    assert _dump(a) == _dump(b)
    assert _dump(_advance(game, 6, 30)) != _dump(a)


@pytest.mark.parametrize("turns", [0, 12])
def test_clones_are_independent(game, turns):
    state = _advance(game, 3, turns)
    before = _dump(state)
    clone = state.clone()
    assert _dump(clone) == before
    _random_turns(clone, game, 10, seed=1)
    assert _dump(state) == before  # playing the clone left the original alone
    assert _dump(clone) != before
    played = _dump(clone)
    _random_turns(state, game, 10, seed=2)
    assert _dump(clone) == played  # and the other way round


@pytest.mark.parametrize("turns", [0, 15, 45])
def test_json_round_trip_is_exact(game, turns):
    state = _advance(game, 11, turns)
    back = game.state_from_json(json.loads(json.dumps(state.to_json(), allow_nan=False)))
    assert _dump(back) == _dump(state)
    for p in range(state.num_players):
        assert np.array_equal(back.state_vector(p), state.state_vector(p))
    for s in (state, back):  # the rebuilt state plays on identically
        _random_turns(s, game, 5, seed=99)
    assert _dump(back) == _dump(state)


def _words(labels) -> bool:
    return isinstance(labels, tuple) and all(isinstance(w, str) and w.strip() for w in labels)


@pytest.mark.parametrize("turns", [0, 12, 30])
def test_labels_are_words(entry, game, turns):
    state = _advance(game, 4, turns)
    kinds = entry.action_kinds() if entry.action_kinds is not None else None
    for p in range(state.num_players):
        for agent in state.agents(p):
            assert _words(state.agent_labels(agent)) and state.agent_labels(agent), agent
            assert _words(state.state_labels(agent)), agent
            actions = state.legal_actions(agent)
            for action in actions:
                words = state.action_labels(agent, action)
                assert _words(words) and words, (agent, action)
                assert isinstance(state.action_type(action), str)
                if kinds is not None:  # what the corpus reader accepts in a recorded decision
                    assert action.kind in kinds, (agent, action)
            assert state.actions_labels(agent, actions) == [
                tuple(state.action_labels(agent, a)) for a in actions]


def test_state_vector_is_fixed_and_finite(game):
    names = game.state_feature_names()
    assert names and all(isinstance(n, str) and n for n in names)
    assert len(set(names)) == len(names)
    for turns in (0, 10, 25):
        state = _advance(game, 8, turns)
        for p in range(state.num_players):
            v = state.state_vector(p)
            assert isinstance(v, np.ndarray) and v.dtype == np.float32
            assert v.shape == (len(names),) and np.isfinite(v).all()


def test_game_and_state_survive_pickling(game):
    state = _advance(game, 2, 10)
    game2 = pickle.loads(pickle.dumps(game))
    state2 = pickle.loads(pickle.dumps(state))
    assert game2.state_feature_names() == game.state_feature_names()
    assert _dump(state2) == _dump(state)
    assert _dump(game2.new_initial_state(2)) == _dump(game.new_initial_state(2))
    for p in range(state.num_players):
        assert np.array_equal(state2.state_vector(p), state.state_vector(p))
    _random_turns(state, game, 5, seed=7)
    _random_turns(state2, game2, 5, seed=7)  # a worker's copy plays on like the original
    assert _dump(state2) == _dump(state)


def test_every_live_agent_has_a_legal_action(game):
    state = game.new_initial_state(9)
    rng = np.random.default_rng(9)
    policies = {p: game.policy("random") for p in range(state.num_players)}
    while not state.is_terminal():
        for p in range(state.num_players):
            listed = state.agent_actions(p)
            assert [a for a, _ in listed] == state.agents(p)
            for agent, actions in listed:
                assert actions and all(isinstance(a, Action) for a in actions), agent
                assert list(actions) == list(state.legal_actions(agent))
        state.apply_joint_actions(
            {p: policies[p].joint_action(state, p, rng) for p in policies}, rng)


@pytest.mark.parametrize("players", [("random", "random"), ("builtin", "random")])
def test_random_play_reaches_the_end(game, players):
    for seed in (0, 1):
        state = game.new_initial_state(seed)
        policies = {p: game.policy(players[p % 2]) for p in range(state.num_players)}
        # one turn more than the limit: a game that does not end by then never will
        result = play_game(game, policies, seed=seed, max_turns=TURN_LIMIT + 1, state=state)
        assert result.finished and state.is_terminal() and state.turn <= TURN_LIMIT
        assert result.winner is None or 0 <= result.winner < state.num_players
        assert all(math.isfinite(s) for s in result.scores)
        assert all(isinstance(v, float | int) for st in result.stats for v in st.values())
