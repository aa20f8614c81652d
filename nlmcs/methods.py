"""Planners by name: the methods an experiment compares, all on the same roll-out loop.

`METHODS` is the one table of method names; `make_planner(name, game=..., ...)` builds any of
them. Methods of Branavan et al. (2011): `uct` (a tree per agent), `linear` (Q = w . x),
`nonlinear` (10 latent states in place of sentences, no text), `relevance-only` (no predicate
layer), `text` (the full model) and `random-text` (the full model on the manual's word-permuted
twin). Corpus methods (Dobre & Lascarides 2015, 2017; Ontañón 2016): `flat-ucb` (a bandit per agent
at the root), and `uct-corpus` / `flat-ucb-corpus`, the same planners informed by corpus priors.
`text-corpus` joins the two: the text model's MC search with its root choices biased by the corpus
policy (`nlmcs.search.mc_rollouts`).

For the rule variants of the civ game (`nlmcs.games.civ.variants`): `text-mismatched` reads the
manual with another game's rule sentence, and the scripted arms `oracle` / `oracle-blind` play the
built-in AI with / without knowing the rule (`nlmcs.search.scripted`).

The AlphaZero line (`nlmcs.net`): `puct-net` is PUCT with a policy/value network's priors and a
short roll-out scored by its value; `uct-net-prior` keeps full roll-outs and takes only the
network's priors.

Everything heavy (the model, the manual, scikit-learn for the naive-Bayes prior) is imported only
when a planner that needs it is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option
from nlmcs.model.config import ModelConfig, ModelKind
from nlmcs.search.config import SearchConfig

if TYPE_CHECKING:
    from manual_pipeline.store import StoredManual
    from nlmcs.games.base import Game
    from nlmcs.search.planner import Planner


@dataclass(frozen=True)
class Method:
    """What a method name means."""

    name: str
    summary: str
    planner: Literal["mc", "uct", "flat-ucb", "script"]
    model: ModelKind | None = None
    """The value network's kind (MC methods only)."""
    reads: Literal["nothing", "manual", "random-twin", "unrelated", "mismatched"] = "nothing"
    """Which text the model reads: none, the manual, its word-permuted twin, unrelated prose of
    the manual's length, or (variant games) the manual stating another game's rule."""
    corpus: bool = False
    """Seeded by corpus priors (and, when asked, corpus-informed roll-outs)."""
    text_prior: bool = False
    """Steered by the text reader's prior (`nlmcs.reader`) over the text `reads` names: PUCT's
    policy in the trees, the root bias of the MC search."""
    net: Literal["", "policy", "policy-value"] = ""
    """Guided by the policy/value network (`nlmcs.net`): its priors, and with policy-value
    its value at the end of short roll-outs."""
    meaning: bool = False
    """Reads with pretrained word meaning: an MC method's model adds the meaning features of
    relevance (`ModelConfig.meaning`); a tree method is steered by the zero-shot meaning prior
    over the text `reads` names (`nlmcs.reader.meaning`, no training)."""
    script: str = ""
    """A scripted player (`Game.policy` spec) the search leans on: its moves are our side's
    roll-out policy (the MC search's exploring moves), and a tree's PUCT prior."""


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("uct", "a UCT tree per agent, roll-out policy beyond the tree", "uct"),
    Method("q0", "MC search with Q = 0: epsilon-random roll-outs, nothing learned (the control "
           "every learned model must beat)", "mc"),
    Method("linear", "MC search, Q = w . x over action x agent x state labels", "mc",
           model="linear"),
    Method("nonlinear", "MC search, four-layer network with 10 latent states, no text", "mc",
           model="nonlinear"),
    Method("relevance-only", "MC search, sentence relevance over the manual, no predicate labels",
           "mc", model="relevance-only", reads="manual"),
    Method("text", "MC search, the full text model: sentence relevance and word labels", "mc",
           model="text", reads="manual"),
    Method("random-text", "the full text model on the manual's word-permuted twin", "mc",
           model="text", reads="random-twin"),
    Method("unrelated-text", "the full text model on unrelated English prose of the manual's "
           "length in sentences", "mc", model="text", reads="unrelated"),
    Method("text-meaning", "the full text model with pretrained meaning in relevance (the "
           "sentence's cosine with the move and with the situation)", "mc", model="text",
           reads="manual", meaning=True),
    Method("random-text-meaning", "text-meaning on the manual's word-permuted twin", "mc",
           model="text", reads="random-twin", meaning=True),
    Method("unrelated-text-meaning", "text-meaning on the unrelated prose of unrelated-text",
           "mc", model="text", reads="unrelated", meaning=True),
    Method("flat-ucb", "a UCB1 bandit per agent over its root actions", "flat-ucb"),
    Method("uct-corpus", "UCT with children seeded by corpus priors", "uct", corpus=True),
    Method("flat-ucb-corpus", "flat UCB with arms seeded by corpus priors", "flat-ucb",
           corpus=True),
    Method("text-corpus", "the full text model, root choices biased by the corpus policy", "mc",
           model="text", reads="manual", corpus=True),
    Method("text-mismatched", "the full text model on a manual stating another game's rule "
           "(variant games)", "mc", model="text", reads="mismatched"),
    Method("uct-text", "UCT with children seeded by the text reader's prior", "uct",
           reads="manual", text_prior=True),
    Method("uct-random-text", "uct-text reading the manual's word-permuted twin", "uct",
           reads="random-twin", text_prior=True),
    Method("flat-ucb-text", "flat UCB with arms seeded by the text reader's prior", "flat-ucb",
           reads="manual", text_prior=True),
    Method("flat-ucb-random-text", "flat-ucb-text reading the word-permuted twin", "flat-ucb",
           reads="random-twin", text_prior=True),
    Method("uct-text-corpus", "UCT seeded by the text prior and the corpus prior together",
           "uct", reads="manual", corpus=True, text_prior=True),
    Method("uct-random-text-corpus", "uct-text-corpus reading the word-permuted twin", "uct",
           reads="random-twin", corpus=True, text_prior=True),
    Method("uct-text-mismatched", "uct-text on a manual stating another game's rule (variant "
           "games)", "uct", reads="mismatched", text_prior=True),
    Method("uct-meaning", "UCT with children seeded by the zero-shot meaning prior (the "
           "manual's sentences nearest the situation in pretrained meaning advise the moves "
           "near them)", "uct", reads="manual", meaning=True),
    Method("uct-random-meaning", "uct-meaning reading the manual's word-permuted twin", "uct",
           reads="random-twin", meaning=True),
    Method("text-prior", "the full text model, root choices biased by the text reader's prior",
           "mc", model="text", reads="manual", text_prior=True),
    Method("random-text-prior", "text-prior reading the word-permuted twin (model and prior)",
           "mc", model="text", reads="random-twin", text_prior=True),
    Method("puct-net", "PUCT with the policy/value network's priors; roll-outs of "
           "`net_depth` turns scored by its value", "uct", net="policy-value"),
    Method("uct-net-prior", "UCT with the policy/value network's priors, full roll-outs",
           "uct", net="policy"),
    Method("oracle", "the built-in AI knowing the variant game's rule (scripted, no search)",
           "script"),
    Method("oracle-blind", "the built-in AI without the rule (scripted, no search)", "script"),
    Method("howto", "FreeCiv's HOWTOPLAY as a scripted player: many cities, settlers from "
           "every city, workers once the land is taken (scripted, no search)", "script"),
    Method("uct-howto", "UCT on the howto player: its moves are our roll-outs' policy and the "
           "trees' PUCT prior", "uct", script="howto"),
    Method("text-howto", "text with the howto player as its roll-out policy (the paper's "
           "experiment in the real game: text on a competent roll-out policy)", "mc",
           model="text", reads="manual", script="howto"),
    Method("random-text-howto", "text-howto reading the word-permuted twin", "mc",
           model="text", reads="random-twin", script="howto"),
)}  # fmt: skip

