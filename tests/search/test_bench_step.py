"""`nlmcs bench step`: timing a step's parts must not change the step, and its replay check must
be able to fail."""

import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from nlmcs.cli import main
from nlmcs.experiments.bench_step import PARTS, bench_step, replay
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig
from nlmcs.search.methods import make_planner


def _planner(game, kind="text", **model):
    return make_planner(kind, game=game, manual=make_manual(),
                        model_config=ModelConfig(min_count=1, alpha=0.05, **model),
                        search_config=SearchConfig(rollouts=6, depth=3, batch=3), seed=0)


def _moves(planner, state, seeds):
    return [sorted(planner.choose(state.clone(), 0, np.random.default_rng(s)).items())
            for s in seeds]


@pytest.mark.parametrize("kind", ["text", "linear"])
def test_timed_steps_play_and_learn_what_untimed_ones_do(kind):
    game = ToyGame(units=3, max_turns=8)
    state = game.new_initial_state(2)
    plain = _planner(game, kind)
    # bench_step's warm-up step is seeded 0 and its timed steps 1 and 2; a fourth step follows
    expected = _moves(plain, state, [0, 1, 2, 3])
    plain_weights = [x.copy() for x in plain.core.evaluator.net.learned()[:3]]
    plain.close()

    timed = _planner(game, kind)
    rows = bench_step(timed, state, steps=2, seed=0)
    assert _moves(timed, state, [3]) == expected[3:]  # still behind the stopwatch
    got_weights = timed.core.evaluator.net.learned()[:3]
    timed.close()
    assert all(np.array_equal(a, b) for a, b in zip(plain_weights, got_weights, strict=True))
    assert len(rows) == 2
    for row in rows:
        assert row.calls["learn"] == 6 and row.calls["prepare"] == 6
        assert row.calls["datapoint"] > 0 and row.calls["opponent"] > 0
        assert set(row.parts) <= set(PARTS)
        assert 0 < sum(row.parts.values()) < row.seconds
        assert row.replay_same
        assert row.ceiling(1) == pytest.approx(row.seconds)
        assert row.parts["learn"] < row.ceiling(2) < row.seconds


def test_replay_check_notices_a_missing_update():
    game = ToyGame(units=3, max_turns=8)
    state = game.new_initial_state(2)
    planner = _planner(game)
    bench_step(planner, state, steps=1, seed=0)
    timed = planner.core.evaluator
    assert replay(timed)[1]
    timed.learned.pop(0)  # a roll-out the step learned and the replay does not
    assert not replay(timed)[1]
    planner.close()


def test_bench_step_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    code = main(["bench", "step", "--method", "linear", "--map", "tiny", "--rollouts", "4",
                 "--depth", "2", "--steps", "1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "learning sweeps" in out and "weights equal to the step's: yes" in out
    assert "2 workers at best" in out
    assert main(["bench", "step", "--method", "uct", "--map", "tiny"]) == 2
    assert "learns no value network" in capsys.readouterr().err
    assert main(["bench", "step", "--method", "linear", "--workers", "2", "--map", "tiny"]) == 2
    assert "one worker" in capsys.readouterr().err
