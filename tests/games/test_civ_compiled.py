"""The compiled engine against the Python reference, part by part: on games of several seeds on
every map preset, built-in AIs and random players, every turn. A divergence names the preset,
seed, turn, player and agent."""

from __future__ import annotations

import numpy as np
import pytest

from nlmcs.games.civ import CivConfig, CivGame
from nlmcs.games.civ import legal as reference
from nlmcs.games.civ.compiled import legal as compiled
from nlmcs.games.civ.compiled.arrays import state_arrays

PLAYERS = {"builtin": ("builtin:normal", "builtin:normal"), "mixed": ("builtin:hard", "random")}


def _positions(preset: str, seed: int, players: tuple[str, str], turns: int):
    """Every turn's starting state of one game (the state is shared: look before moving on)."""
    game = CivGame(CivConfig.preset(preset, max_turns=turns))
    policies = [game.policy(p) for p in players]
    rng = np.random.default_rng(seed)
    s = game.new_initial_state(seed)
    while not s.is_terminal():
        yield s
        joint = {p: policies[p].joint_action(s, p, rng) for p in range(s.num_players)}
        s.apply_joint_actions(joint, rng)


def _first_difference(want, got) -> str | None:
    if [a for a, _ in want] != [a for a, _ in got]:
        return f"agents {[a for a, _ in want]} != {[a for a, _ in got]}"
    for (agent, w), (_, g) in zip(want, got, strict=True):
        if list(w) != list(g):
            return f"{agent}: {list(w)} != {g}"
    return None


@pytest.mark.parametrize("preset,seeds,turns", [("tiny", range(6), 60), ("small", range(4), 80),
                                                ("default", range(2), 100)])
@pytest.mark.parametrize("players", list(PLAYERS))
def test_legal_actions_are_the_references_in_the_same_order(preset, seeds, turns, players):
    checked = contested = 0
    for seed in seeds:
        for s in _positions(preset, seed, PLAYERS[players], turns):
            for p in range(s.num_players):
                want = reference.agents_with_actions(s, p)
                got = compiled.agents_with_actions(s, p)
                problem = _first_difference(want, got)
                assert problem is None, f"{preset} seed {seed} turn {s.turn} player {p}: {problem}"
                checked += sum(len(acts) for _, acts in want)
                contested += sum(a.kind == "attack" for _, acts in want for a in acts)
    assert checked > 1_000
    if preset != "default":  # on the big map 100 turns may pass without a fight
        assert contested > 0  # the contested moves, attacks and zones of control were compared


def test_state_arrays_copy_and_order_the_reference():
    game = CivGame(CivConfig.preset("small"))
    s = next(x for i, x in enumerate(_positions("small", 3, PLAYERS["builtin"], 40)) if i == 30)
    st = state_arrays(s)
    assert st.unit_id.tolist() == list(s.units) and st.city_id.tolist() == list(s.cities)
    assert st.occupant.tobytes() == bytes(s.occupant)
    assert st.improvements.tobytes() == bytes(s.improvements)
    assert st.techs.shape == (2, len(game.tables.tech_names))
    st.occupant[:] = 0  # a copy: the reference state is untouched
    assert any(s.occupant)
