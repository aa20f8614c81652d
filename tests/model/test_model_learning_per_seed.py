"""Per seed, not on average: with the `expected` hidden-layer rule, the toy manual's one
predictive sentence ("Settlers irrigate grassland quickly.") becomes the settlers' most relevant
sentence on every one of five seeds, while no sentence of its random-text twin does so.

The release rule does not pass this (the predictive sentence comes first on one seed in five;
tests/model/test_model_learning.py checks its weaker, averaged effect)."""

import dataclasses

import numpy as np
import pytest
from toy_game import make_manual

from manual_pipeline.shuffle import shuffle_tokens
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.learner import update
from nlmcs.model.network import ValueNetwork

TARGET = Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",))
SEEDS = range(5)
THRESHOLD = 1.6  # times the uniform relevance


def learned_relevance(manual, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Relevance over the settlers' candidates (ids, -1 = NULL) after 2,000 single-datapoint
    updates where only irrigating is rewarded."""
    cfg = ModelConfig(kind="text", min_count=1, alpha=0.05, l2=0.0, passes=1,
                      hidden_update="expected", hidden_alpha=0.1)
    net = ValueNetwork(cfg, ManualIndex.build(manual, min_count=1))
    rng = np.random.default_rng(seed)
    for _ in range(2000):
        act = ("irrigate", "mine", "wait")[int(rng.integers(3))]
        sig = Signature(("settlers",), (act,), act, ("grassland",))
        update(net, [net.sample(sig, rng)], 1.0 if act == "irrigate" else 0.0)
    return net.relevance(TARGET)


@pytest.fixture(scope="module")
def real():
    return [learned_relevance(make_manual(), seed) for seed in SEEDS]


@pytest.fixture(scope="module")
def twin():
    manual = make_manual(name="toy-random")
    manual = dataclasses.replace(manual, tokens=shuffle_tokens(manual.tokens, seed=0))
    return [learned_relevance(manual, seed) for seed in SEEDS]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_predictive_sentence_comes_first_on_every_seed(real, seed):
    ids, p = real[seed]
    assert ids.tolist() == [0, 1, 2, 3, 4, -1]
    assert int(np.argmax(p)) == 0
    assert p[0] >= THRESHOLD / len(p)
    assert p[-1] < 1.0 / len(p)  # the NULL sentence does not absorb the credit


def test_no_sentence_of_the_random_twin_comes_first_on_every_seed(twin):
    ids = twin[0][0]
    assert all(np.array_equal(i, ids) for i, _ in twin)
    p = np.array([p for _, p in twin])  # (seeds, candidates)
    assert len(set(np.argmax(p, axis=1).tolist())) > 1
    assert (p[:, :-1].min(axis=0) < THRESHOLD / p.shape[1]).all()
