"""What a learning replica sends a replica that does not learn (`ValueNetwork.changes`): the
first roll-out worker to the search's own replica at the end of every step."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from toy_game import TOY_SIGNATURES as SIGS
from toy_game import make_manual, same_random_weights

from nlmcs.model.config import ModelConfig
from nlmcs.model.evaluator import NetworkEvaluator
from nlmcs.model.features import ManualIndex
from nlmcs.model.network import ValueNetwork

CASES = [
    ("text", "numba", {}),
    ("text", "numpy", {}),
    ("text", "numba", {"hidden_update": "expected", "center": True}),
    ("text", "numba", {"persist": "hidden", "rank_sentences": "state-action",
                       "max_sentences": 2}),
    ("text", "numpy", {"persist": "hidden", "normalize": True}),
    ("relevance-only", "numba", {"overlap_state": True}),
    ("text", "numba", {"relevance_prior": 1.5, "overlap_state": True, "hidden_update": "expected",
                       "hidden_l2": 0.0, "normalize": True, "center": True}),
    ("nonlinear", "numpy", {"hidden_update": "consistent"}),
    ("linear", "numba", {}),
]


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _tables(net):
    return [getattr(net, t).copy() for t in ("u", "v", "w")]


@pytest.mark.parametrize(("kind", "backend", "options"), CASES)
def test_the_replica_that_loads_the_changes_equals_the_one_that_learned(index, kind, backend,
                                                                        options):
    cfg = ModelConfig(min_count=1, kind=kind, backend=backend, alpha=0.05, hidden_alpha=0.2,
                      **options)
    nets = [ValueNetwork(cfg, index if kind != "linear" else None) for _ in range(2)]
    same_random_weights(nets)
    worker, parent = (NetworkEvaluator(net) for net in nets)
    worker.keep_changes()
    rng = np.random.default_rng(2)
    for step in range(3):  # each step: both reset, the worker learns, the parent copies
        for ev in (worker, parent):
            ev.reset()
        for reward in (1.0, 0.3, 0.6):
            decisions = [worker.net.sample(s, rng) for s in SIGS[step:] + SIGS[:1]]
            worker.learn(worker.prepare(decisions), reward)
        changes = pickle.loads(pickle.dumps(worker.changes()))
        assert 0 < len(changes[0][2][0]) < len(parent.net.w)  # some slots, not the tables
        parent.load_changes(changes)
        for mine, theirs in zip(_tables(worker.net), _tables(parent.net), strict=True):
            assert np.array_equal(mine.view(np.int64), theirs.view(np.int64))  # to the bit
        assert (parent.net.reward_sum, parent.net.reward_count) == (
            worker.net.reward_sum, worker.net.reward_count)
        for sig in SIGS:  # and it ranks candidates as the worker does
            assert parent.net.expected_q([sig])[0] == worker.net.expected_q([sig])[0]
    if kind == "text":
        assert len(changes[0][1][0]) > 0  # the label layer moved, and was sent


def test_nothing_learned_nothing_sent_and_signed_zeros_count(index):
    net = ValueNetwork(ModelConfig(min_count=1), index)
    net.keep_changes()
    moved, *_ = net.changes()
    assert all(len(slots) == 0 and len(values) == 0 for slots, values in moved)
    net.u[5] = -0.0  # equal to 0.0, but not the same bits: a replica must get it
    net.w[7] = 0.25
    (u, _, w), *_ = net.changes()
    assert list(u[0]) == [5] and np.signbit(u[1][0])
    assert list(w[0]) == [7] and list(w[1]) == [0.25]
    moved, *_ = net.changes()  # sent once
    assert all(len(slots) == 0 for slots, _ in moved)


def test_a_weight_learned_back_to_its_value_before_a_reset_is_sent(index):
    # The replica resets too, so the weight it holds after the reset is the reset's, not the
    # one sent before it.
    net = ValueNetwork(ModelConfig(min_count=1), index)
    net.keep_changes()
    net.w[3] = 0.5  # a game-feature weight: every reset zeroes it
    net.changes()
    net.reset()
    net.w[3] = 0.5
    (_, _, (slots, values)), *_ = net.changes()
    assert list(slots) == [3] and list(values) == [0.5]
