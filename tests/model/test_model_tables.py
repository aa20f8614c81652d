"""The compiled E[Q] of a candidate set from integer tables (`nlmcs.model.tables`,
`scoring.agent_expected`) against the per-signature path it replaces in the search: the same
values to the last bit, under every weight snapshot, and the same draws."""

from __future__ import annotations

import numpy as np
import pytest
from toy_game import make_manual, same_random_weights

from nlmcs.model.config import ModelConfig
from nlmcs.model.features import ManualIndex, Signature
from nlmcs.model.kernels.candidates import pairwise_sum
from nlmcs.model.network import ValueNetwork
from nlmcs.model.tables import LatentTables, SignatureTables

ACTIONS = [(("irrigate",), "irrigate"), (("mine",), "mine"), (("move", "north"), "move"),
           (("wait",), "wait"), (("research bronze working",), "research")]
STATES = [(), ("grassland",), ("hills", "river"),
          ("grassland", "hills", "river", "coast", "plains", "forest", "desert", "city")]
AGENTS = [("settlers",), ("warriors",), ("civilization",), ("trireme",)]
CANDIDATES = [[Signature(agent, action, atype, state) for action, atype in ACTIONS]
              for agent in AGENTS for state in STATES]
"""One agent's candidates per list, as the search asks for them (one agent word, one state);
the last state has eight labels, so its game sums take numpy's blocked order."""

VARIANTS = [
    {},
    {"normalize": True, "overlap_state": True, "grounding_features": False},
    {"temperature": 0.7, "max_sentences": 2},  # a cap in document order still has tables
]


@pytest.fixture(scope="module")
def index():
    return ManualIndex.build(make_manual(), min_count=1)


def _pair(index, **kw):
    """Two compiled networks with the same weights: one scores from tables, one per signature."""
    nets = [ValueNetwork(ModelConfig(min_count=1, **kw), index) for _ in range(2)]
    assert nets[0].tables is not None
    nets[1].tables = None
    same_random_weights(nets)
    return nets


def _change(nets, rng, scale):
    """The same new weights in every network (a new snapshot)."""
    for table in ("u", "v", "w"):
        values = rng.normal(0, scale, size=getattr(nets[0], table).shape)
        for net in nets:
            getattr(net, table)[:] = values
            net.weights_changed()


@pytest.mark.parametrize("kind", ["relevance-only", "text", "nonlinear", "linear"])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("scale", [0.5, 400.0])
def test_tables_give_the_per_signature_values_under_every_snapshot(index, kind, variant,
                                                                   scale):
    tabled, plain = _pair(index, kind=kind, **variant)
    rng = np.random.default_rng(1)
    for snapshot in range(3):
        for cands in CANDIDATES:
            ids = tabled.tables.of(cands)
            got = tabled.agent_expected(ids)
            want = plain.expected_q(cands)
            assert got.tobytes() == want.tobytes(), (snapshot, cands[0])
            assert tabled.agent_expected(ids).tobytes() == got.tobytes()  # read back
        _change([tabled, plain], rng, scale)


@pytest.mark.parametrize("kind", ["relevance-only", "text"])
@pytest.mark.parametrize("scale", [0.5, 400.0])
def test_a_candidate_sets_own_sums_are_the_networks_to_the_last_bit(index, kind, scale):
    # The compiled code fills a candidate set's own sums (`candidates.unit_sums`) the first
    # time a snapshot scores one of its candidates; the per-signature path has them from numpy
    # (`_unit_scores`, `_static`). Both must agree bit for bit, under every snapshot.
    tabled, _ = _pair(index, kind=kind, normalize=True)
    col = tabled.tables.columns
    rng = np.random.default_rng(3)
    for _ in range(3):  # snapshots
        for cands in CANDIDATES:
            tabled.agent_expected(tabled.tables.of(cands))
        meta = col["unit_meta"].data
        assert len(tabled.tables.units) > 1
        for uid, uw in enumerate(tabled.tables.units):
            assert meta[uid, 0] == tabled.epoch
            w0, r0, c, nw = meta[uid, 3:7]
            phi, static = tabled._unit_scores(uw)
            assert col["unit_phi"].data[r0:r0 + c].tobytes() == phi.tobytes()
            if kind == "text":
                static, factors = tabled._static(uw)
                assert col["unit_static"].data[w0:w0 + nw].tobytes() == static.tobytes()
                assert col["unit_sexp"].data[w0:w0 + nw].tobytes() == factors.tobytes()
        _change([tabled], rng, scale)


def test_a_snapshot_never_reads_the_sums_of_the_one_before(index):
    # One weight changed: every signature that reads it must be scored again, the shared sums
    # of its action type and action included (their stamps are per snapshot).
    tabled, plain = _pair(index)
    cands = CANDIDATES[1]
    ids = tabled.tables.of(cands)
    before = tabled.agent_expected(ids)
    feats = tabled.features(cands[0])
    for net in (tabled, plain):
        net.w[feats.parts[0].lang] += 1.0  # the action type's language weights
        net.u[feats.parts[0].phi] -= 2.0  # and its relevance weights
        net.weights_changed()
    after = tabled.agent_expected(ids)
    assert after[0] != before[0]
    assert after.tobytes() == plain.expected_q(cands).tobytes()


