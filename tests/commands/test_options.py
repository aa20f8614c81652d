"""Search, model and corpus options, generated from the config fields: every field an option
(bar mappings and what the command sets), each round-tripping to its config; one base (the
defaults, the release with --release, or a --model-preset) with the options given on top; bad
values refused as they are parsed."""

from __future__ import annotations

import pytest

from nlmcs.cli import UsageError, parse_command_line
from nlmcs.commands.options import (
    PRIOR_FIELDS,
    configs,
    corpus_options,
    net_options,
    reader_options,
)
from nlmcs.errors import UserInputError
from nlmcs.fields import field_specs
from nlmcs.methods import CorpusOptions, NetOptions, ReaderOptions
from nlmcs.model.config import MODEL_PRESETS, ModelConfig
from nlmcs.search.config import SearchConfig

CONFIGS = {"search": SearchConfig, "model": ModelConfig, "corpus": CorpusOptions,
           "reader": ReaderOptions, "net": NetOptions}


def _parse(*argv: str, command=("play",)):
    args = parse_command_line([*command, *argv])
    return (*configs(args), corpus_options(args), reader_options(args), net_options(args))


def _settings(*argv: str):
    search, model, *_ = _parse(*argv)
    return search, model


def _other_value(spec):
    """A value of the field other than its default, and the command-line words that give it."""
    flag = "--" + spec.name.replace("_", "-")
    if spec.kind is bool:
        return (not spec.default), [flag if not spec.default else "--no-" + flag[2:]]
    if spec.choices is not None:
        value = next(c for c in spec.choices if c != spec.default)
    elif spec.kind is int:
        low = spec.range.low if spec.range and spec.range.low is not None else 0
        value = max(low, 1) + 1 if spec.default != max(low, 1) + 1 else max(low, 1) + 2
    elif spec.kind is float:
        value = 0.25 if spec.default != 0.25 else 0.5
    else:
        value = "my-corpus"
    return value, [flag, str(value)]


EXCLUDED = {"kind", "opponent", "log_decisions", "reward_weights", "type_weights"}
FIELDS = [(section, spec) for section, cls in CONFIGS.items() for spec in field_specs(cls)
          if spec.name not in EXCLUDED]  # fmt: skip


@pytest.mark.parametrize("section,spec", FIELDS, ids=[s.name for _, s in FIELDS])
def test_every_field_is_an_option_that_round_trips(section, spec):
    value, words = _other_value(spec)
    search, model, corpus, reader, net = _parse(*words)
    got = {"search": search, "model": model, "corpus": corpus, "reader": reader,
           "net": net}[section]
    assert getattr(got, spec.name) == value
    untouched = {"search": SearchConfig(), "model": ModelConfig(), "corpus": CorpusOptions(),
                 "reader": ReaderOptions(), "net": NetOptions()}
    assert dataclasses_equal_but(got, untouched[section], spec.name)


def dataclasses_equal_but(a, b, name) -> bool:
    return {**a.__dict__, name: None} == {**b.__dict__, name: None}


def test_the_excluded_fields_are_the_mappings_and_what_the_command_sets():
    names = {s.name for cls in CONFIGS.values() for s in field_specs(cls)}
    assert len(names) == 62 and len(FIELDS) == 57
    args = parse_command_line(["play"])
    offered = {n for names in args.config_fields.values() for n in names}
    assert offered == {s.name for _, s in FIELDS}
    for name in ("kind", "reward_weights", "type_weights"):  # a method sets kind
        with pytest.raises(UsageError, match="unrecognized"):
            parse_command_line(["play", "--" + name.replace("_", "-"), "1"])
    # play's own --opponent and --log-decisions set the other two
    args = parse_command_line(["play", "--opponent", "random", "--log-decisions", "d.jsonl"])
    assert configs(args)[0].opponent == "builtin" and args.opponent == "random"


