"""The torch backend (`ModelConfig.backend = "torch"`) scores, samples and learns exactly as numpy.

Same toy game and hand-parsed manual as the other model tests."""

import pickle

import numpy as np
import pytest
import torch
from toy_game import ToyGame, make_manual

from nlmcs.cli import main
from nlmcs.games.base import step
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.learner import update
from nlmcs.model.network import ValueNetwork
from nlmcs.model.torch_network import TorchValueNetwork
from nlmcs.search.config import SearchConfig
from nlmcs.search.methods import make_planner

SIG = Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",))
SIGS = [
    SIG,
    Signature(("settlers",), ("mine",), "mine", ("hills",)),
    Signature(("settlers",), ("move", "north"), "move", ("grassland", "river")),
    Signature(("warriors",), ("irrigate",), "irrigate", ("desert",)),  # no candidate sentence
]
KINDS = ["linear", "latent", "relevance", "text"]


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _pair(index, seed=0, **kw):
    """A numpy and a torch network with the same random weights."""
    nets = []
    for cls in (ValueNetwork, TorchValueNetwork):
        net = cls(ModelConfig(min_count=1, **kw), index)
        rng = np.random.default_rng(seed)
        for table in (net.u, net.v, net.w):
            table[:] = rng.normal(0, 0.5, size=table.shape)
        net.weights_changed()
        nets.append(net)
    return nets


@pytest.mark.parametrize("kind", KINDS)
def test_same_probabilities_and_q(index, kind):
    ref, tor = _pair(index, seed=1, kind=kind)
    for sig in SIGS:
        a, b = ref.scores(sig), tor.scores(sig)
        assert b.expected == pytest.approx(a.expected, abs=1e-9)
        assert b.game == pytest.approx(a.game, abs=1e-9)
        np.testing.assert_allclose(b.p, a.p, rtol=0, atol=1e-9)
        np.testing.assert_allclose(b.lang, a.lang, rtol=0, atol=1e-9)
        if kind == "text":
            np.testing.assert_allclose(b.cond, a.cond, rtol=0, atol=1e-9)
            np.testing.assert_allclose(b.marg, a.marg, rtol=0, atol=1e-9)
            np.testing.assert_allclose(tor._pred(sig, b), ref._pred(sig, a), rtol=0, atol=1e-9)
        ids_a, p_a = ref.relevance(sig)
        ids_b, p_b = tor.relevance(sig)
        assert np.array_equal(ids_a, ids_b)
        np.testing.assert_allclose(p_b, p_a, rtol=0, atol=1e-9)
    np.testing.assert_allclose(tor.expected_q(SIGS), ref.expected_q(SIGS), rtol=0, atol=1e-9)
    assert np.ptp(ref.expected_q(SIGS)) > 0.1  # the signatures really differ


@pytest.mark.parametrize("kind", ["latent", "text"])
def test_same_samples_and_sampled_q(index, kind):
    ref, tor = _pair(index, seed=2, kind=kind, temperature=0.7)
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(200):
        for sig in SIGS[:3]:
            a, b = ref.sample(sig, ra), tor.sample(sig, rb)
            assert (a.y, a.z) == (b.y, b.z)
            assert b.q == pytest.approx(a.q, abs=1e-9)
            assert tor.decision_q(sig, b.y, b.z) == pytest.approx(b.q, abs=1e-9)


def test_tables_share_memory_with_the_numpy_learner(index):
    net = TorchValueNetwork(ModelConfig(kind="text", min_count=1, alpha=0.1), index)
    for table, layer in ((net.u, net.layers.relevance.u), (net.v, net.layers.labels.v),
                         (net.w, net.layers.output.w)):  # fmt: skip
        assert layer.weight.data_ptr() == table.ctypes.data
    update(net, [net.sample(SIG, np.random.default_rng(0))], 1.0)
    assert net.layers.output.w.weight.abs().sum().item() == pytest.approx(np.abs(net.w).sum())
    assert net.expected_q([SIG])[0] > 0
    net.reset()
    assert net.expected_q([SIG])[0] == 0.0
    assert torch.get_num_threads() == 1
    net.w = np.ones_like(net.w)  # a replaced table is picked up at the next weight change
    net.weights_changed()
    assert net.layers.output.w.weight.data_ptr() == net.w.ctypes.data
    assert net.scores(SIG).game == len(net.features(SIG).game)


