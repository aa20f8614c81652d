"""The ablation statistics against values worked out by hand."""

import math

import pytest

from nlmcs.experiments.ablation import stats as st
from nlmcs.experiments.ablation.report import (
    PairTest,
    paired_tests,
    summarise,
    verdict_markdown,
)


def test_win_rate_and_standard_error():
    p, se = st.win_rate(3, 10)
    assert p == pytest.approx(0.3)
    assert se == pytest.approx(math.sqrt(0.3 * 0.7 / 10))  # 0.144914
    assert st.win_rate(0, 0) == (0.0, 0.0)
    assert st.win_rate(5, 5) == (1.0, 0.0)


def test_mean_and_standard_error():
    mean, se = st.mean_se([1, 2, 3, 4])
    # deviations -1.5, -0.5, 0.5, 1.5: sum of squares 5, s^2 = 5/3, se = sqrt(5/3)/2
    assert mean == 2.5
    assert se == pytest.approx(math.sqrt(5 / 3) / 2)
    assert math.isnan(st.mean_se([7])[1])


def test_sign_test_on_discordant_pairs():
    # 8 of 10 discordant pairs to A: 2 * P(X <= 2), X ~ Bin(10, 1/2) = 2 * 56 / 1024
    assert st.sign_test(8, 2) == pytest.approx(112 / 1024)
    assert st.sign_test(2, 8) == pytest.approx(112 / 1024)
    assert st.sign_test(3, 0) == pytest.approx(2 / 8)
    assert st.sign_test(0, 0) == 1.0
    assert st.discordant([1, 1, 0, 0, 1], [1, 0, 1, 0, 0]) == (2, 1)


def test_paired_bootstrap_interval():
    # Pairs (1, 0) and (0, 0): a resample's mean difference is 0, 1/2 or 1 with chances
    # 1/4, 1/2, 1/4, so the 95% percentile interval is [0, 1] around the estimate 1/2.
    diff, low, high = st.paired_bootstrap([1, 0], [0, 0], reps=4000, seed=3)
    assert (diff, low, high) == (0.5, 0.0, 1.0)
    assert st.paired_bootstrap([1, 1, 1], [0, 0, 0]) == (1.0, 1.0, 1.0)
    assert st.paired_bootstrap([1, 0, 1], [1, 0, 1]) == (0.0, 0.0, 0.0)
    a, b = [1, 0, 1, 1, 0, 0, 1], [0, 0, 1, 0, 1, 0, 0]
    assert st.paired_bootstrap(a, b, seed=9) == st.paired_bootstrap(a, b, seed=9)


def test_signed_rank_test_exact_values():
    # All five differences positive: W- = 0, exact two-sided p = 2 * 1/32.
    assert st.signed_rank_test([1, 2, 3, 4, 5]) == pytest.approx(0.0625)
    # W- = 2 (rank 2 negative): subsets of ranks with sum <= 2 are {}, {1}, {2}: p = 2 * 3/32.
    assert st.signed_rank_test([1, -2, 3, 4, 5]) == pytest.approx(0.1875)
    # Zeros are dropped before ranking.
    assert st.signed_rank_test([0, 1, 2, 3, 4, 5, 0]) == pytest.approx(0.0625)
    assert st.signed_rank_test([0, 0, 0]) == 1.0


def _row(arm, seed, outcome, margin, sec=0.5):
    return {"arm": arm, "method": arm, "rollouts": 10, "game": seed, "seed": seed,
            "outcome": outcome, "margin": margin, "seconds_per_step": sec}  # fmt: skip


