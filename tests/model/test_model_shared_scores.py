"""The E[Q] table roll-out workers share (`nlmcs.model.shared_scores`)."""

from __future__ import annotations

import multiprocessing as mp

import pytest
from toy_game import make_manual, same_random_weights

from nlmcs.model import shared_scores
from nlmcs.model.config import ModelConfig
from nlmcs.model.evaluator import NetworkEvaluator
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.network import ValueNetwork
from nlmcs.model.shared_scores import SharedScores, signature_key

SIGS = [
    Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",)),
    Signature(("settlers",), ("mine",), "mine", ("hills", "river")),
    Signature(("warriors",), ("wait",), "wait", ("grassland",)),
]
CTX = mp.get_context("spawn")


def test_a_value_is_read_by_the_other_workers_only_for_its_key_and_snapshot():
    memory = shared_scores.allocate(CTX, 3, capacity=64)
    a, b, c = (SharedScores(memory, w, 3) for w in range(3))
    key = signature_key(SIGS[0])
    low, high = key
    a.put(key, 7, 0.25)
    assert b.get(key, 7) == 0.25 and c.get(key, 7) == 0.25
    assert a.get(key, 7) is None  # a worker has its own values already
    assert b.get(key, 8) is None  # another weight snapshot
    assert b.get((low, high + 1), 7) is None  # the key's other word differs
    other = (low + 64, high)  # the same slot, another key
    assert b.get(other, 7) is None
    a.put(other, 7, 0.5)  # a collision replaces the slot's value
    assert b.get(key, 7) is None and b.get(other, 7) == 0.5
    a.meta[4 * (low & 63)] += 1  # a write in progress (odd version) is not read
    assert b.get(other, 7) is None


def test_signature_keys_do_not_depend_on_the_process():
    # Python's str hash changes with every process; the keys must not.
    assert signature_key(SIGS[0]) == signature_key(Signature(*SIGS[0]))
    assert len({signature_key(s) for s in SIGS}) == len(SIGS)
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        assert pool.map(signature_key, SIGS) == [signature_key(s) for s in SIGS]


@pytest.mark.skipif(not shared_scores.available(), reason="workers share scores on x86-64 only")
@pytest.mark.parametrize("kind", ["text", "relevance-only", "nonlinear", "linear"])
def test_a_worker_reads_what_another_computed_under_the_same_weights(kind):
    index = ManualIndex.build(make_manual(), min_count=1)
    nets = [ValueNetwork(ModelConfig(min_count=1, kind=kind), index if kind != "linear" else None)
            for _ in range(3)]
    same_random_weights(nets)
    first, second, alone = nets
    memory = shared_scores.allocate(CTX, 2)
    NetworkEvaluator(first).share_scores(memory, 0, 2)
    NetworkEvaluator(second).share_scores(memory, 1, 2)
    q_first = first.expected_q(SIGS)
    q_second = second.expected_q(SIGS)
    assert len(second.cache.known) == len(SIGS) and not second.cache.scores  # none computed
    second.expected_q(SIGS)  # asked again: from the values it took
    assert len(second.cache.known) == len(SIGS) and not second.cache.scores
    assert q_second.tolist() == q_first.tolist() == alone.expected_q(SIGS).tolist()
    second.w[:] += 0.1  # new weights: the other worker's values are of older ones
    second.weights_changed()
    assert second.expected_q(SIGS).tolist() != q_first.tolist()
    assert len(second.cache.scores) == len(SIGS)


def test_only_the_text_kinds_share():
    index = ManualIndex.build(make_manual(), min_count=1)
    for kind in ("text", "relevance-only", "nonlinear", "linear"):
        net = ValueNetwork(ModelConfig(min_count=1, kind=kind), index if kind != "linear" else None)
        memory = NetworkEvaluator(net).shared_memory(CTX, 2)
        assert (memory is not None) == (kind in ("text", "relevance-only")
                                         and shared_scores.available())
