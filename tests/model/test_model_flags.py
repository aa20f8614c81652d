"""Each option of the model changes what it says it changes, and nothing when it is off."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from toy_game import make_manual

from nlmcs.model import reference
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.learner import update
from nlmcs.model.network import ValueNetwork

SIG = Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",))
BASE = ModelConfig(kind="text", min_count=1, alpha=0.05)


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _net(index, **kw):
    net = ValueNetwork(dataclasses.replace(BASE, **kw), index)
    net.reset()
    return net


def _learn(net, n=5, reward=1.0, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        update(net, [net.sample(SIG, rng)], reward)


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
def test_game_and_text_output_features_never_share_a_weight(index, kind):
    net = _net(index, kind=kind)
    half = net.rows.text_offset
    feats = net.features(SIG)
    assert (feats.game < half).all()
    text = ([feats.latent_f.ravel()] if kind == "nonlinear" else
            [p.lang for p in feats.parts] + [p.pred.ravel() for p in feats.parts])
    assert all((t >= half).all() for t in text)
    _learn(net)
    assert np.abs(net.w[:half]).sum() > 0 and np.abs(net.w[half:]).sum() > 0


def test_persist_hidden_keeps_u_v_and_text_weights_across_steps(index):
    for persist, kept in (("none", False), ("hidden", True)):
        net = _net(index, persist=persist)
        _learn(net)
        half = net.rows.text_offset
        before = net.u.copy(), net.v.copy(), net.w[half:].copy()
        assert all(np.abs(b).sum() > 0 for b in before)
        net.reset()  # the next real step
        assert not net.w[:half].any()
        for table, old in zip((net.u, net.v, net.w[half:]), before, strict=True):
            assert np.array_equal(table, old) == kept
            assert table.any() == kept


def test_overlap_state_raises_sentences_that_name_the_state(index):
    off = _net(index, overlap_state=False)
    on = _net(index, overlap_state=True)
    for net in (off, on):
        net.u[net.rows.overlap_state_slot] = 3.0
        net.weights_changed()
    ids, p_off = off.relevance(SIG)
    _, p_on = on.relevance(SIG)
    grass = list(ids).index(0)  # "Settlers irrigate grassland quickly." names the state
    assert np.allclose(p_off[:-1], p_off[0])  # without the feature the slot is never read
    assert p_on[grass] > 10 * p_on[1]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_relevance_prior_starts_relevance_at_sentences_naming_the_move(index, backend):
    flat = _net(index, backend=backend)
    ids, p_flat = flat.relevance(SIG)
    assert np.allclose(p_flat, p_flat[0])  # no prior: uniform
    for persist in ("none", "hidden"):
        net = _net(index, backend=backend, relevance_prior=1.5, overlap_state=True,
                   persist=persist)
        assert net.u[net.rows.overlap_slot] == net.u[net.rows.overlap_state_slot] == 1.5
        _, p = net.relevance(SIG)
        grass = list(ids).index(0)  # "Settlers irrigate grassland quickly.": agent, action, state
        assert p[grass] == p.max() and p[grass] > 4 * p_flat[grass]
        net.u[net.rows.overlap_slot] = -2.0  # learned away within the step
        net.reset()  # the next real step starts from the prior again, or keeps what it learned
        assert net.u[net.rows.overlap_slot] == (1.5 if persist == "none" else -2.0)


def test_normalize_divides_word_features_by_sentence_length(index):
    for normalize in (False, True):
        net = _net(index, normalize=normalize)
        feats = net.features(SIG)
        net.u[feats.unit.phi_word[:, 0]] = 1.0  # every bag-of-words weight 1
        net.weights_changed()
        slot, val, row = net.rows.relevance_rows(feats)
        logits = np.bincount(row, weights=net.u[slot] * val)
        words = np.bincount(feats.unit.rows)
        expected = np.ones(len(words)) if normalize else words.astype(float)
        assert np.allclose(logits[:-1], expected)


def test_center_learns_the_reward_relative_to_the_steps_earlier_rewards(index):
    raw, centred = _net(index, kind="linear"), _net(index, kind="linear", center=True)
    for net in (raw, centred):
        _learn(net, n=1, reward=1.0)
    assert raw.expected_q([SIG])[0] > 0  # uncentred, the first reward is learned as it is
    # Centred, the first roll-out of a step has no earlier reward to centre on: it learns
    # nothing (it used to learn its raw reward, several times any later target).
    assert not centred.w.any() and centred.reward_count == 1
    _learn(centred, n=1, reward=0.0)  # target 0 - 1
    assert centred.expected_q([SIG])[0] < 0
    after_two = centred.w.copy()
    _learn(centred, n=1, reward=0.5)  # target 0.5 - mean(1, 0) = 0: only the L2 decay
    assert np.abs(centred.w).sum() < np.abs(after_two).sum()
    centred.reset()  # the next real step starts its own mean
    assert centred.reward_count == 0


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_first_centred_roll_out_of_a_step_moves_no_weight(index, backend):
    # Under persist="hidden" the text weights carry over, so Q is not 0 when a step starts: a
    # first roll-out learning a target of 0 would still push every layer. It learns nothing.
    net = _net(index, center=True, persist="hidden", backend=backend)
    for reward in (1.0, 0.0, 1.0):
        _learn(net, n=1, reward=reward)
    net.reset()  # a new step: u, v and the text half of w carry over
    assert net.expected_q([SIG])[0] != 0.0
    before = [t.copy() for t in (net.u, net.v, net.w)]
    _learn(net, n=1, reward=0.3)
    assert all(np.array_equal(t, b) for t, b in zip((net.u, net.v, net.w), before, strict=True))
    _learn(net, n=1, reward=0.9)  # the second one learns 0.9 - 0.3
    assert not np.array_equal(net.w, before[2])


def test_hidden_learning_rate_and_l2_apply_to_u_and_v_only(index):
    slow, fast = _net(index, hidden_alpha=0.0), _net(index, hidden_alpha=0.5)
    _learn(slow)
    _learn(fast)
    assert not slow.u.any() and not slow.v.any() and slow.w.any()
    assert fast.u.any() and fast.v.any()


def test_overlap_ranking_keeps_the_sentences_that_share_label_words(index):
    net = _net(index, rank_sentences="state-action", max_sentences=2)
    mine = Signature(("settlers",), ("mine",), "mine", ("hills",))
    ids, _ = net.relevance(SIG)
    assert ids.tolist() == [0, 1, -1]  # "irrigate grassland" first, then the earliest other
    ids, _ = net.relevance(mine)
    assert ids.tolist() == [0, 1, -1]  # "mine hills" (1) and the earliest other (0)
    wait = Signature(("settlers",), ("sing",), "sing", ("hills",))
    assert net.relevance(wait)[0].tolist() == [1, 2, -1]  # "mine hills", "sing songs"
    doc = _net(index, max_sentences=2)
    assert doc.relevance(wait)[0].tolist() == [0, 1, -1]  # document order ignores the labels
    cheese = Signature(("settlers",), ("sing",), "sing", ("cheese",))
    assert net.relevance(cheese)[0].tolist() == [2, 4, -1]  # "sing songs", "eat cheese"
    same = Signature(("settlers",), ("sing",), "sing", ("cheese",))
    assert net.features(cheese).unit is net.features(same).unit  # one set per label words
    _learn(net)  # rows of per-signature candidate sets train as the shared ones do
    assert net.u.any() and net.w.any()


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
def test_expected_rule_steps_down_the_gradient_of_the_expected_error(index, kind):
    """`expected` moves u by -alpha d/du sum_y p_y (R - Q_y)^2, checked by finite differences
    on every weight the datapoint touches (the output layer is frozen so Q_y stays put)."""
    rng = np.random.default_rng(3)
    net = _net(index, kind=kind, alpha=0.0, l2=0.0, hidden_l2=0.0, passes=1,
               hidden_update="expected", hidden_alpha=1e-3)
    net.w[:] = rng.normal(0.0, 0.3, net.w.shape)
    net.u[:] = rng.normal(0.0, 0.3, net.u.shape)
    net.v[:] = rng.normal(0.0, 0.3, net.v.shape)
    net.weights_changed()
    reward = 1.0

    def expected_error(u):
        saved = net.u.copy(), net.v.copy()
        net.u[:], net.v[:] = u, v0  # the labels' weights as the update saw them
        net.weights_changed()
        f = reference.forward(net.rows, net.features(SIG), net.weights)
        out = float(f.p @ (reward - f.row_q) ** 2)
        net.u[:], net.v[:] = saved
        net.weights_changed()
        return out

    u0, v0 = net.u.copy(), net.v.copy()
    update(net, [net.sample(SIG, rng)], reward)
    moved = np.flatnonzero(net.u != u0)
    assert len(moved) > 3
    grad = np.empty(len(moved))
    for i, slot in enumerate(moved):
        up, down = u0.copy(), u0.copy()
        up[slot] += 1e-6
        down[slot] -= 1e-6
        grad[i] = (expected_error(up) - expected_error(down)) / 2e-6
    np.testing.assert_allclose(net.u[moved] - u0[moved], -1e-3 * grad, rtol=1e-4, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_every_rule_trains_the_linear_model_alike(index, backend):
    """The hidden rule has nothing to act on without hidden layers (`expected` once crashed)."""
    nets = [_net(index, kind="linear", hidden_update=rule, backend=backend)
            for rule in ("release", "expected")]
    for net in nets:
        _learn(net, n=3)
    assert nets[0].w.any() and np.array_equal(nets[0].w, nets[1].w)
