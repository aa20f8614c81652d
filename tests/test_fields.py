"""The configs check themselves: a library caller gets the command line's checks, one
`UserInputError` line naming the field, for every Literal, range, NaN and bool-for-int."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from corpus.naive_bayes import NaiveBayesConfig
from corpus.similarity import SimilarityConfig
from manual_pipeline.parse import ParseConfig
from nlmcs.errors import UserInputError
from nlmcs.experiments.record import RecordConfig
from nlmcs.fields import Range, field_specs
from nlmcs.games.civ import CivConfig
from nlmcs.games.freeciv.match import MatchConfig
from nlmcs.games.freeciv.server import ServerConfig
from nlmcs.methods import CorpusOptions
from nlmcs.model.config import ModelConfig
from nlmcs.net.model import NetConfig
from nlmcs.search.config import SearchConfig
from nlmcs.serve.config import ServeConfig

CONFIGS = (ModelConfig, SearchConfig, CorpusOptions)
SPECS = [(cls, spec) for cls in CONFIGS for spec in field_specs(cls)]
"""The settings sections of the command line."""
OTHERS = (CivConfig, MatchConfig, ServerConfig, RecordConfig, NaiveBayesConfig,
          SimilarityConfig, ParseConfig, NetConfig, ServeConfig)
EVERY = SPECS + [(cls, spec) for cls in OTHERS for spec in field_specs(cls)]
"""Every config that makes itself from its defaults: the same checks for all."""


def _ids(pairs):
    return [f"{cls.__name__}.{spec.name}" for cls, spec in pairs]


@pytest.mark.parametrize("make,message", [
    (lambda: ModelConfig(hidden_update="relase"),
     "model option hidden_update='relase': choose from release, consistent, expected"),
    (lambda: ModelConfig(persist="hiden"), "model option persist='hiden': choose from none, "
                                           "hidden"),
    (lambda: SearchConfig(real_move="meanq"),
     "search option real_move='meanq': choose from best-rollout, mean-q"),
    (lambda: CorpusOptions(prior="nb"),
     "corpus option prior='nb': choose from similarity, naive-bayes"),
    (lambda: ModelConfig(table_bits=40), "model option table_bits=40: must be between 8 and 26"),
    (lambda: ModelConfig(alpha=float("nan")),
     "model option alpha=nan: must be a finite number between 0 and 1"),
    (lambda: SearchConfig(rollouts=True), "search option rollouts=True: must be an integer"),
    (lambda: SearchConfig(epsilon_low=0.5, epsilon_high=0.4), "epsilon_low=0.5 and "
                                                              "epsilon_high=0.4"),
])  # fmt: skip
def test_a_library_caller_gets_one_line_naming_the_field(make, message):
    with pytest.raises(UserInputError) as err:
        make()
    assert message in str(err.value) and "\n" not in str(err.value)


CHOICES = [(c, s) for c, s in EVERY if s.choices is not None]


@pytest.mark.parametrize("cls,spec", CHOICES, ids=_ids(CHOICES))
def test_every_literal_field_takes_its_choices_only(cls, spec):
    for choice in spec.choices:
        assert getattr(cls(**{spec.name: choice}), spec.name) == choice
    word = next(c for c in spec.choices if c)
    for bad in (word.upper(), word + " ", None, 1):
        with pytest.raises(UserInputError, match=f"{spec.name}=.*choose from"):
            cls(**{spec.name: bad})


RANGED = [(c, s) for c, s in EVERY if s.range is not None]


def _with(cls, name, value):
    """cls with `name` = value (the other epsilon as well, so the pair stays ordered)."""
    pair = {"epsilon_low": "epsilon_high", "epsilon_high": "epsilon_low"}
    return cls(**{name: value, **({pair[name]: value} if name in pair else {})})


@pytest.mark.parametrize("cls,spec", RANGED, ids=_ids(RANGED))
def test_every_number_is_checked_against_its_range_bounds_included(cls, spec):
    r = spec.range
    step = 1 if spec.kind is int else 1e-9
    if r.low is not None:
        assert getattr(_with(cls, spec.name, spec.kind(r.low)), spec.name) == r.low
        with pytest.raises(UserInputError, match=f"{spec.name}=.*must be"):
            cls(**{spec.name: spec.kind(r.low) - step})
    if r.high is not None:
        assert getattr(_with(cls, spec.name, spec.kind(r.high)), spec.name) == r.high
        with pytest.raises(UserInputError, match=f"{spec.name}=.*must be"):
            cls(**{spec.name: spec.kind(r.high) + step})
    if r.above is not None:
        with pytest.raises(UserInputError, match=f"{spec.name}=.*greater than"):
            cls(**{spec.name: r.above})


NUMBERS = [(c, s) for c, s in EVERY if s.kind in (int, float)]


@pytest.mark.parametrize("cls,spec", NUMBERS, ids=_ids(NUMBERS))
def test_numbers_are_finite_and_ints_are_not_bools_or_floats(cls, spec):
    bad = [True, "5", [1]]
    bad += [2.0] if spec.kind is int else [math.nan, math.inf, -math.inf]
    for value in bad:
        with pytest.raises(UserInputError, match=f"{spec.name}="):
            cls(**{spec.name: value})


def test_every_range_and_choice_of_the_command_line_is_declared_at_a_field():
    declared = {(c.__name__, s.name): s.range for c, s in RANGED}
    assert declared[("ModelConfig", "table_bits")] == Range(8, 26)
    for name in ("alpha", "l2", "hidden_alpha", "hidden_l2"):
        assert declared[("ModelConfig", name)] == Range(0.0, 1.0)
    for name in ("rollouts", "depth", "workers", "batch"):
        assert declared[("SearchConfig", name)] == Range(1)
    assert declared[("SearchConfig", "learn_steps")] == Range(0)
    assert declared[("SearchConfig", "prior_floor")] == Range(0.0, 1.0)
    # every number field declares its range
    unranged = {(c.__name__, s.name) for c, s in NUMBERS if s.range is None}
    assert unranged == set()


def test_bools_are_bools_and_mappings_hold_numbers():
    with pytest.raises(UserInputError, match="center=1: must be true or false"):
        ModelConfig(center=1)
    with pytest.raises(UserInputError, match="reward_weights=.*finite numbers"):
        SearchConfig(reward_weights={"score": "high"})
    with pytest.raises(UserInputError, match="type_weights=.*finite numbers"):
        SearchConfig(type_weights={"build": math.nan})
    with pytest.raises(UserInputError, match="corpus=3: must be a string"):
        CorpusOptions(corpus=3)


def test_numbers_are_stored_so_that_equal_configs_serialise_alike():
    # A TOML `hidden_l2 = 0` and the flag `--hidden-l2 0` must give one run identity.
    a, b = ModelConfig(hidden_l2=0), ModelConfig(hidden_l2=0.0)
    assert type(a.hidden_l2) is float
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    weights = SearchConfig(reward_weights={"score": 1}).to_dict()["reward_weights"]
    assert weights == {"score": 1.0} and type(weights["score"]) is float


def test_replace_checks_too_and_keeps_working():
    base = SearchConfig()
    assert dataclasses.replace(base, rollouts=7).rollouts == 7
    with pytest.raises(UserInputError, match="rollouts=0"):
        dataclasses.replace(base, rollouts=0)
    assert ModelConfig.release(center=True).center


def test_every_field_has_a_docstring_and_the_command_sets_only_three():
    assert [f"{c.__name__}.{s.name}" for c, s in EVERY if not s.doc] == []
    assert {s.name for _, s in SPECS if s.set_by} == {"kind", "opponent", "log_decisions"}
    assert len(SPECS) == 57  # 22 model, 28 search, 7 corpus


def test_the_specs_of_serving_and_labelling_check_themselves_by_their_fields():
    from nlmcs.reader.outcomes import OutcomeSpec
    from nlmcs.reader.train import FitSpec
    from nlmcs.serve.config import ServeConfig

    for make, needle in ((lambda: ServeConfig(max_games=0), "serve option max_games=0: must "
                          "be at least 1"),
                         (lambda: OutcomeSpec(candidates=1), "labelling option candidates=1: "
                          "must be at least 2"),
                         (lambda: FitSpec(lr=0.0), "fitting option lr=0.0: must be greater "
                          "than 0")):
        with pytest.raises(UserInputError) as err:
            make()
        assert needle in str(err.value)


def test_a_tuple_field_checks_each_item_as_a_field_of_its_kind():
    from nlmcs.experiments.advice_audit import AuditSpec

    base = {"manual": "m", "manual_sha256": None, "rules_file": "r", "rules_sha256": "x",
            "rules": ("first-city",), "games": 2, "seed": 4}
    assert AuditSpec(**base, turns=[5, 10]).turns == (5, 10)  # a list from a file: a tuple
    for turns, needle in (((0, 5), "(0: must be at least 1)"), ("5", "a list of integers"),
                          ((5, 2.5), "(2.5: must be an integer")):
        with pytest.raises(UserInputError) as err:
            AuditSpec(**base, turns=turns)
        assert "audit option turns=" in str(err.value) and needle in str(err.value)
    with pytest.raises(UserInputError, match="audit option chance='other'"):
        AuditSpec(**base, turns=(5,), chance="other")


def test_a_literal_that_copies_a_constant_holds_the_same_names():
    from nlmcs.games.civ.variants import VARIANTS
    from nlmcs.games.freeciv.server import AI_LEVELS

    choices = {(c.__name__, s.name): s.choices for c, s in CHOICES}
    assert choices[("CivConfig", "variant")] == ("", *VARIANTS)
    assert choices[("ServerConfig", "ai_level")] == AI_LEVELS


def test_the_specs_a_command_builds_check_themselves_and_nest_checked_configs():
    from nlmcs.experiments.ablation.spec import AblationSpec
    from nlmcs.net.selfplay import NetGameJob

    base = {"methods": ("uct",), "rollouts": (5,), "games": 2, "seed": 1, "steps": 3}
    assert AblationSpec(**{**base, "rollouts": [5, 10]}).rollouts == (5, 10)
    for change, needle in (({"games": 0}, "ablation option games=0: must be between 1"),
                           ({"rollouts": (5, 0)}, "rollouts=(5, 0): must be a list of "
                                                  "integers at least 1"),
                           ({"seed": -1}, "ablation option seed=-1"),
                           ({"twin_seed": 2.5}, "twin_seed=2.5: must be an integer"),
                           ({"search": {"rollouts": 3}}, "search={'rollouts': 3}: must be a "
                                                         "SearchConfig"),
                           ({"game_options": {"preset": ["small"]}}, "game_options=")):
        with pytest.raises(UserInputError) as err:
            AblationSpec(**{**base, **change})
        assert needle in str(err.value) and "\n" not in str(err.value)
    job = {"net": "n.pt", "opponent": "self", "game": "civ", "game_options": {"preset": "tiny"},
           "seed": 0, "rollouts": 4, "net_depth": 2, "value_weight": 0.5, "puct_c": 1.5,
           "prior_floor": 0.05}
    assert NetGameJob(**job).value_weight == 0.5
    with pytest.raises(UserInputError, match="network game option value_weight=2.0: must be "
                                             "between 0 and 1"):
        NetGameJob(**{**job, "value_weight": 2.0})
