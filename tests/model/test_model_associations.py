"""The learned word-to-attribute weights that the decision log carries are the predicate weights
of the sampled sentence's action- and state-labelled words, one per game attribute."""

import numpy as np
import pytest
from toy_game import make_manual

from nlmcs.model.associations import attribute_names, word_associations
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import LABELS, ManualIndex, Signature
from nlmcs.model.network import ValueNetwork

SIG = Signature(("settlers",), ("irrigate",), "irrigate", ("grassland", "river"))


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_associations_add_up_to_the_predicate_part_of_q(backend):
    index = ManualIndex.build(make_manual(), min_count=1)
    net = ValueNetwork(ModelConfig(kind="text", min_count=1, grounding_features=False,
                                   backend=backend), index)  # fmt: skip
    rng = np.random.default_rng(0)
    for table in (net.u, net.v, net.w):
        table[:] = rng.normal(0, 0.5, size=table.shape)
    net.weights_changed()
    names = set(attribute_names(SIG))
    seen = 0
    for _ in range(30):
        d = net.sample(SIG, rng)
        uw = net.features(SIG).unit
        if d.y >= len(uw.sentences):
            continue  # NULL: no words
        lo, _ = uw.span(d.y)
        labelled = {(index.stems[uw.words[lo + k]], LABELS[z]) for k, z in enumerate(d.z)
                    if z < 2}
        found = word_associations(net, SIG, y=d.y, z=d.z, top=10_000)
        assert {(w, lab) for w, lab, _, _ in found} == labelled
        assert {a for _, _, a, _ in found} <= names
        sc = net.scores(SIG)
        predicate = d.q - sc.game - sc.lang[d.y]  # Q = game + language + predicate features
        assert sum(weight for *_, weight in found) == pytest.approx(predicate, abs=1e-4)
        top3 = word_associations(net, SIG, y=d.y, z=d.z, top=3)
        assert top3 == found[:3] and [abs(a[3]) for a in top3] == sorted(
            (abs(a[3]) for a in top3), reverse=True)
        seen += 1
    assert seen > 5
