import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from nlmcs.games.base import Action
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import (
    A,
    B,
    ManualIndex,
    S,
    Signature,
    T,
    game_ids,
    mix,
    mix_int,
    sid,
    signature,
    slots,
)
from nlmcs.model.network import ValueNetwork


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def test_signature_reads_the_game_words():
    state = ToyGame(units=1).new_initial_state(0)
    state.terrain[0][0] = 0  # grassland
    sig = signature(state, "unit:0:0", Action("move", "north"))
    assert sig.agent == ("settlers",)
    assert sig.action == ("move", "north")
    assert sig.atype == "move"
    assert sig.state == ("grassland",)


def test_game_features_are_action_x_agent_x_state():
    state = ToyGame(units=1).new_initial_state(0)
    state.terrain[0][0] = 1  # hills
    sig = signature(state, "unit:0:0", Action("mine"))
    ids = game_ids(sig, 18)
    expected = slots(mix(T.GAME, sid("mine"), sid("settlers"), sid("hills")), 18)
    assert int(expected) in set(ids.tolist())
    other = signature(state, "unit:0:0", Action("irrigate"))
    assert set(game_ids(other, 18).tolist()).isdisjoint(ids.tolist())


def test_mix_of_python_integers_equals_the_numpy_mix():
    rng = np.random.default_rng(0)
    for n in range(1, 6):
        for _ in range(200):
            parts = [int(x) for x in rng.integers(0, 2**63, size=n, dtype=np.uint64)]
            parts[0] |= 1 << 63  # the top bit too
            assert mix_int(*parts) == int(mix(*parts))
    sig = Signature(("settlers",), ("move", "north"), "move", ("grassland", "river"))
    expected = [slots(mix(T.GAME_BIAS, sid("move north"), sid("settlers")), 18)]
    expected += [slots(mix(T.GAME, sid("move north"), sid("settlers"), sid(s)), 18)
                 for s in sig.state]
    assert game_ids(sig, 18).tolist() == [int(x) for x in expected]


def test_manual_index_keeps_content_words_with_parents(index):
    # Sentence 0: "Settlers irrigate grassland quickly." -> the verb is the root.
    words = [index.stems[j] for j in range(index.start[0], index.end[0])]
    assert words == ["settler", "irrig", "grassland", "quick"]
    j_verb = index.start[0] + 1
    assert index.parent[j_verb] == -1
    assert all(index.parent[j] == j_verb for j in (index.start[0], index.start[0] + 2))
    # Candidate sentences of settlers: the five that mention them.
    assert index.candidates(("settlers",), None).tolist() == [0, 1, 2, 3, 4]
    assert index.candidates(("civilization",), None).tolist() == [5]
    # Rule label: verbs are actions, the subject of a verb a state word.
    static = index.psi_static[j_verb]
    assert static.shape == (3, 7)
    rule_ids = static[:, 6]
    assert int(rule_ids[0]) == int(mix(mix(T.PSI_RULE, A), 0))


def test_text_features_fire_for_the_right_words(index):
    net = ValueNetwork(ModelConfig(kind="text", min_count=1), index)
    state = ToyGame(units=1).new_initial_state(0)
    state.terrain[0][0] = 0
    sig = signature(state, "unit:0:0", Action("irrigate"))
    f = net.features(sig)
    # Overlap of agent+action words per candidate sentence: "settlers" everywhere, "irrigate"
    # only in sentence 0.
    assert f.parts[1].overlap.tolist() == [2.0, 1.0, 1.0, 1.0, 1.0]
    words = [index.stems[j] for j in f.unit.words]
    flags = dict(zip(words[:4], f.flags[:4].tolist(), strict=True))
    assert flags["grassland"] == [True, False, False]  # a state word
    assert flags["settler"] == [False, True, False]  # the unit word
    assert flags["irrig"] == [False, False, True]  # the action word
    assert f.match[1].tolist() == [1.0, 0.0]  # "irrigate" matches the action
    assert f.match[2].tolist() == [0.0, 1.0]  # "grassland" matches the state
    assert (A, S, B) == (0, 1, 2)
