"""The compiled engine against the Python reference: on games of many seeds on every map preset
(and the variants, and more than two players), every turn's legal actions and every turn's whole
state. A divergence names the preset, seed, turn and the first field that differs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nlmcs.games.civ import CivConfig, CivGame, serialize
from nlmcs.games.civ import legal as reference
from nlmcs.games.civ.ai import BuiltinAI
from nlmcs.games.civ.compiled import legal as compiled
from nlmcs.games.civ.compiled.board import PL_KILLED, copy, pack, unpack
from nlmcs.games.civ.compiled.play import Engine
from nlmcs.games.civ.convert import convert_freeciv_ruleset, write_ruleset
from nlmcs.games.runner import ENGINES, play_game

PLAYERS = {"builtin": ("builtin:normal", "builtin:normal"), "mixed": ("builtin:hard", "random")}


def _positions(preset: str, seed: int, players: tuple[str, str], turns: int, **overrides):
    """Every turn's starting state of one game (the state is shared: look before moving on)."""
    game = CivGame(CivConfig.preset(preset, max_turns=turns, **overrides))
    policies = [game.policy(p) for p in players]
    rng = np.random.default_rng(seed)
    s = game.new_initial_state(seed)
    while not s.is_terminal():
        yield s
        joint = {p: policies[p].joint_action(s, p, rng) for p in range(s.num_players)}
        s.apply_joint_actions(joint, rng)


def _first_difference(want, got) -> str | None:
    if [a for a, _ in want] != [a for a, _ in got]:
        return f"agents {[a for a, _ in want]} != {[a for a, _ in got]}"
    for (agent, w), (_, g) in zip(want, got, strict=True):
        if list(w) != list(g):
            return f"{agent}: {list(w)} != {g}"
    return None


@pytest.mark.parametrize("preset,seeds,turns,wrap", [
    ("tiny", range(6), 60, False), ("small", range(4), 80, False),
    ("default", range(2), 100, False), ("small", range(4), 80, True)])
@pytest.mark.parametrize("players", list(PLAYERS))
def test_legal_actions_are_the_references_in_the_same_order(preset, seeds, turns, wrap, players):
    checked = contested = 0
    for seed in seeds:
        for s in _positions(preset, seed, PLAYERS[players], turns, wrap_x=wrap):
            for p in range(s.num_players):
                want = reference.agents_with_actions(s, p)
                got = compiled.agents_with_actions(s, p)
                problem = _first_difference(want, got)
                assert problem is None, f"{preset} seed {seed} turn {s.turn} player {p}: {problem}"
                checked += sum(len(acts) for _, acts in want)
                contested += sum(a.kind == "attack" for _, acts in want for a in acts)
    assert checked > 1_000
    if preset != "default":  # on the big map 100 turns may pass without a fight
        assert contested > 0  # the contested moves, attacks and zones of control were compared


def test_a_board_holds_the_whole_state_and_is_a_copy():
    s = next(x for i, x in enumerate(_positions("small", 3, PLAYERS["builtin"], 40)) if i == 30)
    assert s.cities and s.units
    b = pack(s)
    assert serialize.state_to_json(unpack(b, s)) == serialize.state_to_json(s)
    assert list(unpack(b, s).units) == list(s.units)  # the dict order too
    b.T[:] = 0  # a copy: the reference state is untouched
    assert any(s.occupant)
    c = copy(b)
    c.U[:] = 0
    assert b.U.any()


def _field_difference(want: dict, got: dict) -> str:
    """The first part of two JSON states that differs, by path."""
    for key, w in want.items():
        g = got.get(key)
        if w == g:
            continue
        if isinstance(w, dict) and isinstance(g, dict):
            return f"{key}.{_field_difference(w, g)}"
        if isinstance(w, list) and isinstance(g, list) and len(w) == len(g):
            i = next(i for i, (x, y) in enumerate(zip(w, g, strict=True)) if x != y)
            if isinstance(w[i], dict):
                return f"{key}[{i}].{_field_difference(w[i], g[i])}"
            return f"{key}[{i}]: {w[i]!r} != {g[i]!r}"
        return f"{key}: {w!r} != {g!r}"
    return "(equal)"