VARIANT_METHODS = ("text-mismatched", "uct-text-mismatched")
"""Methods that only mean something in a variant game."""

PAPER_METHODS = ("uct", "linear", "nonlinear", "relevance-only", "text", "random-text")
"""The methods of Branavan et al. (2011) (need no corpus)."""


@dataclass(frozen=True)
class CorpusOptions:
    """How the corpus methods use recorded games."""

    corpus: str | Path | None = None
    """A stored corpus name or directory; None = `corpus.bundle.DEFAULT_CORPUS`."""
    prior: Literal["similarity", "naive-bayes"] = "similarity"
    """similarity: mean relevance x utility of the credited corpus pairs (Dobre & Lascarides
    2015); naive-bayes: the calibrated naive-Bayes probabilities, p / max p (Ontañón 2016)."""
    utility: Literal["one", "result"] = "one"
    """U of the similarity prior: 1, or the recorded player's result (win 1, loss 0)."""
    pool_size: int = option(256, low=1)
    """Nearest corpus states pooled per similarity query."""
    type_weight: float = option(0.0, low=0.0, high=1.0)
    """Weight of 'same action type' in the action similarity (0 = the paper's formula)."""
    rollout_policy: Literal["default", "naive-bayes"] = "default"
    """default: `SearchConfig.rollout`; naive-bayes: sample roll-out moves from the model."""
    type_weights_from_corpus: bool = True
    """With typed roll-outs and no weights given, weigh action types by corpus frequency
    (Dobre & Lascarides 2017)."""

    def __post_init__(self) -> None:
        check_fields(self, "corpus option")


