import numpy as np
import pytest
from toy_game import make_manual, same_random_weights

from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.learner import update
from nlmcs.model.network import ValueNetwork

SIG = Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",))


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _random_weights(net, seed=0):
    rng = np.random.default_rng(seed)
    for table in (net.u, net.v, net.w):
        table[:] = rng.normal(0, 0.5, size=table.shape)
    net.weights_changed()


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
def test_hidden_layers_are_distributions(index, kind):
    net = ValueNetwork(ModelConfig(kind=kind, min_count=1), index)
    _random_weights(net)
    sc = net.scores(SIG)
    assert np.all(sc.p >= 0) and sc.p.sum() == pytest.approx(1.0)
    if kind == "text":
        assert np.allclose(sc.cond.sum(axis=2), 1.0)
        assert np.allclose(sc.marg.sum(axis=1), 1.0)
        assert sc.p.shape == (6,)  # five settlers sentences + NULL


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
def test_expected_q_is_the_mean_of_sampled_q(index, kind):
    net = ValueNetwork(ModelConfig(kind=kind, min_count=1), index)
    _random_weights(net, seed=1)
    rng = np.random.default_rng(2)
    samples = np.array([net.sample(SIG, rng).q for _ in range(20000)])
    expected = net.expected_q([SIG])[0]
    assert samples.std() > 0.05  # the hidden units matter
    assert samples.mean() == pytest.approx(expected, abs=4 * samples.std() / np.sqrt(len(samples)))


def _w_dot_f(net, dec) -> float:
    """Q = w . f of a drawn decision, from the output rows the learner uses."""
    slot, val = net.rows.output_rows(net.features(dec.sig), dec.y, dec.z)
    return float(net.w[slot] @ val)


def test_sampled_q_matches_w_dot_f(index):
    net = ValueNetwork(ModelConfig(kind="text", min_count=1), index)
    _random_weights(net, seed=3)
    dec = net.sample(SIG, np.random.default_rng(0))
    assert _w_dot_f(net, dec) == pytest.approx(dec.q)


@pytest.mark.parametrize("kind", ["linear", "nonlinear", "relevance-only", "text"])
def test_one_update_moves_q_towards_r(index, kind):
    net = ValueNetwork(ModelConfig(kind=kind, min_count=1, alpha=0.01), index)
    rng = np.random.default_rng(0)
    dec = net.sample(SIG, rng)
    assert dec.q == 0.0
    update(net, [dec], 1.0)
    q1 = _w_dot_f(net, dec)
    assert 0.0 < q1 < 1.0
    update(net, [net.sample(SIG, rng)], -1.0)
    assert net.expected_q([SIG])[0] < q1


def test_reset_zeroes_every_weight(index):
    net = ValueNetwork(ModelConfig(kind="text", min_count=1, alpha=0.1), index)
    rng = np.random.default_rng(0)
    for _ in range(5):
        update(net, [net.sample(SIG, rng)], 1.0)
    assert net.expected_q([SIG])[0] > 0
    assert np.abs(net.u).sum() > 0 and np.abs(net.v).sum() > 0
    net.reset()
    assert not net.u.any() and not net.v.any() and not net.w.any()
    assert net.expected_q([SIG])[0] == 0.0


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_release_and_consistent_hidden_steps_are_exact_negatives(index, backend):
    # k = (Q - R) Q (release) against (R - Q) Q (consistent): from the same weights, one sweep
    # without decay moves u and v by exactly opposite steps and w by the same step.
    steps = []
    for rule in ("release", "consistent"):
        net = ValueNetwork(ModelConfig(kind="text", min_count=1, alpha=0.1, l2=0.0, passes=1,
                                       hidden_update=rule, backend=backend), index)
        same_random_weights([net])  # Q != 0, so k != 0
        before = [t.copy() for t in (net.u, net.v, net.w)]
        decision = net.sample(SIG, np.random.default_rng(0))
        assert decision.z  # a sentence with labels, so v moves too
        update(net, [decision], 1.0)
        steps.append([t - b for t, b in zip((net.u, net.v, net.w), before, strict=True)])
    (du_r, dv_r, dw_r), (du_c, dv_c, dw_c) = steps
    assert np.abs(du_r).max() > 1e-4 and np.abs(dv_r).max() > 1e-4
    # k is negated exactly; the steps read back from the tables carry their rounding (~1e-16)
    assert np.allclose(du_r, -du_c, rtol=1e-12, atol=1e-15)
    assert np.allclose(dv_r, -dv_c, rtol=1e-12, atol=1e-15)
    assert np.array_equal(dw_r, dw_c)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("kind", ["relevance-only", "text"])
@pytest.mark.parametrize("options", [{}, {"overlap_state": True, "normalize": True,
                                          "hidden_update": "expected"}])
def test_an_agent_the_manual_never_names_has_only_null(index, kind, backend, options):
    """A FreeCiv unit missing from the help text crashed an ablation: no candidate words made
    the per-sentence sums int64 and the float relevance update was refused."""
    net = ValueNetwork(ModelConfig(kind=kind, min_count=1, alpha=0.01, backend=backend,
                                   **options), index)  # fmt: skip
    sig = Signature(("phalanx",), ("fortify",), "fortify", ("grassland",))
    assert len(net.features(sig).unit.sentences) == 0
    rng = np.random.default_rng(0)
    for _ in range(3):
        update(net, [net.sample(sig, rng), net.sample(SIG, rng)], 1.0)
    sc = net.scores(sig)
    assert sc.p.tolist() == [1.0]  # NULL is the only sentence
    assert 0.0 < net.expected_q([sig])[0] < 1.0  # the update reached it through w


def test_the_decision_log_lists_every_sentence_tied_with_its_last(index):
    # The log keeps the top sentences and every one tied with the last kept, so a reader (the
    # relevance accuracy) sees whole ties instead of a cut in document order.
    from toy_game import ToyGame

    from nlmcs.model.evaluator import NetworkEvaluator

    state = ToyGame(units=1).new_initial_state(0)
    agent, actions = next((a, acts) for a, acts in state.agent_actions(0)
                          if a.startswith("unit:"))
    evaluator = NetworkEvaluator(ValueNetwork(ModelConfig(kind="text", min_count=1), index))
    evaluator.reset()  # all weights 0: every candidate sentence (and NULL) ties
    rec = evaluator.explain(state, agent, actions[0], np.random.default_rng(0), top=1)
    assert rec["num_candidates"] > 2 and len(rec["sentences"]) == rec["num_candidates"]
    same_random_weights([evaluator.net])
    rec = evaluator.explain(state, agent, actions[0], np.random.default_rng(0), top=1)
    assert len(rec["sentences"]) == 1
