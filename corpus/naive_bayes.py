"""A calibrated naive-Bayes action model trained on the corpus (after Ontañón, CIG 2016).

Ontañón estimates P(a | u, s), the chance that a strong player gives unit u action a, with naive
Bayes over discretised features of the unit's situation, and calibrates it because plain naive
Bayes is overconfident (his exponent 1/(1 + kappa n)). Here: one model per agent word ("settlers",
"city", ...) over the acting player's state vector cut into per-feature quantile bins; the target
is the action key (type plus transferable argument, see `corpus.mine.action_key`); calibration is
scikit-learn's `CalibratedClassifierCV` around `CategoricalNB`. Keys seen too rarely to calibrate
are merged into their action type.

The model informs search through `candidate_probabilities`, a distribution over the live candidate
actions: a roll-out policy samples from it, a tree can use it as a prior."""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.naive_bayes import CategoricalNB

from nlmcs.fields import MAX_SEED, check_fields, option

log = logging.getLogger(__name__)

OTHER = "<other>"


@dataclass(frozen=True)
class NaiveBayesConfig:
    """Model and training options."""

    n_bins: int = option(6, low=2)
    """Quantile bins per state feature."""
    alpha: float = option(1.0, above=0.0)
    """Laplace smoothing of the category counts."""
    calibration: Literal["sigmoid", "isotonic"] = "sigmoid"
    """The `CalibratedClassifierCV` method."""
    cv: int = option(3, low=2)
    """Calibration folds."""
    min_count: int = option(20, low=1)
    """Action keys seen fewer times fold into their action type."""
    max_train: int | None = option(100_000, low=1)
    """Subsample of decisions used for fitting (None: all)."""
    holdout: float = option(0.2, above=0.0, high=0.9)
    """Share of games held out by `evaluate`."""
    seed: int = option(0, low=0, high=MAX_SEED)
    """Seed of the subsample and the held-out games."""

    def __post_init__(self) -> None:
        check_fields(self, "naive Bayes option")


def _type_of(key: str) -> str:
    return key.split(":", 1)[0]