GAMES = [("tiny", {}, range(12)), ("small", {}, range(8)), ("default", {}, range(3)),
         ("small", {"variant": "sacred-terrain"}, range(3)),
         ("small", {"variant": "sacred-terrain-end"}, range(3)),
         ("small", {"num_players": 3}, range(3)), ("tiny", {"num_players": 4}, range(3)),
         ("small", {"wrap_x": True}, range(6)), ("tiny", {"wrap_x": True}, range(6))]


def _same_games(game, policies, seeds) -> tuple[int, int, int]:
    """Play each seed's game on both engines turn by turn; every turn the whole state (units,
    cities, players, tiles, turn, winner), each player's score and state vector are equal and
    both generators are at the same point of their stream. Returns (turns, units killed, steps
    of a unit across the seam of a map that wraps)."""
    kills = turns = seam = 0
    for seed in seeds:
        ref = game.new_initial_state(seed)
        engine = Engine(ref, policies)
        board = pack(ref, spare=0)  # no spare rows: growing the board is exercised too
        r_ref, r_fast = np.random.default_rng(seed), np.random.default_rng(seed)
        while not ref.is_terminal():
            joint = {p: policies[p].joint_action(ref, p, r_ref) for p in range(ref.num_players)}
            before = {u.id: u.tile % ref.map.width for u in ref.units.values()}
            ref.apply_joint_actions(joint, r_ref)
            seam += sum(2 * abs(u.tile % ref.map.width - before[u.id]) > ref.map.width
                        for u in ref.units.values() if u.id in before)
            board, played = engine.play(board, 1, r_fast)
            turns += played
            fast = unpack(board, ref)
            want, got = serialize.state_to_json(ref), serialize.state_to_json(fast)
            names = [getattr(p, "name", "?") for p in policies]
            where = f"{game.config} {names} seed {seed} turn {ref.turn}"
            assert want == got, f"{where}: {_field_difference(want, got)}"
            assert r_ref.bit_generator.state == r_fast.bit_generator.state, where
            for p in range(ref.num_players):
                assert fast.score(p) == ref.score(p), (where, p)
                assert np.array_equal(fast.state_vector(p), ref.state_vector(p)), (where, p)
            assert (fast.is_terminal(), fast.winner()) == (ref.is_terminal(), ref.winner()), where
        kills += int(board.PL[:, PL_KILLED].sum())
    return turns, kills, seam


@pytest.mark.parametrize("preset,overrides,seeds", GAMES)
def test_random_players_play_the_same_games_on_both_engines(preset, overrides, seeds):
    game = CivGame(CivConfig.preset(preset, **overrides))
    turns, kills, seam = _same_games(game, [game.policy("random")] * game.num_players, seeds)
    assert turns >= 100 * len(seeds) or preset == "tiny"
    if preset in ("tiny", "small") and not overrides:
        assert kills > 0  # combat was compared
    assert (seam > 0) == game.config.wrap_x  # on a map that wraps, units crossed its seam


AI_GAMES = [("tiny", {}, range(4), ("builtin:normal", "builtin:normal")),
            ("small", {}, range(4), ("builtin:hard", "random")),
            ("small", {}, range(3), ("builtin:easy", "builtin:hard")),
            ("default", {}, range(2), ("builtin:normal", "builtin:hard")),
            ("small", {"variant": "sacred-terrain"}, range(3), ("rule:normal", "builtin:normal")),
            ("small", {"num_players": 3}, range(2), ("builtin:normal", "random", "builtin:hard")),
            ("small", {"wrap_x": True}, range(4), ("builtin:normal", "random")),
            ("small", {"wrap_x": True}, range(3), ("builtin:hard", "builtin:easy"))]


@pytest.mark.parametrize("preset,overrides,seeds,players", AI_GAMES)
def test_the_builtin_ai_plays_the_same_games_on_both_engines(preset, overrides, seeds, players):
    """Every level, against itself, another level and a random player, and the AI that knows
    the variant's rule ("rule:")."""
    game = CivGame(CivConfig.preset(preset, **overrides))
    policies = [BuiltinAI(p.split(":")[1], knows_rule=True) if p.startswith("rule:")
                else game.policy(p) for p in players]
    turns, kills, seam = _same_games(game, policies, seeds)
    assert turns >= 60 * len(seeds)
    assert (seam > 0) == game.config.wrap_x
    if "random" in players:
        assert kills > 0  # the AI's attacks at good odds were compared


