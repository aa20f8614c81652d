"""Compiled (numba) hot paths of the value network, checked against `nlmcs.model.reference`.

`labels` holds the label layer's arithmetic both sides share, `scoring` a candidate's scores and
label draws, `sweeps` the online updates. numba compiles a kernel on its first call and caches
the machine code on disk (dropped when any source here changes: `nlmcs.machine_code`);
`warm_up` makes that happen before anything is timed.
"""

from __future__ import annotations

from pathlib import Path

from nlmcs.machine_code import drop_stale

# `scoring` and `sweeps` call `labels`' kernels, and `turns` the civ engine's: numba would keep
# their old machine code.
_CIV = Path(__file__).parents[2] / "games" / "civ"
drop_stale(Path(__file__).parent, also=(*sorted((_CIV / "compiled").glob("*.py")),
                                        _CIV / "tables.py", _CIV / "variants.py",
                                        _CIV / "labels.py"))


def warm_up(expected: bool = False) -> None:
    """Load (or compile) the kernels now, on tiny inputs, so the first real step does not pay
    for it. `expected`: also the sweeps of that rule."""
    import numpy as np

    from nlmcs.model.kernels import scoring, sweeps
    from nlmcs.model.kernels import sweep_inputs as si

    i0, f0 = np.zeros(0, np.int64), np.zeros(0)
    table = np.zeros(4)
    slots3, slots4 = np.zeros((3, 3), np.int64), np.zeros((4, 3), np.int64)
    no_words = np.zeros((0, 3))
    no_flags = np.zeros((0, 3), np.bool_)
    score_inputs = scoring.ScoreInputs(0, i0, i0, i0, f0, f0, 0.0, f0, f0, np.zeros((0, 2)),
                                 np.zeros((0, 2)), f0, True, np.zeros(2), no_words, no_words,
                                 no_flags, True, table, slots3, slots4, 1.0, 0.0)
    scoring.text_scores(*score_inputs)
    scoring.text_expected(*score_inputs, no_words, no_flags)
    scoring.action_sums(*scoring.ActionInputs(i0, f0, f0, f0, f0, np.zeros((0, 2)), table, i0,
                                              np.zeros((0, 2), np.int64), 0.0, f0))
    from nlmcs.model.kernels import candidates
    from nlmcs.model.tables import COLUMNS, LATENT_COLUMNS

    def tiny(kind, columns):  # one row of each column: the kernels' types, nothing read
        return kind(**{name: np.full((1, *shape), fill, dtype)
                       for name, (shape, dtype, fill) in columns.items()})

    tables = tiny(candidates.Tables, COLUMNS)
    weights = candidates.Weights(table, table, table, 0.0, np.zeros(2), slots3, slots4, 1.0,
                                 True, True, 0.0, False, 0.0, False, 0.0, 0.0,
                                 np.ones((4, 3)), np.ones((8, 3)))
    candidates.agent_expected(tables, weights, i0, 0)
    candidates.choose_turn(tables, weights, i0, np.zeros(1, np.int64), 0, 0.1, True,
                           np.random.default_rng(0))
    latent = tiny(candidates.LatentTables, LATENT_COLUMNS)
    candidates.agent_expected(latent, weights, i0, 0)
    candidates.choose_turn(latent, weights, i0, np.zeros(1, np.int64), 0, 0.1, True,
                           np.random.default_rng(0))
    candidates.latent_values(table, table, i0, i0, 0, 0, i0, 1.0)
    from nlmcs.model.kernels import update_rows

    two = np.zeros(2, np.int64)
    update_rows.shared_rows(tables, si.RowSlots(True, False, False, False, 0, 0, 0, 0, two, two),
                            i0, i0, i0, np.zeros(1, np.int64))
    update_rows.latent_rows(latent, i0, i0)
    scoring.draw(np.ones(1), 0.5)
    scoring.sample_labels(*scoring.LabelDraw(no_words, no_words, no_flags, table, slots3, slots4,
                                             1.0, np.zeros((0, 2)), np.zeros((0, 2)), True,
                                             np.zeros(2), f0, i0, i0, 0, 0, f0))
    for order in "CF":  # a sentence's match table comes in either layout (2 rows: an empty
        # or one-row table is both, and numba would type it C); no word is read, as nw = 0
        sweeps.output_rows(i0, f0, np.zeros((0, 2, 2), np.int64), f0,
                           np.zeros((2, 2), order=order), i0, np.zeros(2, np.int64), True)
    one = si.OutputRows(np.zeros(1, np.int64), np.ones(1), np.zeros(1, np.int64), 1)
    rates = si.Rates(1, 0.0, si.RELEASE, 0.0, 0.0, 0.0, 0.0, 1.0)
    cand = si.Candidates(i0, i0, i0)
    labels = si.Labels(np.zeros((0, 3, 7), np.int64), i0, no_flags, i0, i0, slots3, slots4)
    tables = si.Tables(table, table.copy(), table.copy())
    sweeps.shared_sweeps(rates, one, cand, si.SharedPhi(i0, f0, i0, np.zeros(1, np.int64),
                                                            i0, i0, i0, f0, i0),
                         labels, tables)
    if expected:
        rq = si.RowQ(i0, i0, i0, i0, i0, f0, i0, i0, f0, i0, i0, i0, i0,
                         np.zeros((0, 3, 7), np.int64), no_flags, i0)
        sweeps.expected_sweeps(rates, one, cand, si.Phi(i0, f0, i0), labels, rq, tables)
