"""The masked-PPO comparison pairs games by seed, reports what it computed, and turns bad options
into one line."""

from __future__ import annotations

import pytest

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.experiments import masked_ppo
from nlmcs.experiments.masked_ppo import Game, pair


def _games(rets, wins):
    return [Game(seed=s, ret=r, margin=r - 1, won=w)
            for s, (r, w) in enumerate(zip(rets, wins, strict=True))]


def test_pairs_are_compared_seed_by_seed():
    ppo = _games([3, 4, 5, 6, 7, 8], [1, 1, 0, 1, 0, 0])
    rnd = _games([1, 1, 1, 1, 9, 1], [0, 0, 0, 0, 1, 0])
    result = pair(ppo, rnd)
    assert result["games"] == 6
    assert result["ppo"]["wins"] == 3 and result["random"]["wins"] == 1
    diff, low, high = result["return_difference"]
    assert diff == pytest.approx((2 + 3 + 4 + 5 - 2 + 7) / 6) and low < diff < high
    assert result["ahead"][:2] == (5, 1)
    assert result["win_p"] == pytest.approx(0.625)  # 3 pairs to PPO, 1 to random: 2 * 5/16
    assert 0 < result["return_p"] < 1
    text = masked_ppo.report(result)
    assert "wins 3/6" in text and "higher on 5/6" in text


def test_unpaired_games_are_refused():
    with pytest.raises(UserInputError, match="same seeds"):
        pair(_games([1, 2], [0, 0]), _games([1], [0]))


@pytest.mark.parametrize("argv, says", [
    (["--eval-seeds", "5:5"], "not a seed range"),
    (["--steps", "0"], "--steps must be"),
    (["--opponent", "nobody", "--steps", "8"], "unknown player 'nobody'"),
])  # fmt: skip
def test_bad_options_give_one_line(argv, says, capsys):
    assert main(["env", "ppo", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and says in err and "\n" not in err


def test_a_short_run_trains_evaluates_and_reports(capsys):
    pytest.importorskip("sb3_contrib")
    assert main(["env", "ppo", "--steps", "8", "--eval-seeds", "0:3", "--max-turns", "2"]) == 0
    out = capsys.readouterr().out
    assert "3 evaluation games per policy, paired by seed" in out
    assert "Wilcoxon signed-rank p" in out and "exact sign test p" in out