def test_todays_option_names_still_parse_in_every_command_that_had_them():
    old = ["--rollouts", "3", "--depth", "2", "--workers", "1", "--batch", "2", "--learn-steps",
           "1", "--real-move", "mean-q", "--early-q", "sampled", "--late-q", "sampled",
           "--reward", "weighted", "--rollout", "typed", "--alpha", "0.001", "--l2", "0.02",
           "--passes", "3", "--hidden-update", "expected", "--hidden-alpha", "0.5",
           "--hidden-l2", "0", "--persist", "hidden", "--center", "--normalize",
           "--overlap-state", "--no-grounding-features", "--table-bits", "12",
           "--max-sentences", "4", "--rank-sentences", "state-action", "--release"]
    corpus = ["--corpus", "civ-sample", "--prior", "naive-bayes", "--utility", "result",
              "--prior-mode", "visits", "--puct-c", "1.5", "--prior-visits", "3",
              "--prior-floor", "0.2", "--prior-weight", "0.3"]  # fmt: skip
    for command, argv in ((["play"], old + corpus), (["bench", "step"], old + corpus),
                          (["relevance", "accuracy", "--out", "x"], old),
                          (["freeciv", "play"], old)):
        args = parse_command_line([*command, *argv])
        search, model = configs(args)
        assert (search.rollouts, search.batch, search.reward, search.real_move) == \
            (3, 2, "weighted", "mean-q")
        assert (model.hidden_update, model.hidden_l2, model.max_sentences) == ("expected", 0.0, 4)
        assert not model.grounding_features and model.center
    search, _, corpus_opts, *_ = _parse(*corpus)
    assert (search.prior_mode, search.puct_c, corpus_opts.prior) == ("visits", 1.5, "naive-bayes")


def test_ablation_and_bench_search_keep_their_own_rollouts_and_workers():
    args = parse_command_line(["ablation", "run", "--rollouts", "10,20", "--workers", "3",
                               "--depth", "4"])  # fmt: skip
    assert (args.rollouts, args.workers) == ("10,20", 3)
    assert "rollouts" not in args.config_fields["search"]
    args = parse_command_line(["bench", "search", "--rollouts", "5,6", "--workers", "1,2",
                               "--depth", "3", "--batch", "2"])  # fmt: skip
    search, model = configs(args)
    assert (args.rollouts, args.workers, search.depth, search.batch) == ("5,6", "1,2", 3, 2)
    assert set(PRIOR_FIELDS) <= set(args.config_fields["search"])  # bench search has a corpus


def test_no_options_give_the_defaults_and_release_gives_the_release():
    assert _settings() == (SearchConfig(), ModelConfig())
    assert _settings("--release") == (SearchConfig.release(), ModelConfig.release())
    search, model = _settings("--release")
    assert search.early_q == "sampled" and search.batch == 1 and search.reward == "weighted"
    assert model.persist == "none" and not model.grounding_features


def test_options_override_either_base():
    for base in ((), ("--release",), ("--model-preset", "state-action")):
        search, model = _settings(*base, "--rollouts", "7", "--center", "--no-normalize",
                                  "--rank-sentences", "document", "--max-sentences", "5")
        assert search.rollouts == 7 and model.center and not model.normalize
        assert (model.rank_sentences, model.max_sentences) == ("document", 5)
    _, model = _settings("--release", "--no-center")
    assert not model.center


STATE_ACTION = ["--max-sentences", "10", "--rank-sentences", "state-action", "--overlap-state",
                "--center", "--normalize", "--alpha", "0.001", "--hidden-l2", "0",
                "--hidden-update", "expected", "--hidden-alpha", "1.0", "--persist", "hidden"]


def test_presets_equal_their_flags():
    assert _settings("--model-preset", "state-action")[1] == _settings(*STATE_ACTION)[1]
    assert _settings("--model-preset", "release")[1] == ModelConfig.release()
    assert _settings("--model-preset", "default")[1] == ModelConfig()
    assert set(MODEL_PRESETS) == {"default", "release", "state-action", "selecting"}
    assert _settings("--model-preset", "selecting")[1] == _settings(
        "--overlap-state", "--relevance-prior", "1.5", "--hidden-update", "expected",
        "--hidden-alpha", "0.1", "--hidden-l2", "0", "--normalize", "--center")[1]
    # --release picks the release's search; a preset then replaces its model only
    search, model = _settings("--release", "--model-preset", "state-action")
    assert search == SearchConfig.release() and model == ModelConfig.preset("state-action")


def test_none_clears_a_value_a_preset_set():
    _, model = _settings("--model-preset", "state-action", "--max-sentences", "none",
                         "--hidden-alpha", "None")  # fmt: skip
    assert model.max_sentences is None and model.hidden_alpha is None
    assert _parse("--corpus", "none")[2].corpus == "none"  # a name, not None