@dataclass(frozen=True)
class ReaderOptions:
    """Which trained reader (`nlmcs reader train`) the text-prior methods read with."""

    reader: str | None = None
    """Reader file for methods reading the manual; none: the untrained default weights."""
    twin_reader: str | None = None
    """Reader file for methods reading the word-permuted twin (a reader trained on a twin of
    the same manual); none: the untrained default weights."""

    def __post_init__(self) -> None:
        check_fields(self, "reader option")

    def path(self, reads: str) -> str | None:
        return self.twin_reader if reads == "random-twin" else self.reader


@dataclass(frozen=True)
class NetOptions:
    """Which policy/value network (`nlmcs net train`) the network methods play with."""

    net: str | None = None
    """Network checkpoint; none: the one shipped for the game at its horizon (`data/nets`)."""
    net_depth: int = option(3, low=1)
    """puct-net: turns a roll-out plays before its last state is scored (3 and the value
    weight 0.5 were chosen on tuning block 5151, results/net/PLAN.md)."""
    value_weight: float = option(0.5, low=0.0, high=1.0)
    """puct-net: a leaf's score is this share of the network's value plus the rest of the
    game's reward (the score ratio every roll-out ends with), as AlphaGo mixed its value and
    roll-outs."""

    def __post_init__(self) -> None:
        check_fields(self, "network option")


def _same_method(want: Method) -> str | None:
    """The method that is `want` in every field but its name and summary, if any."""
    key = dataclasses.replace(want, name="", summary="")
    return next((m.name for m in METHODS.values()
                 if dataclasses.replace(m, name="", summary="") == key), None)


def text_controls(name: str) -> tuple[list[str], str] | None:
    """The controls of a method that reads the manual, for the semantic share: the methods that
    differ from it only in reading the word twin or unrelated prose, and the one that reads
    nothing (the same planner, corpus and network, without text or meaning; an MC text model
    becomes `nonlinear`). None for a method that reads no manual or has no such arm."""
    method = METHODS.get(name)
    if method is None or method.reads != "manual":
        return None
    controls = [c for reads in ("random-twin", "unrelated")
                if (c := _same_method(dataclasses.replace(method, reads=reads))) is not None]
    none = _same_method(dataclasses.replace(
        method, reads="nothing", text_prior=False, meaning=False,
        model="nonlinear" if method.planner == "mc" else method.model))
    return (controls, none) if controls and none is not None else None


def method_names() -> list[str]:
    return list(METHODS)


def get_method(name: str) -> Method:
    if name not in METHODS:
        raise UserInputError(f"unknown method {name!r}; choose from {', '.join(METHODS)}")
    return METHODS[name]