class NaiveBayesActionModel:
    """P(action key | binned state) per agent word, calibrated.

    One model per agent word ("settlers", "city", ...): the action sets of different agents barely
    overlap, and one shared model would leak mass from one agent's actions to another's. Agent
    words with a single recorded class keep that frequency.
    """

    def __init__(self, config: NaiveBayesConfig | None = None) -> None:
        self.config = config or NaiveBayesConfig()

    # --- features -------------------------------------------------------------------------
    def _codes(self, states: np.ndarray) -> np.ndarray:
        states = np.asarray(states, dtype=np.float32)
        cols = [np.searchsorted(edges, states[:, j], side="right")
                for j, edges in enumerate(self.edges)]
        return np.column_stack(cols).astype(np.int64)

    def _target(self, keys: np.ndarray) -> np.ndarray:
        return np.array([self.key_map.get(str(k), self.key_map.get(_type_of(str(k)), OTHER))
                         for k in keys])

    # --- training -------------------------------------------------------------------------
    def fit(self, states: np.ndarray, agent_labels: np.ndarray, keys: np.ndarray
            ) -> NaiveBayesActionModel:
        cfg = self.config
        rng = np.random.default_rng(cfg.seed)
        states, agent_labels, keys = np.asarray(states), np.asarray(agent_labels), np.asarray(keys)
        if cfg.max_train is not None and len(states) > cfg.max_train:
            pick = rng.choice(len(states), size=cfg.max_train, replace=False)
            states, agent_labels, keys = states[pick], agent_labels[pick], keys[pick]
        qs = np.linspace(0, 1, cfg.n_bins + 1)[1:-1]
        self.edges = [np.unique(np.quantile(states[:, j], qs)) for j in range(states.shape[1])]
        counts = Counter(str(k) for k in keys)
        type_counts: Counter[str] = Counter()
        for k, c in counts.items():
            type_counts[_type_of(k)] += c
        self.key_map = {}
        for k, c in counts.items():
            t = _type_of(k)
            folded = t if type_counts[t] >= cfg.min_count else OTHER
            self.key_map[k] = k if c >= cfg.min_count else folded
            self.key_map.setdefault(t, folded)
        y = self._target(keys)
        self.classes = sorted(set(y.tolist()))
        self.class_index = {c: i for i, c in enumerate(self.classes)}
        x = self._codes(states)
        n_cats = [len(e) + 1 for e in self.edges]
        self.models: dict[str, tuple[CalibratedClassifierCV | None, np.ndarray]] = {}
        self.frequency: dict[str, Counter] = {}
        for label in sorted({str(a) for a in agent_labels}):
            rows = np.flatnonzero(agent_labels == label)
            freq = Counter(y[rows].tolist())
            self.frequency[label] = freq
            fit_rows = rows[np.isin(y[rows], [c for c, m in freq.items() if m >= cfg.cv])]
            fit_classes = sorted(set(y[fit_rows].tolist()))
            if len(fit_classes) < 2:
                self.models[label] = (None, self._freq_vector(freq))
                continue
            model = CalibratedClassifierCV(CategoricalNB(alpha=cfg.alpha, min_categories=n_cats),
                                           method=cfg.calibration, cv=cfg.cv)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(x[fit_rows], y[fit_rows])
            columns = np.array([self.class_index[str(c)] for c in model.classes_])
            self.models[label] = (model, columns)
        log.info("naive Bayes: %d decisions, %d classes, %d agent words", len(y),
                 len(self.classes), len(self.models))
        return self

    def _freq_vector(self, freq: Counter) -> np.ndarray:
        v = np.zeros(len(self.classes))
        for c, m in freq.items():
            v[self.class_index[c]] = m
        return v / v.sum()

    # --- use ------------------------------------------------------------------------------
    def predict_proba(self, states: np.ndarray, agent_labels: np.ndarray) -> np.ndarray:
        """(n, C) probabilities over `self.classes`; uniform for an agent word never seen."""
        states = np.atleast_2d(states)
        agent_labels = np.asarray(agent_labels)
        n_classes = len(self.classes)
        out = np.full((len(states), n_classes), 1.0 / n_classes)
        for label in np.unique(agent_labels):
            if str(label) not in self.models:
                continue
            rows = np.flatnonzero(agent_labels == label)
            model, extra = self.models[str(label)]
            if model is None:
                p = np.tile(extra, (len(rows), 1))
            else:
                p = np.zeros((len(rows), n_classes))
                p[:, extra] = model.predict_proba(self._codes(states[rows]))
            # Blend with uniform as add-one smoothing would: an action never seen for this
            # agent keeps a little mass instead of probability zero.
            seen = sum(self.frequency[str(label)].values())
            lam = n_classes / (seen + n_classes)
            out[rows] = (1 - lam) * p + lam / n_classes
        return out

    def candidate_probabilities(self, state: np.ndarray, agent_label: str,
                                candidate_keys: list[str]) -> np.ndarray:
        """A distribution over live candidates: each class's mass split among its candidates."""
        proba = self.predict_proba(np.asarray(state)[None, :], np.array([agent_label]))[0]
        targets = self._target(np.asarray(candidate_keys))
        share = Counter(targets)
        floor = 1e-3 / max(len(candidate_keys), 1)
        p = np.array([proba[self.class_index[t]] / share[t] if t in self.class_index else 0.0
                      for t in targets]) + floor
        return p / p.sum()

    def evaluate(self, states: np.ndarray, agent_labels: np.ndarray, keys: np.ndarray) -> dict:
        """Accuracy and mean log-likelihood of recorded actions, next to a frequency baseline."""
        y = self._target(keys)
        proba = self.predict_proba(states, agent_labels)
        idx = np.array([self.class_index.get(t, -1) for t in y])
        known = idx >= 0
        p_true = np.where(known, proba[np.arange(len(y)), np.maximum(idx, 0)], 0.0)
        pred = np.array(self.classes)[np.argmax(proba, axis=1)]
        base_p, base_pred = [], []
        for lab, target in zip(agent_labels, y, strict=True):
            freq = self.frequency.get(str(lab)) or Counter()
            total = sum(freq.values())
            base_p.append((freq[target] + 1) / (total + len(self.classes)))
            base_pred.append(freq.most_common(1)[0][0] if freq else "")
        eps = 1e-12
        return {
            "decisions": len(y),
            "classes": len(self.classes),
            "accuracy": float(np.mean(pred == y)),
            "log_likelihood": float(np.mean(np.log(np.maximum(p_true, eps)))),
            "baseline_accuracy": float(np.mean(np.array(base_pred) == y)),
            "baseline_log_likelihood": float(np.mean(np.log(np.maximum(base_p, eps)))),
        }


def split_games(game_ids: np.ndarray, holdout: float, seed: int) -> np.ndarray:
    """Boolean mask of held-out rows: whole games, `holdout` of them, drawn with `seed`."""
    games = np.unique(game_ids)
    rng = np.random.default_rng(seed)
    n_test = max(1, int(round(holdout * len(games)))) if len(games) > 1 else 0
    test = set(rng.choice(games, size=n_test, replace=False).tolist()) if n_test else set()
    return np.array([g in test for g in game_ids])


def train_and_evaluate(corpus, config: NaiveBayesConfig | None = None
                       ) -> tuple[NaiveBayesActionModel, dict]:
    """Fit on the corpus's training games, score on its held-out games, refit on all of it."""
    cfg = config or NaiveBayesConfig()
    table = corpus.decisions
    labels = table["agent_label"].to_numpy()
    keys = table["action_key"].to_numpy()
    test = split_games(table["game_id"].to_numpy(), cfg.holdout, cfg.seed)
    if not test.any() or test.all():
        raise ValueError("held-out evaluation needs at least two games")
    model = NaiveBayesActionModel(cfg).fit(corpus.states[~test], labels[~test], keys[~test])
    report = model.evaluate(corpus.states[test], labels[test], keys[test])
    report["train_decisions"] = int((~test).sum())
    report["heldout_games"] = int(len(np.unique(table["game_id"].to_numpy()[test])))
    final = NaiveBayesActionModel(cfg).fit(corpus.states, labels, keys)
    return final, report