def test_a_random_game_from_a_midgame_position_matches():
    game = CivGame(CivConfig.preset("small", max_turns=60))
    start = next(x for i, x in enumerate(_positions("small", 5, PLAYERS["builtin"], 60))
                 if i == 25)
    before = serialize.state_to_json(start)
    ref = start.clone()
    policy = game.policy("random")
    rng = np.random.default_rng(9)
    for _ in range(20):
        ref.apply_joint_actions({p: policy.joint_action(ref, p, rng) for p in range(2)}, rng)
    end = start.clone()
    played = Engine(start, [policy, policy]).play_in_place(end, 20, np.random.default_rng(9))
    assert played == 20
    assert serialize.state_to_json(end) == serialize.state_to_json(ref)
    assert serialize.state_to_json(start) == before  # the clone played, not the start


FREECIV_CIV2CIV3 = Path("/usr/share/games/freeciv/civ2civ3")


@pytest.mark.skipif(not FREECIV_CIV2CIV3.is_dir(), reason="FreeCiv data not installed")
def test_a_ruleset_converted_from_freeciv_plays_the_same_games(tmp_path):
    path = write_ruleset(convert_freeciv_ruleset(FREECIV_CIV2CIV3), tmp_path / "civ2civ3.json")
    game = CivGame(CivConfig.preset("small", ruleset=str(path)))
    for players in (("random", "random"), ("builtin:normal", "builtin:easy")):
        turns, _, _ = _same_games(game, [game.policy(p) for p in players], range(2))
        assert turns >= 120


@pytest.mark.parametrize("players,turns", [(("builtin:normal", "random"), None),
                                           (("builtin:hard", "builtin:easy"), 30)])
def test_play_game_gives_the_same_result_on_either_engine(players, turns):
    """`runner.play_game` plays scripted players compiled by default: the same result, the
    same final state (a given `state` advanced in place) and the generator where the
    reference loop leaves it."""
    game = CivGame(CivConfig.preset("small", max_turns=60))
    out = {}
    for engine in ENGINES:
        state = game.new_initial_state(4)
        rng = np.random.default_rng(4)
        result = play_game(game, {p: game.policy(x) for p, x in enumerate(players)}, seed=4,
                           max_turns=turns, state=state, rng=rng, engine=engine)
        out[engine] = (result, serialize.state_to_json(state), rng.random())
    assert out["compiled"] == out["python"]
    assert out["python"][0].played == (turns or 60)


def test_players_the_compiled_engine_lacks_play_on_the_reference():
    game = CivGame(CivConfig.preset("tiny", max_turns=5))
    assert game.compiled_players(game.new_initial_state(0),
                                 [game.policy("greedy"), game.policy("random")]) is None
    result = play_game(game, {0: game.policy("greedy"), 1: game.policy("builtin")}, seed=0)
    assert result.finished and result.turns == 5


def test_a_map_too_big_for_the_ai_tables_keeps_the_ai_on_the_reference():
    """The AI's step table is tiles x tiles; past MAX_TILES its games stay in Python."""
    from nlmcs.games.civ.compiled.ai import MAX_TILES

    game = CivGame(CivConfig(width=70, height=60, max_turns=3))
    state = game.new_initial_state(0)
    assert state.map.n > MAX_TILES
    assert game.compiled_players(state, [game.policy("builtin"), game.policy("random")]) is None
    assert game.compiled_players(state, [game.policy("random")] * 2) is not None
    result = play_game(game, {0: game.policy("builtin"), 1: game.policy("random")}, seed=0)
    assert result.finished and result.turns == 3


def test_bitmasks_of_any_width_become_the_same_columns():
    """Techs and buildings are Python-int bitmasks; a ruleset may have more than 62 of them."""
    from nlmcs.games.civ.compiled.board import _bits

    masks = [0, 1, (1 << 61) | 5, (1 << 61) - 1]
    narrow = _bits(masks, 62)
    assert narrow.tolist() == [[m >> k & 1 for k in range(62)] for m in masks]
    wide = [(1 << 90) | 3, 1 << 70]
    assert _bits(wide, 91).tolist() == [[m >> k & 1 for k in range(91)] for m in wide]