def make_planner(
    name: str,
    *,
    game: Game,
    manual: str | Path | StoredManual | None = None,
    corpus: CorpusOptions | None = None,
    search_config: SearchConfig | None = None,
    model_config: ModelConfig | None = None,
    seed: int = 0,
    reader: ReaderOptions | None = None,
    net: NetOptions | None = None,
) -> Planner:
    """The planner of method `name`. `manual` is read by the text methods (default: the
    shipped guide), `corpus` by the corpus methods, `reader` by the text-prior methods; other
    methods ignore them; `net` is read by the network methods."""
    method = get_method(name)
    search_config = search_config or SearchConfig()
    prior = policy = None
    # The MC search biases Q by a policy; the trees take what their prior mode asks for.
    kind = "value" if method.planner != "mc" and search_config.prior_mode == "visits" \
        else "policy"
    if method.corpus:
        prior, search_config, policy = _corpus_parts(game, search_config,
                                                     corpus or CorpusOptions(), seed, kind)
    if method.meaning and method.planner != "mc":
        from nlmcs.reader.meaning import make_meaning_prior
        from nlmcs.search.tree import ProductPrior

        meaning = make_meaning_prior(method_text(name, manual), kind)
        prior = meaning if prior is None else ProductPrior((prior, meaning), kind,
                                                           search_config.prior_floor)
    if method.text_prior:
        from nlmcs.reader.prior import make_text_prior
        from nlmcs.search.tree import ProductPrior

        text = method_text(name, manual)
        text_prior = make_text_prior(text, game, (reader or ReaderOptions()).path(method.reads),
                                     kind)
        prior = text_prior if prior is None else ProductPrior(
            (prior, text_prior), kind, search_config.prior_floor)
    leaf = None
    if method.net:
        from nlmcs.net.guide import MixedLeaf, load_guide

        options = net or NetOptions()
        guide = load_guide(options.net, game)
        prior = guide
        if method.net == "policy-value":
            leaf = MixedLeaf(guide, options.value_weight, search_config)
            search_config = dataclasses.replace(search_config, depth=options.net_depth,
                                                prior_mode="puct")
    if method.script:
        from nlmcs.search.policies import ScriptedPrior, ScriptedRollout

        policy = ScriptedRollout(game.policy(method.script))
        if method.planner != "mc":  # a tree also takes the script's moves as its prior
            prior = ScriptedPrior(game.policy(method.script), seed)
            search_config = dataclasses.replace(search_config, prior_mode="puct")
    if method.planner == "script":
        from nlmcs.search.scripted import ScriptedPlanner

        return ScriptedPlanner(game=game, script={"oracle": "oracle", "oracle-blind": "blind",
                                                   "howto": "howto"}[name])
    if method.planner == "mc":
        return _mc_planner(method, game=game, manual=manual, search_config=search_config,
                           model_config=model_config or ModelConfig(), seed=seed, prior=prior,
                           rollout_policy=policy)
    if method.planner == "uct":
        from nlmcs.search.uct import UCTPlanner

        return UCTPlanner(game=game, config=search_config, seed=seed, prior=prior,
                          rollout_policy=policy, leaf=leaf)
    from nlmcs.search.flat_ucb import FlatUCBPlanner

    return FlatUCBPlanner(game=game, config=search_config, seed=seed, prior=prior,
                          rollout_policy=policy)


def method_text(name: str, manual, *, game=None, seed: int = 0, twin_seed: int | None = None):
    """The one rule for what method `name` reads of `manual` (a name, directory or parsed
    manual): None for a method that reads nothing; in a variant game of `seed` the manual
    stating that game's rule (or another game's, for text-mismatched), or its twin
    (`variant_manuals.text_for_game`); else the manual itself, its word-permuted twin (shuffled
    with `twin_seed`, else the stored twin) or its unrelated control (`manuals.text_read`).
    Without `game`, `manual` is taken to be the game's own text already (what an ablation job
    carries), and a text is what it reads of itself: a twin is its own twin, a control its own
    control."""
    from nlmcs.model.manuals import resolve_manual, text_read

    reads = get_method(name).reads
    if reads == "nothing":
        return None
    variant = getattr(getattr(game, "config", None), "variant", "")
    if game is not None and (variant or reads == "mismatched"):
        from nlmcs.model.variant_manuals import text_for_game

        return text_for_game(manual, game, seed, reads, twin_seed=twin_seed)
    if game is None and reads == "mismatched":
        return manual
    return resolve_manual(text_read(manual, reads, twin_seed=twin_seed))


