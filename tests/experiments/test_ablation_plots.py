"""The ablation's figures say what was played and never draw an interval of zero width."""

from nlmcs.experiments.ablation.plots import png, strength_vs_time, winrate_figure
from nlmcs.experiments.ablation.report import ArmSummary, PairTest, figure_title
from nlmcs.experiments.ablation.stats import wilson_interval


def _arm(name, wins, games=40, rollouts=30, seconds=0.05):
    p = 100 * wins / games
    return ArmSummary(name, name.split("@")[0], rollouts, wins, games - wins, 0, p, 0.0,
                      p, p, seconds, 0.1, 0.2, games)


def test_wilson_interval_is_never_empty_and_brackets_the_rate():
    low, high = wilson_interval(0, 40)
    assert low == 0 and 0.05 < high < 0.15
    low, high = wilson_interval(40, 40)
    assert 0.85 < low < 0.95 and high == 1
    low, high = wilson_interval(20, 40)
    assert low < 0.5 < high


def test_winrate_figure_names_the_games_and_draws_paired_differences():
    arms = [_arm("uct", 0), _arm("puct-net", 25), _arm("uct-corpus", 20)]
    pairs = [PairTest("uct", "puct-net", 40, 0, 25, 1e-6, -62.5, -75.0, -50.0, -1.0, 0.2, 1e-5),
             PairTest("uct", "uct-corpus", 40, 0, 20, 1e-5, -50.0, -65.0, -35.0, -1.0, 0.2, 1e-5)]
    title = figure_title({"opponent": "builtin", "game": "civ",
                          "game_options": {"preset": "small", "max_turns": 20},
                          "full_games": True, "rollouts": [30], "search": {"depth": 5},
                          "seed": 7})
    assert title == "vs builtin; civ, small map; full 20-turn games; 30 roll-outs x depth 5; " \
                    "seed 7"
    fig = winrate_figure(arms, pairs, title=title)
    assert len(fig.axes) == 3
    assert title in fig._suptitle.get_text()
    left, _, diff = fig.axes
    # 0 wins still has an interval (Wald's would be 0 wide)
    err = [c for c in left.containers if hasattr(c, "lines")][0]
    segments = err.lines[2][0].get_segments()
    assert segments[0][1][1] - segments[0][0][1] > 5
    assert [t.get_text() for t in diff.get_yticklabels()] == ["puct-net", "uct-corpus"]
    assert diff.lines[0].get_xdata()[0] == 62.5  # sign turned: each arm minus the reference
    assert png(fig)[:4] == b"\x89PNG"
    assert len(winrate_figure(arms).axes) == 2  # without pairs, no difference panel


def test_strength_vs_time_labels_only_the_decades():
    arms = [_arm("uct@30", 10, rollouts=30, seconds=0.02), _arm("uct@60", 14, rollouts=60,
                                                                   seconds=0.04)]
    fig = strength_vs_time(arms, title="t")
    png(fig)
    minor = [t.get_text() for t in fig.axes[0].get_xticklabels(minor=True)]
    assert not any(minor)


def test_the_figure_names_a_borderline_pair_instead_of_calling_every_interval_zero():
    # The Civ II block's primary pair: 8 / 19 discordant, sign p 0.052, interval (-21, -1).
    arms = [_arm("text", 49, 100), _arm("random-text", 60, 100), _arm("nonlinear", 51, 100)]
    border = PairTest("text", "random-text", 100, 8, 19, 0.0522, -11.0, -21.0, -1.0, -0.66,
                      0.70, 0.224)
    null = PairTest("text", "nonlinear", 100, 19, 21, 0.875, -2.0, -12.0, 8.0, 0.34, 0.83, 0.545)
    answer = winrate_figure(arms, [border, null])._suptitle.get_text()
    assert "every interval includes 0" not in answer
    assert "they disagree on text behind random-text, sign p 0.052" in answer
    assert "nonlinear" not in answer.split("disagree on")[1].split("(a lead")[0]
    plain = winrate_figure(arms, [null])._suptitle.get_text()
    assert "No difference seen at 100 pairs (every interval includes 0)." in plain
