"""The learnable toy task: one manual sentence ("Settlers irrigate grassland quickly.") names the
only rewarded action; online learning should raise that sentence's relevance.

With the release's update rule the effect is real but noisy per seed (one seed in five puts a
distractor first), so the test averages the learned relevance over five seeds."""

import numpy as np
from toy_game import make_manual

from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.learner import update
from nlmcs.model.network import ValueNetwork


def test_relevance_of_the_predictive_sentence_rises():
    index = ManualIndex.build(make_manual(), min_count=1)
    target = Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",))
    learned = []
    for seed in range(5):
        cfg = ModelConfig(kind="text", min_count=1, alpha=0.05, l2=0.0, passes=1)
        net = ValueNetwork(cfg, index)
        rng = np.random.default_rng(seed)
        for _ in range(2000):
            act = ("irrigate", "mine", "wait")[int(rng.integers(3))]
            sig = Signature(("settlers",), (act,), act, ("grassland",))
            update(net, [net.sample(sig, rng)], 1.0 if act == "irrigate" else 0.0)
        ids, p = net.relevance(target)
        assert ids.tolist() == [0, 1, 2, 3, 4, -1]
        assert net.expected_q([target])[0] > 0.8
        learned.append(p)
    mean = np.mean(learned, axis=0)
    chance = 1.0 / len(mean)
    assert mean[0] > 1.4 * chance
    assert mean[0] > mean[1:].max()