@pytest.mark.parametrize("kind", ["relevance-only", "text", "nonlinear", "linear"])
def test_tables_draw_what_the_per_signature_path_draws(index, kind):
    tabled, plain = _pair(index, kind=kind, normalize=True)
    for cands in CANDIDATES:
        tabled.agent_expected(tabled.tables.of(cands[:2]))  # some scored, some not yet
        for sig in cands:
            for seed in range(3):
                a = tabled.sample(sig, np.random.default_rng(seed))
                b = plain.sample(sig, np.random.default_rng(seed))
                assert (a.y, a.z, a.q) == (b.y, b.z, b.q)


def test_tables_grow_and_start_again_without_changing_a_value(index, monkeypatch):
    from nlmcs.model import tables

    tabled, plain = _pair(index)
    monkeypatch.setattr(tables, "LIMIT", 12)  # start again every few agents
    for cands in CANDIDATES * 2:
        got = tabled.agent_expected(tabled.tables.of(cands))
        assert got.tobytes() == plain.expected_q(cands).tobytes()
    assert len(tabled.tables.ids) <= 12


def test_ranked_candidate_sets_have_no_tables(index):
    net = ValueNetwork(ModelConfig(min_count=1, rank_sentences="state-action",
                                   max_sentences=2), index)
    assert net.tables is None and not SignatureTables.supports(net.rows)
    for kind in ("text", "nonlinear", "linear"):  # the numpy backend has none
        assert ValueNetwork(ModelConfig(kind=kind, backend="numpy", min_count=1),
                            index).tables is None
    for kind in ("nonlinear", "linear"):  # the compiled kinds without text: their own
        net = ValueNetwork(ModelConfig(kind=kind, min_count=1), index)
        assert isinstance(net.tables, LatentTables)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 300, 1029, 5000])
def test_pairwise_sum_is_numpys_sum(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=n + 3) * 10.0 ** rng.uniform(-6, 6, n + 3)
    assert pairwise_sum(a, 3, n) == a[3:].sum()


def _steps(method: str, tables: bool, steps: int = 3, search=None, **model) -> list:
    from nlmcs.experiments.positions import start_position
    from nlmcs.games.civ import CivConfig, CivGame
    from nlmcs.methods import make_planner
    from nlmcs.search.config import SearchConfig

    game = CivGame(CivConfig.preset("small", max_turns=40))
    state = start_position(game, seed=2, turns=12)
    cfg = SearchConfig(rollouts=40, depth=8, engine="compiled", **(search or {}))
    planner = make_planner(method, game=game, search_config=cfg, seed=5,
                           model_config=ModelConfig(**model) if model else None)
    net = planner.core.evaluator.net
    if not tables:
        net.tables = None
    rng = np.random.default_rng(1)
    out = []
    for _ in range(steps):
        move = planner.choose(state, 0, rng)
        out.append(sorted((a, repr(x)) for a, x in move.items()))
        state.apply_joint_actions({0: move, 1: game.policy("builtin").joint_action(state, 1, rng)},
                                  rng)
    out.append([w.tobytes() for w in net.learned()[:3]])
    return out


@pytest.mark.parametrize("method,search,model", [
    ("text", {}, {}), ("random-text", {}, {}), ("relevance-only", {}, {}),
    ("nonlinear", {}, {}), ("linear", {}, {}),  # the kinds without text: `LatentTables`
    ("nonlinear", {"rollout": "typed"}, {}),
    ("text", {}, {"normalize": True, "overlap_state": True}),
    ("text", {"rollout": "typed"}, {}),  # no compiled turns: each agent's E[Q] from the tables
])  # fmt: skip
def test_a_search_on_tables_plays_and_learns_what_the_per_signature_path_does(
        method, search, model, monkeypatch):
    from nlmcs.model.evaluator import NetworkEvaluator

    calls, turns, played = [], [], []
    real, board = ValueNetwork.agent_expected, NetworkEvaluator.board_joint
    board_turns = NetworkEvaluator.board_turns
    monkeypatch.setattr(ValueNetwork, "agent_expected",
                        lambda self, ids: calls.append(len(ids)) or real(self, ids))
    monkeypatch.setattr(NetworkEvaluator, "board_joint", lambda self, *a, **k: turns.append(
        board(self, *a, **k)) or turns[-1])
    monkeypatch.setattr(NetworkEvaluator, "board_turns", lambda self, *a, **k: played.append(
        board_turns(self, *a, **k) - k["depth"]) or k["depth"] + played[-1])
    plain = _steps(method, False, search=search, **model)
    assert not calls and not turns and not any(played)  # (the warm-up's call plays none)
    assert _steps(method, True, search=search, **model) == plain
    if search:  # the typed roll-out policy: agent by agent, each E[Q] from the tables
        assert len(calls) > 100 and not turns and not any(played)
    else:  # every turn, the root's too, in compiled calls of many turns
        assert not turns and sum(played) >= 3 * 40 * 8 // 2 and max(played) == 8


