"""Planners by name: the methods an experiment compares, all on the same loop and budget.

`make_planner(name, game=..., manual=..., search_config=..., model_config=..., seed=...)`.
Methods of Branavan et al. (2011): `uct` (a tree per agent), `linear` (Q = w . x), `nonlinear`
(10 latent states in place of sentences, no text), `random-text` (full model on the manual's
word-permuted twin `<manual>-random`), `relevance-only` (no predicate layer), `text` (full).
Other modules add methods with `register_method` (the corpus methods live in
`nlmcs.search.corpus_methods`, imported at the bottom when present).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig

DEFAULT_MANUAL = "civ-guide"

_FACTORIES: dict[str, Callable] = {}
METHOD_NAMES: list[str] = []


def register_method(name: str, factory: Callable) -> None:
    """`factory(*, game, manual, search_config, model_config, seed, **extras) -> Planner`."""
    if name not in _FACTORIES:
        METHOD_NAMES.append(name)
    _FACTORIES[name] = factory


def make_planner(
    name: str,
    *,
    game,
    manual=None,
    search_config: SearchConfig | None = None,
    model_config: ModelConfig | None = None,
    seed: int = 0,
    **extras,
):
    if name not in _FACTORIES:
        raise UserInputError(f"unknown method {name!r}; choose from {', '.join(METHOD_NAMES)}")
    return _FACTORIES[name](
        game=game,
        manual=manual,
        search_config=search_config or SearchConfig(),
        model_config=model_config or ModelConfig(),
        seed=seed,
        **extras,
    )


def load_index(manual, *, min_count: int):
    """A `ManualIndex` from a stored manual name, directory or `StoredManual`."""
    from nlmcs.model.features import ManualIndex

    if manual is None or isinstance(manual, str | bytes) or hasattr(manual, "__fspath__"):
        from manual_pipeline.store import load_manual

        manual = load_manual(manual or DEFAULT_MANUAL)
    return ManualIndex.build(manual, min_count=min_count)


def random_twin(manual):
    """The word-permuted twin of a manual given by name, directory or `StoredManual`.

    A name or directory maps to the stored twin (`nlmcs manual shuffle` makes it); a
    `StoredManual` whose twin is not stored beside it is shuffled in memory with seed 0.
    """
    if manual is None or isinstance(manual, str):
        return f"{manual or DEFAULT_MANUAL}-random"
    if not hasattr(manual, "tokens"):
        directory = Path(manual)
        return directory.with_name(directory.name + "-random")
    if manual.name.endswith("-random"):
        return manual
    stored = Path(manual.directory).parent / f"{manual.name}-random"
    if (stored / "meta.json").is_file():
        return stored
    from manual_pipeline.shuffle import shuffle_tokens

    return dataclasses.replace(
        manual, name=manual.name + "-random", tokens=shuffle_tokens(manual.tokens, seed=0)
    )


def _mc_factory(kind: str, *, random_text: bool = False, needs_text: bool = False):
    def factory(*, game, manual, search_config, model_config, seed, **extras):
        from nlmcs.model.network import ValueNetwork
        from nlmcs.search.evaluator import NetworkEvaluator
        from nlmcs.search.mc import MCPlanner

        index = None
        if needs_text:
            if random_text:
                manual = random_twin(manual)
            index = load_index(manual, min_count=model_config.min_count)
        cfg = dataclasses.replace(model_config, kind=kind)
        if cfg.backend == "torch":
            from nlmcs.model.torch_network import TorchValueNetwork

            net = TorchValueNetwork(cfg, index)
        else:
            net = ValueNetwork(cfg, index)
        return MCPlanner(game=game, evaluator=NetworkEvaluator(net), config=search_config,
                         seed=seed)  # fmt: skip

    return factory


def _uct_factory(*, game, manual, search_config, model_config, seed, **extras):
    from nlmcs.search.uct import UCTPlanner

    return UCTPlanner(
        game=game,
        config=search_config,
        seed=seed,
        prior=extras.get("prior"),
        prior_visits=extras.get("prior_visits"),
    )


register_method("uct", _uct_factory)
register_method("linear", _mc_factory("linear"))
register_method("nonlinear", _mc_factory("latent"))
register_method("random-text", _mc_factory("text", random_text=True, needs_text=True))
register_method("relevance-only", _mc_factory("relevance", needs_text=True))
register_method("text", _mc_factory("text", needs_text=True))

if importlib.util.find_spec("nlmcs.search.corpus_methods") is not None:
    importlib.import_module("nlmcs.search.corpus_methods")
