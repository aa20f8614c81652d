import numpy as np
import pytest

from corpus.naive_bayes import NaiveBayesActionModel, NaiveBayesConfig, split_games


def _decisions(n=3000, seed=0):
    """Settlers irrigate when food is low and build cities when it is high; warriors fortify."""
    rng = np.random.default_rng(seed)
    states = rng.uniform(0, 10, size=(n, 4)).astype(np.float32)
    labels = rng.choice(["settlers", "warriors"], size=n)
    keys = np.where(labels == "warriors", "fortify",
                    np.where(states[:, 0] < 5, "irrigate", "build_city")).astype(object)
    noise = rng.random(n) < 0.1
    keys[noise] = rng.choice(["move:north", "move:south"], size=int(noise.sum()))
    return states, labels, keys


def test_learns_a_state_dependent_policy_better_than_frequency():
    states, labels, keys = _decisions()
    model = NaiveBayesActionModel(NaiveBayesConfig(seed=1)).fit(states[:2000], labels[:2000],
                                                               keys[:2000])
    report = model.evaluate(states[2000:], labels[2000:], keys[2000:])
    assert report["accuracy"] > 0.8
    assert report["accuracy"] > report["baseline_accuracy"] + 0.2
    assert report["log_likelihood"] > report["baseline_log_likelihood"]
    probs = model.predict_proba(states[:5], labels[:5])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)


def test_candidate_probabilities_follow_the_state():
    states, labels, keys = _decisions()
    model = NaiveBayesActionModel().fit(states, labels, keys)
    low = np.array([1.0, 5, 5, 5], dtype=np.float32)
    high = np.array([9.0, 5, 5, 5], dtype=np.float32)
    cands = ["irrigate", "build_city", "move:east"]
    p_low = model.candidate_probabilities(low, "settlers", cands)
    p_high = model.candidate_probabilities(high, "settlers", cands)
    assert p_low.sum() == pytest.approx(1.0) and p_high.sum() == pytest.approx(1.0)
    assert p_low[0] > p_low[1] and p_high[1] > p_high[0]
    # an unseen key still gets a little mass (it falls into its type's class "move")
    assert 0 < p_low[2] < p_low[0]


def test_rare_keys_fold_into_their_type():
    states, labels, keys = _decisions()
    keys[:3] = "build:granary"
    keys[3:30] = "build:warriors"
    model = NaiveBayesActionModel(NaiveBayesConfig(min_count=20)).fit(states, labels, keys)
    assert "build:warriors" in model.classes and "build:granary" not in model.classes


def test_split_holds_out_whole_games():
    ids = np.repeat(np.arange(10), 5)
    mask = split_games(ids, 0.2, seed=3)
    held = set(ids[mask])
    assert len(held) == 2 and not held & set(ids[~mask])