def test_compiled_calls_of_any_length_and_turns_chosen_one_by_one_play_the_same(monkeypatch):
    # `learned_turns` comes back to Python wherever it must (a key to register, a board to
    # grow, an agent without actions): cut its calls short at random and send every few turns
    # to the turn-by-turn path, and the games and weights stay the same. Roll-outs' boards
    # start with few spare rows here (`pack`'s default), so that some must grow.
    from nlmcs.games.civ.compiled import board_state
    from nlmcs.model.kernels import turns

    monkeypatch.setattr(board_state, "ROLLOUT_SPARE", 16)
    plain = _steps("text", False, steps=2)
    real, rng, why = turns.learned_turns, np.random.default_rng(0), []

    def cut(*args):
        *head, depth, end, learn_until, draws = args
        if rng.random() < 0.3:  # as for an agent without actions: nothing played
            return (turns.PYTHON_TURN, depth, *real(*head, depth, depth, learn_until, draws)[2:])
        out = real(*head, depth, min(end, depth + int(rng.integers(1, 4))), learn_until, draws)
        why.append(out[0])
        return out

    monkeypatch.setattr(turns, "learned_turns", cut)
    assert _steps("text", True, steps=2) == plain
    assert {turns.DONE, turns.NEEDS_AGENTS, turns.NEEDS_ROOM} <= set(why)


@pytest.mark.parametrize("method,limit", [("text", 60), ("text", 400), ("nonlinear", 60)])
def test_a_search_whose_tables_start_again_mid_turn_plays_what_the_per_signature_path_does(
        method, limit, monkeypatch):
    # A long game fills the tables (`LIMIT`) and they start again, often while a turn's agents
    # are being registered: the ids handed out before the restart are void, and the turn must
    # take all its ids from the new tables (once it read them from the old ones and crashed).
    from nlmcs.model import tables
    from nlmcs.model.evaluator import NetworkEvaluator, _signatures

    plain = _steps(method, False, steps=2)
    restarts, mid_turn = [], []
    kind = tables.SignatureTables if method == "text" else tables.LatentTables
    clear, agent_ids = kind.clear, NetworkEvaluator._agent_ids

    def counted(self):
        restarts.append(1)
        clear(self)

    def checked(self, state, player, tbl):
        generation = tbl.generation
        ids = agent_ids(self, state, player, tbl)
        if tbl.generation != generation:
            mid_turn.append(1)
        if ids is not None:  # each agent's ids name its candidates in the tables now
            for (agent, actions), got in zip(state.agent_actions(player), ids, strict=True):
                assert [tbl.sigs[s] for s in got.tolist()] == _signatures(state, agent,
                                                                          actions)
        return ids

    monkeypatch.setattr(tables, "LIMIT", limit)
    monkeypatch.setattr(kind, "clear", counted)
    monkeypatch.setattr(NetworkEvaluator, "_agent_ids", checked)
    assert _steps(method, True, steps=2) == plain
    assert len(restarts) > 2 and mid_turn


def test_the_compiled_greedy_pick_draws_what_the_search_draws():
    from nlmcs.model.kernels.candidates import greedy
    from nlmcs.search import mc_rollouts

    rng = np.random.default_rng(4)
    for _ in range(300):
        n = int(rng.integers(1, 9))
        q = np.round(rng.normal(size=n), 1)  # many exact ties
        q[rng.random(n) < 0.3] += 5e-13  # and ties within 1e-12
        seed = int(rng.integers(1 << 30))
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        padded = np.concatenate([[9.0], q])  # the kernel reads q[lo:hi]
        assert greedy(padded, 1, n + 1, a) == mc_rollouts.greedy(q, b)
        assert a.random() == b.random()  # the same numbers drawn


def test_board_keys_find_every_kept_key_and_no_other():
    from nlmcs.model.kernels.turns import find, key_hash
    from nlmcs.model.tables import BoardKeys

    rng = np.random.default_rng(3)
    keys = BoardKeys()
    kept = {}
    for i in range(5000):  # the table grows (rehashes) several times on the way
        key = tuple(rng.integers(-2, 40, size=int(rng.integers(5, 30))).tolist())
        sids = np.arange(i, i + int(rng.integers(1, 6)))
        keys.add(key, sids)
        kept.setdefault(key, sids)
    keys.add(next(iter(kept)), np.array([-7]))  # a kept key keeps its ids
    slots, hashes, key_lo, key_len, store, sid_lo, sid_len, sid_store = keys.arrays()
    assert keys.size == len(kept) and len(slots) >= 2 * keys.size
    for key, sids in kept.items():
        k = np.array(key, np.int64)
        e = find(slots, hashes, key_lo, key_len, store, k, key_hash(k))
        assert e >= 0 and sid_store[sid_lo[e]:sid_lo[e] + sid_len[e]].tolist() == sids.tolist()
    for _ in range(500):
        k = rng.integers(50, 90, size=int(rng.integers(1, 30)))  # never kept (values >= 50)
        assert find(slots, hashes, key_lo, key_len, store, k, key_hash(k)) < 0
