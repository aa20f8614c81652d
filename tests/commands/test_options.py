"""Search and model options: one base (the defaults, or the release with --release), the options
given on top, bad values refused at the edge."""

from __future__ import annotations

import argparse

import pytest

from nlmcs.commands.options import add_search_options, configs
from nlmcs.errors import UserInputError
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig


def _parse(*argv: str):
    p = argparse.ArgumentParser()
    add_search_options(p)
    return configs(p.parse_args(list(argv)))


def test_no_options_give_the_defaults_and_release_gives_the_release():
    assert _parse() == (SearchConfig(), ModelConfig())
    assert _parse("--release") == (SearchConfig.release(), ModelConfig.release())
    search, model = _parse("--release")
    assert search.early_q == "sampled" and search.batch == 1 and search.reward == "weighted"
    assert model.persist == "none" and not model.grounding_features


def test_options_override_either_base():
    for base in ((), ("--release",)):
        search, model = _parse(*base, "--rollouts", "7", "--center", "--no-normalize",
                               "--rank-sentences", "state-action", "--max-sentences", "5")
        assert search.rollouts == 7 and model.center and not model.normalize
        assert (model.rank_sentences, model.max_sentences) == ("state-action", 5)
    _, model = _parse("--release", "--no-center")
    assert not model.center


@pytest.mark.parametrize("argv", [("--rollouts", "0"), ("--alpha", "nan"), ("--alpha", "-1"),
                                  ("--l2", "inf"), ("--learn-steps", "-1"),
                                  ("--max-sentences", "0"), ("--table-bits", "40"),
                                  ("--hidden-alpha", "nan")])  # fmt: skip
def test_bad_values_are_refused(argv):
    with pytest.raises(UserInputError):
        _parse(*argv)