@pytest.mark.parametrize("kind", ["relevance", "text"])
def test_same_online_learning(index, kind):
    """The toy learning task of test_model_learning, short: identical decisions and weights."""
    runs = []
    for backend in ("numpy", "torch"):
        cfg = ModelConfig(kind=kind, min_count=1, alpha=0.05, passes=2, backend=backend)
        net = (TorchValueNetwork if backend == "torch" else ValueNetwork)(cfg, index)
        rng = np.random.default_rng(3)
        trace = []
        for _ in range(300):
            act = ("irrigate", "mine", "wait")[int(rng.integers(3))]
            sig = Signature(("settlers",), (act,), act, ("grassland",))
            dec = net.sample(sig, rng)
            trace.append((dec.y, dec.z, dec.q))
            update(net, [dec], 1.0 if act == "irrigate" else 0.0)
        runs.append((trace, net.u.copy(), net.v.copy(), net.w.copy(), net.expected_q(SIGS)))
    (ta, *wa, qa), (tb, *wb, qb) = runs
    assert [t[:2] for t in ta] == [t[:2] for t in tb]
    np.testing.assert_allclose([t[2] for t in tb], [t[2] for t in ta], rtol=0, atol=1e-9)
    for a, b in zip(wa, wb, strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-9)
    np.testing.assert_allclose(qb, qa, rtol=0, atol=1e-9)
    assert qa[0] > 0.3  # it learned something


def _play(backend: str, workers: int = 1):
    """A seeded toy game; per real step the move and the logged Q and relevance of every
    candidate (read from the weights learned in that step's roll-outs)."""
    game = ToyGame(units=2, max_turns=4)  # roll-outs stop before the end: rewards vary
    cfg = SearchConfig(rollouts=16, depth=2, batch=4, workers=workers, log_decisions=True)
    mcfg = ModelConfig(min_count=1, alpha=0.01, backend=backend)
    planner = make_planner("text", game=game, manual=make_manual(), search_config=cfg,
                           model_config=mcfg, seed=7)  # fmt: skip
    net = planner.core.evaluator.net
    state = game.new_initial_state(3)
    rng = np.random.default_rng(3)
    moves, qs, ps = [], [], []
    try:
        while not state.is_terminal():
            move = planner.choose(state, 0, rng)
            moves.append(sorted(move.items()))
            for rec in planner.last_log:
                qs.extend(c["q"] for c in rec["candidates"])
                ps.extend(s["p"] for s in rec.get("sentences", []))
            step(state, 0, move, {1: game.policy("builtin")}, rng)
    finally:
        planner.close()
    return type(net), moves, state.scores, np.array(qs), np.array(ps)


def test_same_game_with_either_backend():
    cls_a, *a = _play("numpy")
    cls_b, *b = _play("torch")
    assert cls_a is ValueNetwork and cls_b is TorchValueNetwork
    moves, scores, qs, ps = a
    assert moves == b[0] and scores == b[1]
    assert np.ptp(qs) > 0.1 and np.ptp(ps) > 0.01  # the weights did learn
    np.testing.assert_allclose(b[2], qs, rtol=0, atol=1e-9)
    np.testing.assert_allclose(b[3], ps, rtol=0, atol=1e-6)  # logged rounded to 6 places
    _, *c = _play("torch", workers=2)  # replicas in worker processes (pickled networks)
    assert c[0] == moves and c[1] == scores
    np.testing.assert_allclose(c[2], qs, rtol=0, atol=1e-9)


def test_pickled_copy_shares_its_own_tables(index):
    ref, tor = _pair(index, seed=4, kind="text")
    tor.scores(SIG)
    copy = pickle.loads(pickle.dumps(tor))
    assert copy.layers.output.w.weight.data_ptr() == copy.w.ctypes.data
    assert copy.expected_q([SIG])[0] == pytest.approx(ref.expected_q([SIG])[0], abs=1e-9)
    dec = ref.sample(SIG, np.random.default_rng(0))
    update(ref, [dec], 2.0)
    update(copy, [dec], 2.0)
    assert copy.expected_q(SIGS) == pytest.approx(ref.expected_q(SIGS), abs=1e-9)
    assert tor.expected_q([SIG])[0] != pytest.approx(copy.expected_q([SIG])[0])


def test_cuda_request_without_cuda_runs_on_the_cpu(index):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    net = TorchValueNetwork(ModelConfig(kind="text", min_count=1, device="cuda"), index)
    assert net.device.type == "cpu"
    assert net.expected_q([SIG])[0] == 0.0


def test_play_command_takes_the_backend(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    built = []
    init = TorchValueNetwork.__init__

    def spy(self, config, index=None):
        built.append(config.backend)
        init(self, config, index)

    monkeypatch.setattr(TorchValueNetwork, "__init__", spy)
    code = main(["play", "--method", "linear", "--backend", "torch", "--map", "tiny", "--steps",
                 "1", "--rollouts", "2", "--depth", "2", "--no-progress"])  # fmt: skip
    assert code == 0 and built == ["torch"]
    assert "method linear" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["play", "--backend", "jax", "--map", "tiny", "--no-progress"])
