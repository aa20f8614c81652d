"""Search methods informed by a recorded-game corpus (Dobre & Lascarides 2015, 2017; Ontañón 2016).

- `uct-corpus`: UCT whose new nodes' children are seeded from the corpus: a child whose action some
  corpus pair was credited to starts with n = `prior_visits` (10) virtual visits and mean = its
  corpus prior; children the corpus says nothing about start empty, as in the paper.
- `flat-ucb`: the paper's flat bandit: at the root, one UCB1 bandit per agent over its actions;
  every later move of a roll-out comes from the roll-out policy. The real move is each agent's
  action of highest mean.
- `flat-ucb-corpus`: the same bandits seeded from the corpus.

Extras accepted by these factories (through `make_planner(..., **extras)`):
  corpus: name, directory or `StoredCorpus` (default `DEFAULT_CORPUS`);
  similarity: a `SimilarityConfig`; utility: "one" | "result" (shortcut into it);
  prior: "similarity" (default) | "naive-bayes" (the calibrated naive-Bayes model; its candidate
  probabilities p become means p / max p); prior_visits: int;
  rollout_policy: "default" (the `SearchConfig.rollout` choice) | "naive-bayes";
  corpus_type_weights: bool (default True): when `SearchConfig.rollout == "typed"` and no weights
  are given, weigh action types by their frequency in the corpus (Dobre & Lascarides 2017).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from functools import lru_cache

import numpy as np

from corpus.live import (
    CorpusPrior,
    NaiveBayesRollout,
    agent_owner,
    agent_word,
    corpus_similarity,
    type_weights,
)
from corpus.mine import action_key
from corpus.naive_bayes import NaiveBayesActionModel, NaiveBayesConfig
from corpus.similarity import SimilarityConfig
from corpus.store import StoredCorpus, corpus_dir, load_corpus
from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, AgentId, State
from nlmcs.search.config import SearchConfig
from nlmcs.search.mc import rollout_rng
from nlmcs.search.methods import register_method
from nlmcs.search.policies import make_rollout_policy, reward
from nlmcs.search.uct import Node, UCTPlanner, decision_record, step_stats, ucb1

DEFAULT_CORPUS = "civ-builtin"


class CorpusBundle:
    """A loaded corpus with its similarity indexes and naive-Bayes model, built on first use."""

    def __init__(self, corpus: StoredCorpus) -> None:
        self.corpus = corpus
        self._similarity: dict[SimilarityConfig, object] = {}
        self._naive_bayes: NaiveBayesActionModel | None = None

    def similarity(self, config: SimilarityConfig):
        if config not in self._similarity:
            sim = corpus_similarity(self.corpus, config)
            sim.build()
            self._similarity[config] = sim
        return self._similarity[config]

    def naive_bayes(self) -> NaiveBayesActionModel:
        if self._naive_bayes is None:
            table = self.corpus.decisions
            applied = table["applied"].to_numpy()
            self._naive_bayes = NaiveBayesActionModel(NaiveBayesConfig()).fit(
                self.corpus.states[applied], table["agent_label"].to_numpy()[applied],
                table["action_key"].to_numpy()[applied])
        return self._naive_bayes


@lru_cache(maxsize=4)
def _bundle_at(directory: str, stamp: float) -> CorpusBundle:
    return CorpusBundle(load_corpus(directory))


def corpus_bundle(corpus) -> CorpusBundle:
    """Bundle for a name, a directory or a `StoredCorpus`; a stored one is loaded once per
    process and version (the mtime of its meta.json), so many games share one index."""
    if isinstance(corpus, StoredCorpus):
        return CorpusBundle(corpus)
    directory = corpus_dir(corpus or DEFAULT_CORPUS)
    meta = directory / "meta.json"
    if not meta.exists():
        raise UserInputError(f"no corpus at {directory}; record one first, e.g. `nlmcs corpus "
                             f"record --games 200 --name {directory.name}`")
    return _bundle_at(str(directory.resolve()), os.stat(meta).st_mtime)


class NaiveBayesPrior:
    """UCT prior from the naive-Bayes model: mean p / max p over the candidates (Ontañón 2016)."""

    def __init__(self, model: NaiveBayesActionModel) -> None:
        self.model = model

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> list[float] | None:
        if not actions:
            return None
        vec = np.asarray(state.state_vector(agent_owner(state, agent)), dtype=np.float32)
        p = self.model.candidate_probabilities(vec, agent_word(state, agent),
                                               [action_key(a.kind, a.arg) for a in actions])
        return [float(v) for v in p / p.max()]


def check_compatible(corpus: StoredCorpus, game) -> None:
    """The corpus's vectors must mean what the live game's do: same game, same feature list."""
    if corpus.meta["game"] != game.name:
        raise UserInputError(f"corpus {corpus.name} holds {corpus.meta['game']!r} games, not "
                             f"{game.name!r}")
    if corpus.feature_names != list(game.state_feature_names()):
        raise UserInputError(f"corpus {corpus.name} was recorded with other state features than "
                             "this game has; record it again with this version of the game")


def corpus_setup(game, search_config: SearchConfig, seed: int, extras: dict, *,
                 with_prior: bool) -> tuple[object | None, SearchConfig, object | None]:
    """(prior, search config with corpus type weights filled in, roll-out policy or None)."""
    wants_nb = extras.get("rollout_policy", "default") == "naive-bayes"
    wants_weights = (search_config.rollout == "typed" and search_config.type_weights is None
                     and extras.get("corpus_type_weights", True))
    prior_kind = extras.get("prior", "similarity")
    if prior_kind not in ("similarity", "naive-bayes"):
        raise UserInputError(f"unknown corpus prior {prior_kind!r} (similarity, naive-bayes)")
    if extras.get("rollout_policy", "default") not in ("default", "naive-bayes"):
        raise UserInputError(f"unknown rollout_policy {extras['rollout_policy']!r}")
    if not (with_prior or wants_nb or wants_weights):
        return None, search_config, None
    bundle = corpus_bundle(extras.get("corpus"))
    check_compatible(bundle.corpus, game)
    prior = None
    if with_prior and prior_kind == "similarity":
        sim_config = extras.get("similarity") or SimilarityConfig(
            utility=extras.get("utility", "one"), seed=seed)
        prior = CorpusPrior(bundle.similarity(sim_config), seed=seed)
    elif with_prior:
        prior = NaiveBayesPrior(bundle.naive_bayes())
    if wants_weights:
        search_config = dataclasses.replace(search_config,
                                            type_weights=type_weights(bundle.corpus))
    policy = NaiveBayesRollout(bundle.naive_bayes()) if wants_nb else None
    return prior, search_config, policy


class CorpusUCTPlanner(UCTPlanner):
    """UCT whose prior may leave some children unseeded (NaN): those start with no visits."""

    def _expand(self, node: Node, state: State, agent: AgentId, actions: list[Action]) -> None:
        node.children = {}
        priors = self.prior(state, agent, actions) if self.prior is not None else None
        for i, a in enumerate(actions):
            value = None if priors is None else priors[i]
            if value is None or math.isnan(value):
                node.children[a] = Node()
            else:
                node.children[a] = Node(self.prior_visits, value * self.prior_visits)


class FlatUCBPlanner:
    """Flat UCB (Dobre & Lascarides 2015): a UCB1 bandit per agent over its root actions only."""

    def __init__(self, *, game, config: SearchConfig, seed: int, prior=None,
                 prior_visits: int | None = None, rollout_policy=None) -> None:
        self.game = game
        self.config = config
        self.seed = int(seed)
        self.prior = prior
        self.prior_visits = config.prior_visits if prior_visits is None else prior_visits
        self.random_policy = rollout_policy or make_rollout_policy(config.rollout,
                                                                   config.type_weights)
        self._opponents: dict[int, object] = {}
        self.step = 0
        self.last_log: list[dict] = []
        self.last_stats: dict = {}

    def _opponent(self, p: int):
        if p not in self._opponents:
            self._opponents[p] = self.game.policy(self.config.opponent)
        return self._opponents[p]

    def _arms(self, state: State, agent: AgentId) -> dict[Action, Node]:
        actions = state.legal_actions(agent)
        priors = self.prior(state, agent, actions) if self.prior is not None else None
        arms = {}
        for i, a in enumerate(actions):
            value = None if priors is None else priors[i]
            seeded = value is not None and not math.isnan(value)
            arms[a] = Node(self.prior_visits, value * self.prior_visits) if seeded else Node()
        return arms

    def choose(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        cfg = self.config
        t0 = time.perf_counter()
        agents = state.agents(player)
        roots = {a: Node() for a in agents}
        arms = {a: self._arms(state, a) for a in agents}
        for a in agents:
            roots[a].n = sum(c.n for c in arms[a].values())
        rewards = []
        for k in range(cfg.rollouts):
            r_rng = rollout_rng(self.seed, self.step, k)
            sim = state.clone()
            first = {}
            for agent in agents:
                options = list(arms[agent])
                scores = np.array([ucb1(roots[agent], arms[agent][a], cfg.uct_c)
                                   for a in options])
                best = np.flatnonzero(scores >= scores.max())
                first[agent] = options[int(best[int(r_rng.integers(len(best)))])]
            for depth in range(cfg.depth):
                if sim.is_terminal():
                    break
                if depth == 0:
                    joint = first
                else:
                    joint = {a: self.random_policy.choose(sim, a, sim.legal_actions(a), r_rng)
                             for a in sim.agents(player)}
                moves = {p: self._opponent(p).joint_action(sim, p, r_rng)
                         for p in range(sim.num_players) if p != player}
                moves[player] = joint
                sim.apply_joint_actions(moves, r_rng)
            r = reward(sim, player, cfg.reward, cfg.reward_weights)
            rewards.append(r)
            for agent, action in first.items():
                for node in (roots[agent], arms[agent][action]):
                    node.n += 1
                    node.real += 1
                    node.total += r
        move = {}
        for agent in agents:
            tried = {a: c for a, c in arms[agent].items() if c.real > 0} or arms[agent]
            move[agent] = max(tried.items(), key=lambda kv: (kv[1].mean, kv[1].n))[0]
        self.last_stats = step_stats(self.step, t0, rewards)
        if cfg.log_decisions:
            self.last_log = [
                decision_record(self.step, state, player, agent, move[agent], arms[agent])
                for agent in agents
            ]
        self.step += 1
        return move

    def joint_action(self, state: State, player: int, rng) -> dict[AgentId, Action]:
        return self.choose(state, player, rng)

    def close(self) -> None:
        pass


def _uct_corpus(*, game, manual, search_config, model_config, seed, **extras):
    prior, cfg, policy = corpus_setup(game, search_config, seed, extras, with_prior=True)
    planner = CorpusUCTPlanner(game=game, config=cfg, seed=seed, prior=prior,
                               prior_visits=extras.get("prior_visits"))
    if policy is not None:
        planner.random_policy = policy
    return planner


def _flat_ucb(with_prior: bool):
    def factory(*, game, manual, search_config, model_config, seed, **extras):
        prior, cfg, policy = corpus_setup(game, search_config, seed, extras,
                                          with_prior=with_prior)
        return FlatUCBPlanner(game=game, config=cfg, seed=seed, prior=prior,
                              prior_visits=extras.get("prior_visits"), rollout_policy=policy)

    return factory


register_method("uct-corpus", _uct_corpus)
register_method("flat-ucb", _flat_ucb(False))
register_method("flat-ucb-corpus", _flat_ucb(True))
