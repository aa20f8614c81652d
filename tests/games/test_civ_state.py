"""Civ state properties: impossible states refused, the shared words, what the vector counts, and
legal really legal. What every game must do (determinism, clones, JSON and pickling round trips,
labels, vectors) is checked for every registered game in test_game_conformance.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlmcs.games import make_game
from nlmcs.games.base import Action
from nlmcs.games.civ import labels as label_words
from nlmcs.games.civ.serialize import StateFileError
from nlmcs.games.runner import play_game

ALLOWED_WORDS = {
    "settlers", "workers", "warriors", "phalanx", "archers", "horsemen", "legion", "catapult",
    "chariot", "city", "civilization", "grassland", "plains", "desert", "tundra", "forest",
    "hills", "mountains", "swamp", "jungle", "ocean", "river", "irrigation", "mine", "road",
    "enemy", "friendly", "coast", "capital", "fortified", "veteran", "wounded", "unhappy",
    "hungry", "border", "growing", "starving", "walls", "barracks", "granary", "small", "large",
}  # fmt: skip


def advance(game, seed: int, turns: int, players=("builtin", "random")):
    s = game.new_initial_state(seed)
    pols = {p: game.policy(spec) for p, spec in enumerate(players)}
    play_game(game, pols, seed=seed, max_turns=turns, state=s)
    return s


def _corrupt(data, how):
    d = copy.deepcopy(data)
    unit = d["units"][0]
    if how == "unit at sea":
        ocean = next(i for i, ch in enumerate("".join(d["map"]["terrain"])) if ch == " ")
        unit["tile"] = ocean
    elif how == "two owners":
        other = next(u for u in d["units"] if u["owner"] != unit["owner"])
        other["tile"] = unit["tile"]
    elif how == "bad type":
        unit["type"] = "tank"
    elif how == "too many hp":
        unit["hp"] = 999
    elif how == "missing key":
        del unit["hp"]
    elif how == "short row":
        d["map"]["terrain"][0] = d["map"]["terrain"][0][:-1]
    elif how == "bad player":
        unit["owner"] = 7
    elif how == "a tile worked twice":
        city = d["cities"][0]
        city["worked"] = [city["tile"]] + [city["tile"] + 1] * 30
    return d


@pytest.mark.parametrize("how", ["unit at sea", "two owners", "bad type", "too many hp",
                                 "missing key", "short row", "bad player",
                                 "a tile worked twice"])  # fmt: skip
def test_impossible_states_are_rejected(small_game, how):
    data = advance(small_game, 2, 3).to_json()
    with pytest.raises(StateFileError):
        small_game.state_from_json(_corrupt(data, how))


def test_labels_use_the_shared_words(small_game):
    s = advance(small_game, 4, 40)
    seen = set()
    for p in range(2):
        for agent in s.agents(p):
            seen.update(s.agent_labels(agent))
            for word in s.state_labels(agent):
                assert word in ALLOWED_WORDS or word in s.tables.resource_names, word
            for act in s.legal_actions(agent):
                words = s.action_labels(agent, act)
                assert words and all(w == w.lower() for w in words)
    assert {"city", "civilization"} <= seen
    settler = next(u for u in s.units.values() if u.kind == 0) if any(
        u.kind == 0 for u in s.units.values()) else None
    if settler is not None:
        assert s.agent_labels(settler.aid) == ("settlers",)
    assert label_words.action_labels(s, "unit:1", Action("build_city")) == ("build city",)
    assert s.action_labels("city:1", Action("build", "city walls")) == ("build city walls",)
    assert s.action_labels("civ:0", Action("research", "bronze working")) == (
        "research bronze working",
    )


@pytest.mark.parametrize("turns", [0, 12, 40])
def test_labels_of_all_candidates_equal_the_labels_of_each(small_game, turns):
    # The search reads every candidate's words of an agent in one call (its unit resolved
    # once); it must give what the one-action call gives, moves and attacks included.
    kinds = set()
    for seed in (1, 3):  # between them, settlers at every one of the turns
        s = advance(small_game, seed, turns)
        for p in range(s.num_players):
            for agent in s.agents(p):
                acts = s.legal_actions(agent) + [Action("move", 9), Action("attack", None)]
                assert s.actions_labels(agent, acts) == [s.action_labels(agent, a) for a in acts]
                kinds.update(a.kind for a in acts)
    assert {"move", "research", "build_city"} <= kinds


def test_state_vector_names_what_it_counts(small_game):
    # shape, type and finiteness are checked for every game in test_game_conformance.py
    s = advance(small_game, 8, 25)
    names = small_game.state_feature_names()
    assert len(names) < 100
    own = dict(zip(names, s.state_vector(0), strict=True))
    assert own["own_cities"] == sum(1 for c in s.cities.values() if c.owner == 0)
    assert own["enemy_cities"] == sum(1 for c in s.cities.values() if c.owner == 1)


def test_make_game_registry():
    g = make_game("civ", preset="small", max_turns=7)
    assert g.config.width == 16 and g.config.max_turns == 7
    from nlmcs.errors import UserInputError

    with pytest.raises(UserInputError):
        make_game("chess")
    with pytest.raises(UserInputError):
        make_game("civ", width=3)
    with pytest.raises(UserInputError):
        make_game("civ", colour="red")


def _invariants(s):
    for tile, stack in s.tile_units.items():
        assert stack and len({s.units[i].owner for i in stack}) == 1
        assert not s.map.ocean[tile]
        assert all(s.units[i].tile == tile for i in stack)
    assert sum(len(v) for v in s.tile_units.values()) == len(s.units)
    for tile, cid in s.city_at.items():
        assert s.cities[cid].tile == tile
        assert s.owner_at(tile) in (-1, s.cities[cid].owner)
    # the per-tile owner bytes mirror tile_units exactly
    expected = bytearray(s.map.n)
    for tile, stack in s.tile_units.items():
        expected[tile] = s.units[stack[0]].owner + 1
    assert s.occupant == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), picks=st.lists(st.integers(0, 10_000), min_size=40,
                                                     max_size=40))  # fmt: skip
def test_legal_actions_are_really_legal(small_game, seed, picks):
    """Every action offered applies; playing them keeps the state consistent."""
    s = advance(small_game, seed % 50, seed % 25, players=("random", "random"))
    rng = np.random.default_rng(seed)
    for step, pick in enumerate(picks[:12]):
        if s.is_terminal():
            break
        for p in range(2):
            for agent in s.agents(p):
                acts = s.legal_actions(agent)
                assert acts, agent
                act = acts[pick % len(acts)]
                trial = s.clone()
                assert trial.apply_action(agent, act, rng), (agent, act)
                if step % 4 == 0:
                    # every offered action applies on a fresh copy
                    for other in acts:
                        assert s.clone().apply_action(agent, other, np.random.default_rng(0))
                s.apply_action(agent, act, rng)
                _invariants(s)
        s.end_turn(rng)
        _invariants(s)


def test_record_copies_copy_every_field():
    from nlmcs.games.civ.objects import City, Player, Unit

    for obj in (City(3, 1, 7, size=4, build=2, capital=True, founded=9),
                Unit(5, 1, 2, 9, 10, vet=2, activity=3, progress=2, home=3), Player()):
        twin = obj.copy()
        assert twin is not obj
        assert all(getattr(twin, n) == getattr(obj, n) for n in type(obj).__slots__)


def test_unknown_agents_are_harmless(small_game):
    s = small_game.new_initial_state(0)
    for agent in ("unit:999", "city:abc", "civ:7", "tank:1", "unit:", "civ:-1"):
        assert s.legal_actions(agent) == []
        assert not s.apply_action(agent, Action("wait"), np.random.default_rng(0))
        assert s.agent_labels(agent) == () and s.state_labels(agent) == ()