def test_table_and_paired_tests_from_rows():
    rows = [_row("a", 1, "win", 3.0), _row("a", 2, "win", 1.0), _row("a", 3, "win", 2.0),
            _row("a", 4, "loss", -1.0, sec=1.5), _row("b", 1, "loss", -1.0),
            _row("b", 2, "undecided", 0.0), _row("b", 3, "win", 1.0),
            _row("b", 4, "draw", 0.0)]  # fmt: skip
    a, b = summarise(rows, ["a", "b"])
    assert (a.wins, a.losses, a.undecided, a.games) == (3, 1, 0, 4)
    assert (b.wins, b.losses, b.undecided, b.games) == (1, 1, 2, 4)  # a draw counts undecided
    assert a.win_pct == 75.0 and a.win_se_pct == pytest.approx(100 * math.sqrt(0.75 * 0.25 / 4))
    # the table's interval is Wilson's: never of zero width, inside [0, 100]
    assert 0 < a.win_low_pct < 75.0 < a.win_high_pct < 100
    assert a.seconds_per_step == pytest.approx(0.75)
    assert a.margin == pytest.approx(1.25)
    (t,) = paired_tests(rows, ["a", "b"], reps=2000, seed=1)
    # Discordant: seeds 1, 2 went to a only; seed 3 both won, seed 4 neither.
    assert (t.pairs, t.a_only_wins, t.b_only_wins) == (4, 2, 0)
    assert t.sign_p == pytest.approx(0.5)
    assert t.win_diff_pct == pytest.approx(50.0)
    # Margin differences a - b per seed: 4, 1, 1, -1 -> mean 5/4; squared deviations
    # 121/16 + 1/16 + 1/16 + 81/16 = 51/4, sample variance 51/12 = 17/4.
    assert t.margin_diff == pytest.approx(1.25)
    assert t.margin_diff_se == pytest.approx(math.sqrt(17 / 4) / 2)
    assert 0 < t.margin_p <= 1


def test_paired_tests_use_only_shared_seeds():
    rows = [_row("a", 1, "win", 1.0), _row("a", 2, "win", 1.0), _row("b", 2, "loss", -1.0),
            _row("b", 3, "loss", -1.0)]  # fmt: skip
    (t,) = paired_tests(rows, ["a", "b"], reps=100)
    assert t.pairs == 1 and (t.a_only_wins, t.b_only_wins) == (1, 0)


def test_verdict_says_in_words_what_a_small_run_cannot_tell():
    # 8 pairs, a ahead 2 / 1 on discordant pairs: a table shows a lead, the verdict says chance.
    outcomes = [("win", "loss"), ("win", "loss"), ("loss", "win")] + [("loss", "loss")] * 5
    rows = [r for i, (oa, ob) in enumerate(outcomes)
            for r in (_row("text", i, oa, 0.0), _row("random-text", i, ob, 0.0))]
    pairs = paired_tests(rows, ["text", "random-text"], reps=2000, seed=1)
    text = verdict_markdown(pairs, "text")
    assert "## What this run can say" in text
    assert "text vs random-text: no difference this run can see" in text
    assert "at 8 pairs" in text and "cannot be told at this size" in text
    # only the first arm's comparisons are judged
    assert verdict_markdown(pairs, "random-text") == ""


def test_verdict_names_a_borderline_pair_where_the_two_win_tests_disagree():
    # interval clear of zero, sign test not below 0.05 (the Civ II block's text vs twin)
    border = PairTest("text", "random-text", 100, 8, 19, 0.0522, -11.0, -21.0, -1.0, -0.66,
                      0.70, 0.224)
    assert st.win_tests_disagree(border) and not st.wins_differ(border)
    text = verdict_markdown([border], "text")
    assert "**text vs random-text: the two win tests disagree** at 100 pairs" in text
    assert "the bootstrap interval lies below zero but the exact sign test is not below" in text
    assert "no difference this run can see" not in text
    # the other way round: the sign test below 0.05, the interval across zero
    other = PairTest("text", "random-text", 30, 7, 0, 0.0156, 20.0, -1.0, 40.0, 0.1, 0.2, 0.5)
    assert "the sign test is below 0.05 but the bootstrap interval spans zero" in (
        verdict_markdown([other], "text"))
    # both agree that there is nothing: the null wording
    null = PairTest("text", "nonlinear", 100, 19, 21, 0.875, -2.0, -12.0, 8.0, 0.34, 0.83, 0.545)
    assert not st.win_tests_disagree(null)
    assert "no difference this run can see" in verdict_markdown([null], "text")


def test_verdict_names_a_difference_the_run_sees_and_asks_for_fresh_seeds():
    rows = [r for i in range(40)
            for r in (_row("text", i, "win", 5.0), _row("random-text", i, "loss", -5.0))]
    text = verdict_markdown(paired_tests(rows, ["text", "random-text"], reps=2000, seed=1),
                            "text")
    assert "**text is ahead of random-text** on these 40 pairs" in text
    assert "confirm it on fresh seeds" in text
