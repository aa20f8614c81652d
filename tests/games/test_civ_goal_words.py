"""Goal words: each unit's step towards where the built-in AI would send it ("site", "job",
"front", "home", "rally"), which a policy network may read beside a move's own words. They
name the AI's own step, mark at most one step per goal, and a network reads them only when its
layout says so (the shipped network, laid out without them, still fits)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nlmcs.errors import UserInputError
from nlmcs.games import make_game
from nlmcs.games.civ import ai, labels
from nlmcs.net.checkpoint import Checkpoint, load, save
from nlmcs.net.features import Encoder, layout_for
from nlmcs.net.model import NetConfig


@pytest.fixture(scope="module")
def game():
    return make_game("civ", preset="small", max_turns=60)


def _positions(game, seeds=2, level="normal"):
    """(state, player, the AI's joint action) at every turn of AI-vs-AI games."""
    for seed in range(seeds):
        s = game.new_initial_state(seed)
        rng = np.random.default_rng(seed)
        players = [game.policy(f"builtin:{level}")] * 2
        while not s.is_terminal():
            joints = {p: players[p].joint_action(s, p, rng) for p in range(2)}
            for p in range(2):
                yield s, p, joints[p]
            s.apply_joint_actions(joints, rng)


def test_the_ais_own_step_with_its_first_founder_and_worker_carries_the_goal_word(game):
    """Nothing is claimed before a player's first founder and first worker of a turn decide,
    so where the AI moves them is the step the goal word marks."""
    moved = {"site": 0, "job": 0}
    for s, p, joint in _positions(game):
        T, seen = s.tables, set()
        for agent, actions in s.agent_actions(p):
            u = labels._unit(s, agent)
            if u is None or not T.unit_settlers[u.kind]:
                continue
            word = "site" if T.unit_cities[u.kind] else "job"
            first = word not in seen
            seen.add(word)
            action = joint.get(agent)
            if not first or action is None or action.kind != "move":
                continue
            words = labels.goal_labels(s, agent, actions)[actions.index(action)]
            assert word in words, f"turn {s.turn} {agent}: the AI's {action} has {words}"
            moved[word] += 1
    assert moved["site"] > 20 and moved["job"] > 20, moved


def test_each_goal_marks_at_most_one_move_and_it_leads_closer_over_land(game):
    marked = set()
    for s, p, _ in _positions(game, seeds=1, level="hard"):
        for agent, actions in s.agent_actions(p):
            u = labels._unit(s, agent)
            if u is None:
                continue
            targets = dict(labels.goal_targets(s, u))
            goals = labels.goal_labels(s, agent, actions)
            for word in targets:
                steps = [a for a, g in zip(actions, goals, strict=True) if word in g]
                assert len(steps) <= 1, f"{agent}: {word} on {steps}"
                for a in steps:
                    dist = ai.land_distances(s, targets[word])
                    assert a.kind == "move"
                    assert dist[s.map.neighbors[u.tile][a.arg]] < dist[u.tile]
                    marked.add(word)
            assert all(set(g) <= set(targets) for g in goals)
            assert not any(g for a, g in zip(actions, goals, strict=True) if a.kind != "move")
    assert {"site", "job", "front", "home", "rally"} <= marked, marked


def test_a_network_reads_goal_words_only_when_its_layout_says_so(game, tmp_path):
    plain, goals = layout_for(game), layout_for(game, goal_words=True)
    assert "goal_words" not in plain.to_dict()  # written as before goal words existed
    assert not any(t in plain.tokens for t in ("action:site", "action:rally"))
    assert {f"action:{w}" for w in labels.GOAL_WORDS} <= set(goals.tokens)
    s = game.new_initial_state(3)  # the settlers' first steps towards a site
    with_goals, without = Encoder(goals).encode(s, 0), Encoder(plain).encode(s, 0)
    assert goals.tokens.index("action:site") in with_goals.cand_tok
    extra = (with_goals.cand_tok > 0).sum(axis=1) - (without.cand_tok > 0).sum(axis=1)
    n_goals = [len(g) for a, acts in s.agent_actions(0) for g in labels.goal_labels(s, a, acts)]
    assert list(extra) == n_goals and sum(n_goals) > 0
    # a goal-word network round-trips, and the shipped network (without them) still fits
    path = save(Checkpoint.fresh(game, NetConfig(hidden=8), goal_words=True), tmp_path / "g.pt")
    assert load(path, game).layout.goal_words
    from nlmcs.net.guide import default_net

    assert not load(default_net("civ"), game).layout.goal_words


def test_a_game_without_goal_words_refuses_a_network_that_reads_them(game, tmp_path,
                                                                    monkeypatch):
    path = save(Checkpoint.fresh(game, NetConfig(hidden=8), goal_words=True), tmp_path / "g.pt")
    monkeypatch.setattr(type(game), "goal_words", lambda self: ())
    with pytest.raises(UserInputError, match="g.pt: this network reads goal words"):
        load(path, game)


def test_a_run_with_goal_words_refuses_to_start_from_a_network_without_them(tmp_path):
    from nlmcs.net.spec import TrainSpec
    from nlmcs.net.train import train_net

    plain = save(Checkpoint.fresh(make_game("civ", preset="small", max_turns=4),
                                  NetConfig(hidden=8)), tmp_path / "plain.pt")
    spec = TrainSpec(generations=0, eval_games=1, max_turns=4, hidden=8, init=str(plain),
                     goal_words=True)
    with pytest.raises(UserInputError, match="plain.pt: this network reads no goal words"):
        train_net(spec, tmp_path / "run", log=lambda line: None)
    assert "goal_words" not in dataclasses.replace(spec, goal_words=False).identity()
