"""The policy/value network: it learns, its file round-trips and refuses misfits, and the
search it guides only ever plays legal moves."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from nlmcs.errors import UserInputError
from nlmcs.games import make_game
from nlmcs.net.checkpoint import Checkpoint, load, save
from nlmcs.net.features import Encoder, layout_for, stack
from nlmcs.net.guide import NetGuide
from nlmcs.net.model import NetConfig, PolicyValueNet, agent_log_softmax, tensors
from nlmcs.net.samples import Samples, concat, load_samples, replay_corpus
from nlmcs.net.train import fit


@pytest.fixture(scope="module")
def game():
    return make_game("civ", preset="small", max_turns=6)


@pytest.fixture(scope="module")
def corpus():
    from corpus.shipped import find_corpus_dir
    from corpus.store import load_corpus

    return load_corpus(find_corpus_dir("civ-sample"))


def _positions(game, turns=4, seed=5):
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(seed)
    ai = game.policy("builtin")
    encoder = Encoder(Checkpoint.fresh(game).layout)
    out = []
    for _ in range(turns):
        out += [encoder.encode(state, p) for p in range(state.num_players)]
        state.apply_joint_actions({p: ai.joint_action(state, p, rng) for p in range(2)}, rng)
    return state, out


def test_replayed_corpus_games_match_their_record_and_cloning_lowers_the_loss(game, corpus):
    ck = Checkpoint.fresh(game, NetConfig(hidden=16), seed=1)
    samples, report = replay_corpus(corpus, Encoder(ck.layout), games=3)
    assert report.replayed == 3 and not report.skipped
    # every agent's target is its recorded move: one-hot over its legal moves
    sums = np.zeros(len(samples.agent_pos))
    np.add.at(sums, samples.cand_agent, samples.target)
    assert set(np.unique(sums)) <= {0.0, 1.0} and sums.mean() > 0.95
    assert report.decisions == int(sums.sum()) + int((sums == 0).sum())
    rows = fit(ck.net, samples, epochs=3, batch=64, lr=3e-3, weight_decay=0.0, seed=0)
    assert rows[-1]["train_policy"] < 0.8 * rows[0]["train_policy"]
    assert rows[-1]["train_value"] < rows[0]["train_value"]


def test_a_game_won_by_conquest_replays_to_its_last_turn(game, corpus):
    import dataclasses as dc

    short = corpus.games[corpus.games["turns"] < 100].head(1).reset_index(drop=True)
    _, report = replay_corpus(dc.replace(corpus, games=short), Encoder(layout_for(game)))
    assert report.replayed == 1 and not report.skipped


def test_a_game_that_does_not_replay_is_skipped_not_guessed(game, corpus):
    broken = dataclasses.replace(corpus, decisions=corpus.decisions.copy())
    first = broken.games.iloc[0]["game_id"]
    rows = broken.decisions.index[broken.decisions["game_id"] == first][:3]
    broken.decisions.loc[rows, "action_kind"] = "wait"
    samples, report = replay_corpus(broken, Encoder(Checkpoint.fresh(game).layout), games=2)
    assert report.replayed == 1 and report.skipped == {"moves differ from the record": 1}
    assert len(samples) == 200  # the good game's 100 turns x 2 players


def test_checkpoint_round_trip_gives_the_same_outputs(game, tmp_path):
    ck = Checkpoint.fresh(game, NetConfig(hidden=8), seed=3)
    ck.training = {"generation": 2, "loss": np.float64(0.5)}
    save(ck, tmp_path / "n.pt")
    back = load(tmp_path / "n.pt", game)
    assert back.training == {"generation": 2, "loss": 0.5}
    _, positions = _positions(game)
    t = tensors(stack(positions))
    with torch.no_grad():
        for a, b in zip(ck.net(**t), back.net(**t), strict=True):
            assert torch.equal(a, b)


def test_a_checkpoint_for_another_game_or_layout_is_refused_in_one_line(game, tmp_path):
    ck = Checkpoint.fresh(game, NetConfig(hidden=8))
    for field, value in (("game", "catan"), ("ruleset_sha256", "0" * 16),
                         ("tokens", (*ck.layout.tokens[:-1], "action:zzz"))):
        bad = Checkpoint(ck.net, dataclasses.replace(ck.layout, **{field: value}))
        save(bad, tmp_path / "bad.pt")
        with pytest.raises(UserInputError) as err:
            load(tmp_path / "bad.pt", game)
        assert field in str(err.value) and "\n" not in str(err.value)
    (tmp_path / "junk.pt").write_bytes(b"not a zip")
    with pytest.raises(UserInputError, match="not a network checkpoint"):
        load(tmp_path / "junk.pt")


def test_a_network_of_one_government_plays_the_same_rules_under_another(tmp_path, monkeypatch):
    """Real FreeCiv's game after the revolution is searched under classic's Monarchy rules: the
    shipped networks (made under Despotism's) read it alike, where rules that differ in any
    other number are still refused in one line."""
    import json

    from nlmcs.games.civ.ruleset import GOVERNMENT_PARAMS, load_ruleset, resolve_ruleset_path
    from nlmcs.net.guide import default_net

    classic, monarchy = load_ruleset("classic"), load_ruleset("classic-monarchy")
    changed = {k for k in classic.params if classic.params[k] != monarchy.params.get(k)}
    assert changed and changed <= GOVERNMENT_PARAMS and classic.same_but_government(monarchy)
    under_monarchy = make_game("civ", preset="small", max_turns=100, ruleset="classic-monarchy")
    for turns in (20, 100):
        assert load(default_net("civ", turns), under_monarchy) is not None
    data = json.loads(resolve_ruleset_path("classic").read_text())
    data["name"], data["params"]["base_tech_cost"] = "other", data["params"]["base_tech_cost"] + 1
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    (tmp_path / "rulesets").mkdir()
    (tmp_path / "rulesets" / "other.json").write_text(json.dumps(data))
    other = make_game("civ", preset="small", max_turns=100, ruleset="other")
    with pytest.raises(UserInputError) as err:
        load(default_net("civ", 100), other)
    assert "ruleset" in str(err.value) and "\n" not in str(err.value)


def test_a_checkpoint_with_bad_weights_is_refused_before_anything_is_built(game, tmp_path,
                                                                          monkeypatch):
    """Issue 60 class 3: NaN weights passed `net show` and crashed mid-game; a recorded hidden
    size that disagrees with the weights allocated gigabytes before the refusal."""
    ck = Checkpoint.fresh(game, NetConfig(hidden=8))
    with torch.no_grad():
        next(iter(ck.net.parameters())).view(-1)[0] = float("nan")
    save(ck, tmp_path / "nan.pt")
    with pytest.raises(UserInputError, match="NaN or infinite weights"):
        load(tmp_path / "nan.pt", game)
    data = torch.load(tmp_path / "nan.pt", weights_only=True)
    data["config"]["hidden"] = 1_000_000
    torch.save(data, tmp_path / "huge.pt")
    built = []
    real = PolicyValueNet.__init__
    monkeypatch.setattr(PolicyValueNet, "__init__", lambda self, *a, **k: built.append(
        torch.empty(0).device.type) or real(self, *a, **k))
    with pytest.raises(UserInputError, match="recorded config makes"):
        load(tmp_path / "huge.pt", game)
    assert built == ["meta"]  # only the shape check's network, on the meta device


def test_probabilities_exist_only_for_legal_moves_and_sum_to_one(game):
    state, _ = _positions(game)
    guide = NetGuide(Checkpoint.fresh(game, NetConfig(hidden=8), seed=2))
    for agent, actions in state.agent_actions(0):
        p = guide(state, agent, list(actions))
        assert len(p) == len(state.legal_actions(agent))
        assert p.min() > 0 and abs(p.sum() - 1) < 1e-6
    assert guide.forwards == 1  # one forward pass answered every agent of the player


def test_softmax_is_per_agent_and_float64_agrees_with_float32(game):
    _, positions = _positions(game)
    net = Checkpoint.fresh(game, NetConfig(hidden=16), seed=4).net
    batch = stack(positions)
    out = {}
    for dtype in (torch.float32, torch.float64):
        t = tensors(batch, dtype=dtype)
        with torch.no_grad():
            logits, value = net.to(dtype=dtype)(**t)
            out[dtype] = agent_log_softmax(logits, t["cand_agent"], len(batch.agent_tok)).exp()
    sums = torch.zeros(len(batch.agent_tok), dtype=torch.float64).index_add_(
        0, torch.as_tensor(batch.cand_agent, dtype=torch.long), out[torch.float64])
    assert torch.allclose(sums, torch.ones_like(sums))
    assert torch.allclose(out[torch.float32].double(), out[torch.float64], atol=1e-5)


def test_puct_net_plays_only_legal_moves_and_repeats_itself(game, tmp_path):
    from nlmcs.methods import NetOptions, make_planner
    from nlmcs.search.config import SearchConfig

    save(Checkpoint.fresh(game, NetConfig(hidden=8), seed=6), tmp_path / "n.pt")
    state, _ = _positions(game, turns=2)
    moves = []
    for method in ("puct-net", "uct-net-prior"):
        for _ in range(2):
            planner = make_planner(method, game=game, search_config=SearchConfig(rollouts=6,
                                   depth=3), seed=1, net=NetOptions(net=str(tmp_path / "n.pt")))
            move = planner.choose(state, 0, np.random.default_rng(0))
            for agent, action in move.items():
                assert action in state.legal_actions(agent)
            moves.append(move)
    assert moves[0] == moves[1] and moves[2] == moves[3]


def test_samples_file_round_trip_and_damage(tmp_path, game):
    _, positions = _positions(game)
    targets = [np.full(len(p.cand_agent), 0.5, np.float32) for p in positions]
    s = Samples.from_positions(positions, targets, [1.0] * len(positions))
    both = concat([s, s])
    assert len(both) == 2 * len(s) and both.agent_pos.max() == len(both) - 1
    s.save(tmp_path / "g.npz", {"seed": 3})
    back, meta = load_samples(tmp_path / "g.npz")
    assert meta == {"seed": 3} and np.array_equal(back.cand_tok, s.cand_tok)
    (tmp_path / "bad.npz").write_bytes(b"junk")
    with pytest.raises(UserInputError, match="bad.npz"):
        load_samples(tmp_path / "bad.npz")


def test_a_network_plays_as_an_opponent_by_its_most_likely_legal_moves(game, capsys):
    """Issue 58 item 3: the previous generation's network as a yardstick (`--opponent net:FILE`);
    roll-outs model it by the built-in AI."""
    from nlmcs.cli import main
    from nlmcs.methods import opponent_policy, rollout_opponent
    from nlmcs.net.opponent import NetPolicy

    player = opponent_policy(game, "net")
    assert isinstance(player, NetPolicy) and rollout_opponent("net:x.pt") == "builtin"
    assert rollout_opponent("builtin:hard") == "builtin:hard"
    state, _ = _positions(game)
    joint = player.joint_action(state, 1, np.random.default_rng(0))
    policy = player.guide.position_policy(state, 1)
    for agent, actions in state.agent_actions(1):
        assert joint[agent] == actions[int(np.argmax(policy[agent]))]
    assert main(["play", "--method", "uct", "--opponent", "net", "--map", "tiny", "--steps", "2",
                 "--rollouts", "2", "--depth", "2", "--no-progress"]) == 0
    assert "against net on the tiny map" in capsys.readouterr().err


def test_the_shipped_networks_are_chosen_by_the_games_horizon():
    """Each shipped network plays the horizon it was trained at: the table's horizons are the
    checkpoints' own, and a game takes the network of the nearest one (ties to the shorter)."""
    from nlmcs.games import make_game
    from nlmcs.net.checkpoint import load
    from nlmcs.net.guide import SHIPPED, default_net, load_guide

    for trained, name in SHIPPED["civ"].items():
        assert load(default_net("civ", trained)).training["spec"]["max_turns"] == trained
        assert default_net("civ", trained).name == name
    assert default_net("civ", 44).name == "civ.pt" and default_net("civ", 45).name == "civ-100.pt"
    assert default_net("civ", 300).name == "civ-100.pt" and default_net("civ").name == "civ.pt"
    long_game = make_game("civ", preset="small", max_turns=100)
    short_game = make_game("civ", preset="small", max_turns=20)
    assert load_guide(None, long_game).net is load_guide(default_net("civ", 100), long_game).net
    assert load_guide(None, short_game).net is not load_guide(None, long_game).net


def test_the_shipped_network_serves_the_real_games_planners():
    """Real FreeCiv's planners search our civ engine on the translated view: the civ network
    is theirs, checked against the game they search (not the server's match)."""
    from nlmcs.games import make_game
    from nlmcs.net.guide import default_net, load_guide

    match = make_game("freeciv", max_turns=100, ai_players=1)
    planned = match.planning_game()
    assert (planned.config.width, planned.config.height, planned.num_players) == (40, 25, 2)
    assert default_net("freeciv") == default_net("civ")
    assert load_guide(None, planned).net is not None