@pytest.mark.parametrize("argv,message", [
    (("--rollouts", "0"), "--rollouts must be at least 1, got 0"),
    (("--alpha", "nan"), "--alpha must be a finite number between 0 and 1, got nan"),
    (("--alpha", "-1"), "--alpha"), (("--l2", "inf"), "--l2"),
    (("--learn-steps", "-1"), "--learn-steps must be at least 0"),
    (("--max-sentences", "0"), "--max-sentences"), (("--table-bits", "40"), "between 8 and 26"),
    (("--hidden-alpha", "nan"), "--hidden-alpha"), (("--temperature", "0"), "greater than 0"),
    (("--epsilon-high", "1.5"), "--epsilon-high"), (("--pool-size", "0"), "--pool-size"),
    (("--hidden-update", "relase"), "invalid choice: 'relase'"),
    (("--model-preset", "nope"), "--model-preset"), (("--max-sentences", "2.5"), "integer"),
])  # fmt: skip
def test_bad_values_are_one_usage_line_naming_the_option(argv, message):
    with pytest.raises(UsageError) as err:
        _parse(*argv)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_cross_field_rule_is_the_configs_own():
    with pytest.raises(UserInputError, match="epsilon_low=0.5 and epsilon_high=0.4"):
        _parse("--epsilon-low", "0.5")
    assert _parse("--epsilon-low", "0.5", "--epsilon-high", "0.6")[0].epsilon_low == 0.5


def test_help_comes_from_the_field_docstrings_with_the_dataclass_defaults(capsys):
    with pytest.raises(SystemExit):
        parse_command_line(["play", "--help-section", "all"])
    out = " ".join(capsys.readouterr().out.split())
    assert ("--rollouts ROLLOUTS, --search.rollouts ROLLOUTS Roll-outs per real step. "
            "(default: 500)") in out
    assert "--center, --no-center, --model.center, --no-model.center Train the output" in out
    assert "(default: off)" in out
    assert "--puct-c PUCT_C, --search.puct-c PUCT_C Exploration constant of PUCT" in out
    assert "example: nlmcs play" in out
    assert "--model-preset {default,release,state-action,selecting}" in out


@pytest.mark.parametrize("command", [["play"], ["ablation", "run"]])
def test_help_lists_the_commands_own_options_and_names_each_settings_section(capsys, command):
    with pytest.raises(SystemExit):
        parse_command_line([*command, "--help"])
    text = capsys.readouterr().out
    assert len(text.splitlines()) <= 100
    assert "--seed SEED" in text and "--rollouts ROLLOUTS," not in text  # a section's: hidden
    for name in ("search", "model", "corpus", "reader", "net"):
        assert f"\n    {name} " in text
    with pytest.raises(SystemExit):
        parse_command_line([*command, "--help-section", "search"])
    shown = capsys.readouterr().out
    assert "--depth DEPTH, --search.depth DEPTH" in shown and "--alpha ALPHA" not in shown


def test_a_section_option_is_also_named_with_its_section():
    plain = parse_command_line(["play", "--rollouts", "7", "--alpha", "0.2"])
    dotted = parse_command_line(["play", "--search.rollouts", "7", "--model.alpha", "0.2"])
    assert (plain.rollouts, plain.alpha) == (dotted.rollouts, dotted.alpha) == (7, 0.2)


def _every_option(parser):
    """(parser, option) for every option of every subcommand."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _every_option(sub)
        elif action.option_strings:
            yield parser, action


def test_every_option_with_a_value_by_default_says_what_it_is():
    from nlmcs.cli import build_parser

    for parser, action in _every_option(build_parser()):
        if action.default in (None, False, "==SUPPRESS==") or action.nargs == 0:
            continue  # no value unless given: its help says in words what happens without it
        shown = parser.formatter_class(parser.prog)._get_help_string(action)
        assert "default" in shown.lower(), (parser.prog, action.option_strings)


def test_the_commands_the_user_meets_first_show_their_defaults(capsys):
    with pytest.raises(SystemExit):
        parse_command_line(["play", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for shown in ("--seed SEED map, game and search seed (default: 0)",
                  "--steps STEPS real steps (turns) to play at most (default: 100)",
                  "--opponent OPPONENT builtin[:easy|normal|hard], random, greedy, or "
                  "net[:FILE]", "(default: builtin)"):
        assert shown in out
    assert "example: nlmcs play --method text --map small --steps 10" in out
    with pytest.raises(SystemExit):
        parse_command_line(["ablation", "run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "the preset's, 200 without one" in out
    example = out.split("example:")[1]
    assert "--games 4" in example and "--rollouts 10" in example  # a first run, not the paper's


def test_play_says_what_it_is_about_to_play(capsys):
    from nlmcs.cli import main

    assert main(["play", "--method", "uct", "--map", "tiny", "--steps", "1", "--rollouts", "2",
                 "--depth", "2", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert ("playing uct against builtin on the tiny map, seed 0: up to 1 steps of 2 roll-outs "
            "x depth 2") in err
