"""The corpus writer: "nlmcs-corpus/1" JSON lines, several games per file."""

from __future__ import annotations

import json

import numpy as np

from nlmcs.games.record import CorpusRecorder
from nlmcs.games.runner import play_game


def test_recorder_writes_the_documented_format(small_game, tmp_path):
    path = tmp_path / "corpus" / "games.jsonl"
    for seed in (1, 2):
        pols = {0: small_game.policy("builtin"), 1: small_game.policy("random")}
        play_game(small_game, pols, seed=seed, max_turns=6, hooks=[CorpusRecorder(path)])
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    heads = [x for x in lines if x["type"] == "game"]
    assert len(heads) == 2 and heads[0]["game_id"] != heads[1]["game_id"]
    head = heads[0]
    assert head["format"] == "nlmcs-corpus/1" and head["game"] == "civ"
    assert head["ruleset"] == "classic" and len(head["ruleset_sha256"]) == 64
    assert head["players"][0] == {"player": 0, "kind": "builtin", "name": "builtin:normal"}
    assert head["players"][1]["kind"] == "random"
    assert head["config"]["width"] == 16
    names = head["state_features"]
    assert names == small_game.state_feature_names()
    first_game = [x for x in lines if x["game_id"] == head["game_id"]]
    turns = [x for x in first_game if x["type"] == "turn"]
    assert [t["turn"] for t in turns] == list(range(6))
    assert small_game.state_from_json(turns[3]["state"]).turn == 3
    decisions = [x for x in first_game if x["type"] == "decision"]
    assert decisions
    for d in decisions:
        assert set(d) == {"type", "game_id", "turn", "player", "agent", "agent_labels", "action",
                          "action_type", "applied", "state_vector", "after_vector"}
        assert len(d["state_vector"]) == len(d["after_vector"]) == len(names)
        assert d["action_type"] == d["action"]["kind"]
        assert d["agent_labels"]
    founded = [d for d in decisions if d["action_type"] == "build_city" and d["applied"]]
    assert founded and founded[0]["agent_labels"] == ["settlers"]
    # founding a city changes the vector: after minus before is the action's effect
    idx = names.index("own_cities")
    assert founded[0]["after_vector"][idx] == founded[0]["state_vector"][idx] + 1
    result = first_game[-1]
    assert result["type"] == "result" and result["turns"] == 6 and len(result["scores"]) == 2


def test_recorder_states_are_optional(small_game, tmp_path):
    path = tmp_path / "g.jsonl"
    rec = CorpusRecorder(path, record_states=False)
    pols = {0: small_game.policy("random"), 1: small_game.policy("random")}
    play_game(small_game, pols, seed=0, max_turns=2, hooks=[rec])
    turns = [json.loads(x) for x in path.read_text().splitlines() if '"type":"turn"' in x]
    assert turns and "state" not in turns[0]
    assert rec.games_written == 1
    assert np.isfinite(json.loads(path.read_text().splitlines()[-1])["scores"]).all()


def test_vectors_are_written_as_rounded_floats():
    from nlmcs.games.record import _vec

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(0, 50, 500), rng.integers(-5, 500, 200), [0.0, -0.0, 1e9,
                             0.1, 2 / 3, 123456.789, 1e-7]]).astype(np.float32)
    want = [round(float(x), 5) for x in values]
    got = _vec(values)
    assert got == want and [str(x) for x in got] == [str(x) for x in want]
    assert _vec(np.array([3, 4])) == [3.0, 4.0]


def test_each_decision_line_holds_the_vectors_around_it(small_game, tmp_path):
    # The recorder lists a decision's vector after it once and reuses it as the next one's
    # before; every line must still hold its own decision's vectors.
    from nlmcs.games.runner import GameHook

    class Spy(GameHook):
        def __init__(self):
            self.vectors = []

        def on_decision(self, before, state, turn, player, agent, action, applied, after):
            self.vectors.append((before.tolist(), after.tolist()))

    path, spy = tmp_path / "g.jsonl", Spy()
    pols = {0: small_game.policy("builtin"), 1: small_game.policy("random")}
    play_game(small_game, pols, seed=3, max_turns=10, hooks=[CorpusRecorder(path), spy])
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    written = [(d["state_vector"], d["after_vector"]) for d in lines if d["type"] == "decision"]
    rounded = [([round(x, 5) for x in b], [round(x, 5) for x in a]) for b, a in spy.vectors]
    assert written == rounded and len(written) > 50
