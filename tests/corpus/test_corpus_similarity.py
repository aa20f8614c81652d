import numpy as np
import pytest

from corpus.similarity import CorpusSimilarity, SimilarityConfig, StateIndex, _unit_rows


def _cos(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb))


def _corpus(n=300, f=8, seed=0, labels=None):
    rng = np.random.default_rng(seed)
    states = rng.uniform(0, 4, size=(n, f)).astype(np.float32)
    actions = rng.normal(size=(n, f)).astype(np.float32)
    labels = np.array(labels if labels is not None else ["settlers"] * n)
    return states, actions, labels, rng


def _brute_force(sim, state, diffs, utility):
    """Eqs. 3-5 written out loop by loop over the whole corpus (pool = everything)."""
    s = state / sim.state_scale
    m = len(diffs)
    total, count = np.zeros(m), np.zeros(m)
    for j in range(len(sim.rows)):
        s_corp = sim.s_units[j]
        a_corp = sim.a_units[j]
        rel = []
        for d in diffs:
            a = np.append(d / sim.action_scale, 0.0)
            rel.append((_cos(s, s_corp) + _cos(a, a_corp)) / 2)
        i = int(np.argmax(rel))
        total[i] += rel[i] * utility[j]
        count[i] += 1
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, total / count, np.nan), count


@pytest.mark.parametrize("utility", ["one", "result"])
def test_prior_matches_the_formula(utility):
    states, actions, labels, rng = _corpus()
    result = rng.choice([0.0, 0.5, 1.0], size=len(states))
    cfg = SimilarityConfig(pool_size=10_000, utility=utility, index="exact")
    sim = CorpusSimilarity(states, actions, action_types=np.array(["move"] * len(states)),
                           agent_labels=labels, utility=result, config=cfg)
    state = rng.uniform(0, 4, size=8)
    diffs = rng.normal(size=(4, 8))
    credit = sim.credit(state, diffs, agent_label="settlers")
    u = result if utility == "result" else np.ones(len(states))
    want, count = _brute_force(sim, state, diffs, u)
    np.testing.assert_allclose(credit.prior, want, atol=1e-5)
    np.testing.assert_array_equal(credit.count, count)
    assert credit.count.sum() == len(states)  # each pair credited exactly once
    assert sum(len(p) for p in credit.pairs) == len(states)


def test_identical_pair_has_relevance_one_and_goes_to_its_action():
    states, actions, labels, _ = _corpus(n=50)
    sim = CorpusSimilarity(states, actions, action_types=np.array(["x"] * 50),
                           agent_labels=labels, utility=np.ones(50),
                           config=SimilarityConfig(pool_size=5, index="exact"))
    target = 17
    diffs = np.stack([-actions[target], actions[target]])
    credit = sim.credit(states[target], diffs, agent_label="settlers")
    assert credit.pairs[1][0] == target
    assert credit.relevance[1][0] == pytest.approx(1.0, abs=1e-5)


def test_pool_is_limited_to_the_agent_word():
    labels = ["settlers"] * 30 + ["warriors"] * 30
    states, actions, labels, rng = _corpus(n=60, labels=labels)
    sim = CorpusSimilarity(states, actions, action_types=np.array(["x"] * 60),
                           agent_labels=labels, utility=np.ones(60),
                           config=SimilarityConfig(pool_size=100))
    credit = sim.credit(states[0], rng.normal(size=(3, 8)), agent_label="warriors")
    got = np.concatenate(credit.pairs)
    assert len(got) == 30 and got.min() >= 30
    none = sim.credit(states[0], rng.normal(size=(3, 8)), agent_label="catapult")
    assert np.isnan(none.prior).all() and none.count.sum() == 0


def test_no_change_actions_match_each_other():
    states, actions, labels, _ = _corpus(n=20)
    actions[:10] = 0.0  # e.g. "fortify": nothing the state vector measures changes
    sim = CorpusSimilarity(states, actions, action_types=np.array(["x"] * 20),
                           agent_labels=labels, utility=np.ones(20),
                           config=SimilarityConfig(pool_size=20))
    credit = sim.credit(states[0], np.stack([np.zeros(8), actions[15]]), agent_label="settlers")
    assert set(credit.pairs[0]) >= set(range(10))


def test_refused_actions_are_left_out():
    states, actions, labels, _ = _corpus(n=20)
    applied = np.arange(20) % 2 == 0
    sim = CorpusSimilarity(states, actions, action_types=np.array(["x"] * 20),
                           agent_labels=labels, utility=np.ones(20), applied=applied)
    credit = sim.credit(states[0], actions[:2], agent_label="settlers")
    assert all(p % 2 == 0 for p in np.concatenate(credit.pairs))


def test_ivf_index_finds_the_exact_neighbours():
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 1, size=(40, 16))
    rows = centres[rng.integers(40, size=20_000)] + rng.normal(scale=0.05, size=(20_000, 16))
    units = _unit_rows(rows.astype(np.float32))
    exact = StateIndex(units, kind="exact", n_lists=None, n_probe=1, iters=0, seed=0)
    ivf = StateIndex(units, kind="ivf", n_lists=100, n_probe=10, iters=5, seed=0)
    recalls = []
    for q in units[rng.choice(20_000, size=20, replace=False)]:
        want, want_sims = exact.search(q, 50)
        got, got_sims = ivf.search(q, 50)
        assert np.all(np.diff(got_sims) <= 1e-6)  # best first
        recalls.append(len(set(want) & set(got)) / 50)
    assert np.mean(recalls) >= 0.9
    assert sorted(ivf.members.tolist()) == list(range(20_000))


def test_type_weight_rewards_same_type():
    states, actions, labels, _ = _corpus(n=40)
    types = np.array(["irrigate"] * 20 + ["mine"] * 20)
    sim = CorpusSimilarity(states, actions, action_types=types, agent_labels=labels,
                           utility=np.ones(40), config=SimilarityConfig(type_weight=0.9))
    diff = np.zeros((2, 8))
    diff[:, 0] = 1.0
    credit = sim.credit(states[0], diff, agent_label="settlers", types=["irrigate", "mine"])
    assert set(credit.pairs[0]) == set(range(20)) and set(credit.pairs[1]) == set(range(20, 40))


def test_support_sums_relevance_and_splits_ties():
    states, actions, labels, rng = _corpus(n=200, seed=3)
    sim = CorpusSimilarity(states, actions, action_types=np.array(["move"] * 200),
                           agent_labels=labels, utility=np.ones(200),
                           config=SimilarityConfig(pool_size=50, index="exact"))
    diffs = rng.normal(size=(3, 8))
    diffs = np.vstack([diffs, diffs[:1]])  # candidate 3 has candidate 0's effect
    credit = sim.credit(states[0], diffs, agent_label="settlers")
    # The paper's mean credits a tied pair to the first candidate; support splits it.
    assert credit.count[3] == 0 and credit.count[0] > 0
    assert credit.support[0] == pytest.approx(credit.support[3]) and credit.support[0] > 0
    total = sum(float(r.sum()) for r in credit.relevance)  # every pooled pair's R x U, once
    assert credit.support.sum() == pytest.approx(total, rel=1e-5)
    np.testing.assert_allclose(credit.support[1:3], [r.sum() for r in credit.relevance[1:3]],
                               rtol=1e-5)
