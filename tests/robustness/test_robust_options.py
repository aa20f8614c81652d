"""Options: every numeric option is checked at the CLI edge (finite, in range) and a bad one is
one line naming the option, exit status 2, before any work starts."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from robust_support import TESTS, assert_refused, run

TINY = ("--map", "tiny", "--steps", "1", "--rollouts", "2", "--depth", "1")

BAD = [
    (("play", "--seed", "-1", *TINY), "--seed"),
    (("play", "--seed", "99999999999999999999999", *TINY), "--seed"),
    (("play", "--seed", "x", *TINY), "--seed"),
    (("play", "--alpha", "nan", *TINY), "--alpha"),
    (("play", "--alpha", "-1", *TINY), "--alpha"),
    (("play", "--alpha", "inf", *TINY), "--alpha"),
    (("play", "--hidden-alpha", "1e300", *TINY), "--hidden-alpha"),
    (("play", "--l2", "nan", *TINY), "--l2"),
    (("play", "--prior-match", "nan", *TINY), "--prior-match"),
    (("play", "--learn-steps", "-1", *TINY), "--learn-steps"),
    (("play", "--max-sentences", "0", *TINY), "--max-sentences"),
    (("play", "--workers", "0", *TINY), "--workers"),
    (("play", "--max-turns", "0", *TINY), "--max-turns"),
    (("play", "--bogus", *TINY), "--bogus"),
    (("corpus", "query", "demo", "--state", "s.json", "--agent", "unit:1", "-k", "-1"), "-k"),
    (("corpus", "query", "demo", "--state", "s.json", "--agent", "unit:1", "--pool", "0"),
     "--pool"),
    (("corpus", "query", "demo", "--state", "s.json", "--agent", "unit:1", "--type-weight",
      "nan"), "--type-weight"),
    (("corpus", "record", "--name", "x", "--workers", "0"), "--workers"),
    (("corpus", "record", "--name", "x", "--games", "-3"), "--games"),
    (("game", "play", "--turns", "0"), "--turns"),
    (("advice", "audit", "--turns", "0,5", "--games", "1"), "error: --turns needs"),
    (("game", "play", "--width", "-5"), "--width"),
    (("game", "series", "--games", "0"), "--games"),
    (("manual", "ingest", "x.md", "--max-mb", "nan"), "--max-mb"),
    (("manual", "show", "x", "--sentence", "-1"), "--sentence"),
    (("manual", "show", "x", "--limit", "0"), "--limit"),
    (("relevance", "show", "log.jsonl", "-k", "0"), "-k"),
    (("relevance", "report", "log.jsonl", "--html", "x.html", "--map-every", "0"),
     "--map-every"),
    (("ablation", "run", "--games", "0"), "--games"),
    (("ablation", "run", "--connect-timeout", "nan"), "--connect-timeout"),
    (("bench", "priors", "--sizes", "-5"), "--sizes"),
    (("bench", "priors", "--sizes", "0"), "--sizes"),
    (("bench", "manual", "--sentences", "0"), "--sentences"),
    (("play", "--rollouts", "0", *TINY[:-4]), "--rollouts"),
    (("play", "--depth", "-1", *TINY[:-2]), "--depth"),
    (("play", "--batch", "0", *TINY), "--batch"),
    (("play", "--passes", "0", *TINY), "--passes"),
    (("play", "--table-bits", "40", *TINY), "--table-bits"),
    (("play", "--hidden-alpha", "inf", *TINY), "--hidden-alpha"),
    (("play", "--method", "text", "--twin-seed", "3", *TINY), "--twin-seed"),
    (("play", "--l2", "-0.5", *TINY), "--l2"),
    (("corpus", "record", "--name", "x", "--seed", "-1"), "--seed"),
    (("corpus", "record", "--name", "x", "--max-turns", "0"), "--max-turns"),
    (("manual", "shuffle", "x", "--seed", "-1"), "--seed"),
    (("game", "series", "--seed", "-1"), "--seed"),
    (("bench", "engine", "--rollouts", "0"), "--rollouts"),
    (("bench", "engine", "--midgame-turns", "-1"), "--midgame-turns"),
    (("bench", "search", "--depth", "0"), "--depth"),
    (("bench", "search", "--steps", "0"), "--steps"),
    (("bench", "search", "--start-turn", "-1"), "--start-turn"),
    # a FreeCiv match runs on a server: the commands that play a simulated game refuse it
    (("play", "--game", "freeciv", "--opponent", "freeciv:easy", *TINY), "nlmcs freeciv play"),
    (("bench", "search", "--game", "freeciv", "--methods", "uct"), "nlmcs freeciv play"),
    (("bench", "step", "--game", "freeciv", *TINY), "nlmcs freeciv play"),
    (("relevance", "accuracy", "--game", "freeciv", "--out", "acc"), "nlmcs freeciv play"),
    (("bench", "step", "--start-turn", "x", *TINY), "--start-turn"),
    (("bench", "step", "--steps", "0", *TINY), "--steps"),
    (("bench", "step", "--map", "tiny", "--steps", "1", "--rollouts", "0"), "--rollouts"),
    (("bench", "step", "--manual", "no-such-manual", *TINY), "no-such-manual"),
    (("relevance", "accuracy", "--games", "0", "--out", "acc"), "--games"),
    (("ablation", "run", "--workers", "0"), "--workers"),
    (("play", "--method", "uct-corpus", "--puct-c", "nan", *TINY), "--puct-c"),
    (("play", "--method", "uct-corpus", "--prior-floor", "2", *TINY), "--prior-floor"),
    (("play", "--method", "uct-corpus", "--prior-visits", "-1", *TINY), "--prior-visits"),
    (("play", "--method", "text-corpus", "--prior-weight", "-1", *TINY), "--prior-weight"),
    (("play", "--temperature", "0", *TINY), "--temperature"),
    (("play", "--epsilon-high", "nan", *TINY), "--epsilon-high"),
    (("play", "--epsilon-low", "0.9", *TINY), "epsilon_low=0.9"),
    (("play", "--model-preset", "best", *TINY), "--model-preset"),
    (("play", "--config", "missing.toml", *TINY), "missing.toml"),
    (("ablation", "run", "--config", TESTS.parent / "results/manual-ablation/civ-guide/run.json"),
     "0587f02"),
]


@pytest.mark.parametrize("argv,option", BAD, ids=[" ".join(a[:3]) for a, _ in BAD])
def test_a_bad_option_is_one_line_naming_it(argv, option, cli, tmp_path):
    result = cli(*argv)
    assert_refused(result, option)
    assert not any(tmp_path.glob("data/*"))  # refused before anything was stored


def test_a_bad_option_in_a_real_process(env):
    result = run("play", "--alpha", "nan", *TINY, env=env)
    assert_refused(result, "--alpha")
    assert result.err.count("\n") == 1


@given(st.text(max_size=30))
def test_an_integer_option_is_an_integer_in_range_or_refused(text):
    from nlmcs.commands.options import SEED

    try:
        value = SEED(text)
    except argparse.ArgumentTypeError as err:
        assert "\n" not in str(err)
        return
    assert isinstance(value, int) and 0 <= value < 2**32


@given(st.one_of(st.text(max_size=30), st.floats().map(repr)))
def test_a_real_option_is_finite_in_range_or_refused(text):
    from nlmcs.commands.options import float_option

    parse = float_option(low=0, high=1)
    try:
        value = parse(text)
    except argparse.ArgumentTypeError as err:
        assert "\n" not in str(err)
        return
    assert math.isfinite(value) and 0 <= value <= 1


def test_bounds_are_inclusive():
    from nlmcs.commands.options import int_option

    assert int_option(low=1, high=3)("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match="between 1 and 3"):
        int_option(low=1, high=3)("4")


TINY_PLAY = ("--map", "tiny", "--steps", "1", "--rollouts", "2", "--depth", "2", "--no-progress")


@pytest.mark.parametrize("extra,needle", [
    (("--net", "/etc/passwd"), "--net: no method here reads the network options"),
    (("--reader", "r.json"), "--reader: no method here reads the reader options"),
    (("--corpus", "no-such-corpus"), "--corpus: no method here reads the corpus options"),
    (("--manual", "no-such-manual"), "--manual no-such-manual: no method here reads a manual"),
])
def test_an_option_no_chosen_method_reads_is_refused(cli, extra, needle):
    """Issue 60 class 7: `play --method uct --net /etc/passwd` ran without a word."""
    assert_refused(cli("play", "--method", "uct", *extra, *TINY_PLAY), needle)
    assert_refused(cli("ablation", "run", "--methods", "uct,linear", *extra, "--games", "1",
                       "--out", "never-made", *TINY_PLAY), needle)


def test_an_option_a_chosen_method_reads_is_taken(cli, tmp_path):
    result = cli("play", "--method", "text", "--manual", "civ-guide", *TINY_PLAY)
    assert result.code == 0, result
    config = tmp_path / "c.toml"
    config.write_text("[net]\nnet_depth = 3\n")  # a recorded run's default: nothing to refuse
    assert cli("play", "--method", "uct", "--config", config, *TINY_PLAY).code == 0


def test_roll_out_workers_are_capped_at_what_the_work_and_machine_can_use(cli):
    """Issue 60 class 4: `play --workers 40` started 40 processes for a 3-roll-out game."""
    result = cli("play", "--method", "uct", "--workers", "40", *TINY_PLAY)
    assert result.code == 0, result
    assert "note: --workers 40 capped at 2 (2 roll-outs a step" in result.err
