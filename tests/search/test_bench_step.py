"""`nlmcs bench step`: timing a step's parts must not change the step, and its replay check must
be able to fail."""

import time

import numpy as np
import pytest
from toy_game import ToyGame, make_manual

from nlmcs.cli import main
from nlmcs.experiments.bench_step import (
    PARTS,
    StepTimes,
    Stopwatch,
    bench_step,
    makespan,
    replay,
    rollout_spread,
)
from nlmcs.methods import make_planner
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig


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
        assert len(row.rollout_seconds) == len(row.learn_seconds) == 6
        assert sum(row.learn_seconds) == pytest.approx(row.parts["learn"])
        assert 0 < sum(row.rollout_seconds) + sum(row.learn_seconds) < row.seconds
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
    assert "2 workers at best" in out and "roll-outs played:" in out
    assert "tables against per signature:" in out  # linear has tables too
    code = main(["bench", "step", "--method", "linear", "--backend", "numpy", "--map", "tiny",
                 "--rollouts", "4", "--depth", "2", "--steps", "1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "note: this network has no tables" in out  # the reference: its one path
    assert "tables against per signature:" not in out
    code = main(["bench", "step", "--method", "text", "--map", "tiny", "--rollouts", "4",
                 "--depth", "2", "--steps", "1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    # the tables' table first, ending on the plain step line, then per signature, labelled
    tables, signatures = out.split("scoring per signature")
    assert "\nstep " in tables and "\nstep, signatures " in signatures
    assert "tables against per signature:" in signatures
    assert main(["bench", "step", "--method", "uct", "--map", "tiny"]) == 2
    assert "learns no value network" in capsys.readouterr().err
    assert main(["bench", "step", "--method", "q0", "--map", "tiny"]) == 2  # MC, a constant Q
    assert "q0 learns no value network" in capsys.readouterr().err
    assert main(["bench", "step", "--method", "linear", "--workers", "2", "--map", "tiny"]) == 2
    assert "one worker" in capsys.readouterr().err


def test_makespan_hands_jobs_in_order_to_the_first_free_worker():
    assert makespan([1.0, 1.0, 1.0, 1.0], 2) == 2.0
    assert makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0  # the long one holds the batch
    assert makespan([1.0, 1.0, 1.0, 3.0], 2) == 4.0  # and more so when it comes last
    assert makespan([1.0, 2.0], 1) == 3.0
    assert makespan([], 2) == 0.0


def test_ceiling_waits_for_each_batch_and_repeats_its_learning():
    row = StepTimes(seconds=10.5, parts={"learn": 0.4}, calls={}, rollouts=4, replay_seconds=0,
                    replay_same=True, batch=2, rollout_seconds=(1.0, 3.0, 2.0, 2.0),
                    learn_seconds=(0.1, 0.1, 0.1, 0.1))
    # the rest of the step is 10.5 - 8 - 0.4 = 2.1
    assert row.ceiling(1) == pytest.approx(10.5)
    assert row.ceiling(2) == pytest.approx(2.1 + (3.0 + 0.2) + (2.0 + 0.2))
    assert row.ceiling(4) == pytest.approx(row.ceiling(2))  # no batch has more than 2
    # the old bound, which a step's batches cannot reach here
    assert (row.seconds - 0.4) / 2 + 0.4 < row.ceiling(2)
    bare = StepTimes(10.5, {"learn": 0.4}, {}, 4, 0, True)  # no roll-out times kept
    assert bare.ceiling(2) == pytest.approx((10.5 - 0.4) / 2 + 0.4)
    assert rollout_spread([row]) == pytest.approx((2000.0, 2700.0, 3000.0))
    assert rollout_spread([bare]) is None


def test_a_part_timed_inside_another_is_counted_once():
    clock = Stopwatch()

    def outer():
        time.sleep(0.02)
        clock.run("inner", time.sleep, 0.03)

    clock.run("outer", outer)
    assert clock.seconds["inner"] >= 0.03 and clock.seconds["outer"] >= 0.02
    assert clock.last >= 0.05  # the outer call, all of it
    assert clock.seconds["outer"] == pytest.approx(clock.last - clock.seconds["inner"])
    assert clock.calls == {"outer": 1, "inner": 1}


def test_a_step_on_the_board_times_the_engine_apart(tmp_path, capsys):
    # The civ game's learned roll-outs play on the compiled engine's board: what they ask of
    # it is the "board" part, taken out of Q of candidates and the rest, and the parts still
    # add up to the step.
    from nlmcs.experiments.positions import start_position
    from nlmcs.games.civ import CivConfig, CivGame

    game = CivGame(CivConfig.preset("small", max_turns=30))
    state = start_position(game, seed=1, turns=8)
    planner = make_planner("text", game=game, search_config=SearchConfig(rollouts=8, depth=4),
                           seed=0)
    rows = bench_step(planner, state, steps=1, seed=0)
    planner.close()
    row = rows[0]
    assert row.calls["board"] > 8 * 4 and row.parts["board"] > 0
    assert "opponent" not in row.calls  # the opponent moves inside the board's turn
    assert 0 < sum(row.parts.values()) < row.seconds and row.rest > 0
    assert row.replay_same
    # on the Python engine there is no board: no such part, the opponent timed as before
    python = make_planner("text", game=game, search_config=SearchConfig(
        rollouts=8, depth=4, engine="python"), seed=0)
    rows = bench_step(python, state, steps=1, seed=0)
    python.close()
    assert "board" not in rows[0].calls and rows[0].calls["opponent"] > 0