def opponent_policy(game, spec: str):
    """The player `spec` names: a network (`net`, `net:FILE`, `nlmcs.net.opponent`) or what the
    game itself knows (`Game.policy`: builtin[:level], random, greedy)."""
    from nlmcs.net.opponent import NetPolicy, is_net_spec

    return NetPolicy(game, spec) if is_net_spec(spec) else game.policy(spec)


def rollout_opponent(spec: str) -> str:
    """Who plays the opponents inside roll-outs when the real opponent is `spec`: itself, except
    a network, which roll-outs model by the built-in AI (a forward pass per simulated turn
    would cost more than the search it informs)."""
    from nlmcs.net.opponent import is_net_spec

    return "builtin" if is_net_spec(spec) else spec


def method_model(name: str, model: ModelConfig) -> ModelConfig:
    """The model setting method `name` plays with: its network kind, and meaning where the
    method reads with it (what logs and stored rows record)."""
    method = get_method(name)
    if method.model is None:
        return model
    return dataclasses.replace(model, kind=method.model, meaning=model.meaning or method.meaning)


def _mc_planner(method: Method, *, game, manual, search_config, model_config, seed, prior,
                rollout_policy):
    from nlmcs.model.evaluator import NetworkEvaluator
    from nlmcs.model.manuals import load_index
    from nlmcs.model.network import ValueNetwork
    from nlmcs.search.mc import MCPlanner

    if method.model is None:
        from nlmcs.search.evaluator import ConstantEvaluator

        return MCPlanner(game=game, evaluator=ConstantEvaluator(), config=search_config,
                         seed=seed, prior=prior, rollout_policy=rollout_policy)
    config = method_model(method.name, model_config)
    index = None
    if method.reads != "nothing":
        # A variant ablation hands each game its own manual (already the twin or the
        # mismatched one); elsewhere random-text makes its twin here (a twin is its own twin,
        # an unrelated control its own control).
        index = load_index(method_text(method.name, manual), min_count=config.min_count,
                           meaning=config.meaning)
    evaluator = NetworkEvaluator(ValueNetwork(config, index))
    return MCPlanner(game=game, evaluator=evaluator, config=search_config, seed=seed,
                     prior=prior, rollout_policy=rollout_policy)


def _corpus_parts(game, search_config: SearchConfig, options: CorpusOptions, seed: int,
                  kind: Literal["value", "policy"]):
    """(prior of `kind`, search config with corpus type weights filled in, roll-out policy or
    None)."""
    from corpus.bundle import check_compatible, corpus_bundle
    from corpus.live import CorpusPrior, NaiveBayesPrior, NaiveBayesRollout, type_weights
    from corpus.similarity import SimilarityConfig

    bundle = corpus_bundle(options.corpus)
    check_compatible(bundle.corpus, game)
    if options.prior == "similarity":
        # The index's k-means seed stays fixed: one index per process serves every game.
        similarity = bundle.similarity(SimilarityConfig(
            utility=options.utility, pool_size=options.pool_size,
            type_weight=options.type_weight))
        prior = CorpusPrior(similarity, kind=kind, seed=seed)
    else:
        prior = NaiveBayesPrior(bundle.naive_bayes(), kind=kind)
    if (search_config.rollout == "typed" and search_config.type_weights is None
            and options.type_weights_from_corpus):
        search_config = dataclasses.replace(search_config,
                                            type_weights=type_weights(bundle.corpus))
    policy = None
    if options.rollout_policy == "naive-bayes":
        policy = NaiveBayesRollout(bundle.naive_bayes())
    return prior, search_config, policy
