"""Corpus logs checked for meaning, not only syntax: each bad line is refused with its file and
line number, and nothing is stored; a log of any content is ingested or refused, never a
traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from corpus_logs import game_lines, write_log
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_support import assert_refused, assert_store_kept, run, tree_digest

from nlmcs.errors import UserInputError
from nlmcs.seeds import game_seed


def _mutated(kind: str, change) -> list[str]:
    lines = [json.loads(line) for line in game_lines("g0", seed=1)]
    first = next(r for r in lines if r["type"] == kind)
    change(first)
    return [json.dumps(r) for r in lines]


def _vector_value(value):
    def change(rec):
        rec["state_vector"][0] = value
    return change


CASES = {
    "winner outside the players": (_mutated("result", lambda r: r.update(winner=5)), "winner 5"),
    "NaN score": ([line.replace('"scores": [10.0', '"scores": [NaN')
                   for line in game_lines("g0", seed=1)], "scores"),
    "scores of the wrong length": (_mutated("result", lambda r: r.update(scores=[1.0])),
                                   "scores"),
    "decision by an unknown player": (_mutated("decision", lambda r: r.update(player=7)),
                                      "player 7"),
    "unknown action kind": (_mutated("decision", lambda r: r.update(
        action={"kind": "teleport", "arg": None})), "teleport"),
    "negative turn": (_mutated("decision", lambda r: r.update(turn=-3)), "turn"),
    "float32 overflow": (_mutated("decision", _vector_value(1e300)), "float32"),
    "integer beyond any float": (_mutated("decision", _vector_value(10**400)), "state_vector"),
    "turn beyond int64": (_mutated("turn", lambda r: r.update(turn=10**30)), "turn"),
    "no players": (_mutated("game", lambda r: r.update(players=[])), "players"),
    "repeated player numbers": (_mutated("game", lambda r: r.update(
        players=[{"player": 0, "kind": "x"}, {"player": 0, "kind": "y"}])), "repeat"),
    "another ruleset's hash": (_mutated("game", lambda r: r.update(ruleset_sha256="cd" * 32)),
                               "another ruleset"),
    "deeply nested JSON": ([*game_lines("g0", seed=1)[:2], "[" * 100_000 + "]" * 100_000,
                            *game_lines("g0", seed=1)[2:]], "nested"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_log_that_means_nothing_is_refused_by_line(case, cli, data, tmp_path):
    lines, needle = CASES[case]
    log = write_log(tmp_path / "bad.jsonl", [lines])
    result = cli("corpus", "ingest", log, "--name", "demo")
    assert_refused(result, f"{log}:", needle)
    assert_store_kept(data / "corpora" / "demo", {})


LINE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.integers(0, 30), key=st.sampled_from(
    ["type", "game_id", "turn", "player", "agent", "action", "state_vector", "after_vector",
     "winner", "scores", "turns", "players", "state_features", "seed", "applied"]),
       value=LINE)
def test_any_field_of_any_line_is_ingested_or_refused(line, key, value):
    from corpus.store import ingest

    records = [json.loads(x) for x in game_lines("g0", seed=1)]
    records[min(line, len(records) - 1)][key] = value
    with tempfile.TemporaryDirectory() as tmp:
        log = write_log(Path(tmp) / "x.jsonl", [[json.dumps(r) for r in records]])
        try:
            ingest([log], name="demo", root=Path(tmp) / "store")
        except UserInputError as err:
            assert "\n" not in str(err)


def test_record_into_a_corpus_of_other_players_is_refused(env, data):
    base = ("corpus", "record", "--name", "rec", "--games", "1", "--workers", "1",
            "--preset", "tiny", "--max-turns", "3")
    assert run(*base, env=env).code == 0
    before = tree_digest(data)
    result = run(*base, "--players", "random,random", env=env)
    assert_refused(result, f"game-{game_seed(0, 0):07d}.jsonl", "players", "another --name")
    other_map = run(*base[:-3], "small", "--max-turns", "3", env=env)
    assert_refused(other_map, "width")
    assert_store_kept(data, before)


def _swap_line(kind: str, index: int, change) -> list[str]:
    lines = [json.loads(line) for line in game_lines("g0", seed=1)]
    of_kind = [r for r in lines if r["type"] == kind]
    change(of_kind[index])
    return [json.dumps(r) for r in lines]


IMPOSSIBLE = {
    "an agent that is no agent": (_mutated("decision", lambda r: r.update(agent="zzz:abc")),
                                  "not an agent id"),
    "turns going backwards": (_swap_line("turn", 2, lambda r: r.update(turn=0)),
                              "must go forward"),
    "a decision outside its turn": (_mutated("decision", lambda r: r.update(turn=5000)),
                                    "inside turn 0"),
    "a civilization ordered by another player": (
        _mutated("decision", lambda r: r.update(agent="civ:1", player=0)), "decides for civ:1"),
    "a duplicated key": ([line.replace('{"type": "decision"', '{"type": "turn", "type": '
                                       '"decision"', 1) for line in game_lines("g0", seed=1)],
                         "appears twice"),
}


@pytest.mark.parametrize("case", list(IMPOSSIBLE))
def test_a_decision_that_cannot_happen_is_refused(case, cli, data, tmp_path):
    lines, needle = IMPOSSIBLE[case]
    log = write_log(tmp_path / "bad.jsonl", [lines])
    assert_refused(cli("corpus", "ingest", log, "--name", "demo"), f"{log}:", needle)
    assert_store_kept(data / "corpora" / "demo", {})


@pytest.fixture(scope="module")
def recorded_game(tmp_path_factory):
    """One real recorded game (its turn lines hold the states)."""
    import os
    import subprocess
    import sys

    data = tmp_path_factory.mktemp("recorded")
    subprocess.run([sys.executable, "-m", "nlmcs.cli", "corpus", "record", "--games", "1",
                    "--preset", "tiny", "--max-turns", "3", "--name", "src"], check=True,
                   env={**os.environ, "NLMCS_DATA": str(data)}, capture_output=True)
    (log,) = (data / "corpora" / "src" / "logs").glob("*.jsonl")
    return [json.loads(x) for x in log.read_text().splitlines()]


@pytest.mark.parametrize("case", ["a unit that does not exist", "another player's unit"])
def test_a_decision_by_an_agent_not_in_the_state_is_refused(case, recorded_game, cli, data,
                                                            tmp_path):
    lines = json.loads(json.dumps(recorded_game))
    first = next(r for r in lines if r["type"] == "decision" and r["agent"].startswith("unit:"))
    state = next(r for r in lines if r["type"] == "turn")["state"]
    if case == "a unit that does not exist":
        first["agent"], needle = "unit:999999", "does not exist"
    else:
        theirs = next(u for u in state["units"] if u["owner"] != first["player"])
        first["agent"], needle = f"unit:{theirs['id']}", "which belongs to player"
    log = write_log(tmp_path / "bad.jsonl", [[json.dumps(r) for r in lines]])
    assert_refused(cli("corpus", "ingest", log, "--name", "demo"), needle)
    assert_store_kept(data / "corpora" / "demo", {})
    good = write_log(tmp_path / "good.jsonl", [[json.dumps(r) for r in recorded_game]])
    assert cli("corpus", "ingest", good, "--name", "demo").code == 0


ILLEGAL = {
    # (agent kind, action kind of the decision to change, new arg, words of the refusal)
    "a move in direction 99": ("unit:", "move", 99, "cannot move 99"),
    "research of a tech the ruleset lacks": ("civ:", "research", "time travel",
                                             "cannot research 'time travel'"),
    "research without the prerequisites": ("civ:", "research", "monarchy",
                                           "cannot research 'monarchy'"),
    "a city building what it cannot": ("city:", "build", "battleship", "cannot build"),
}


@pytest.mark.parametrize("case", list(ILLEGAL))
def test_an_action_the_rules_do_not_offer_is_refused(case, recorded_game, cli, data, tmp_path):
    """The turn line's state is replayed in the engine: every player chose from it, so each
    recorded action must be among the actions the rules offered that agent there."""
    agent, kind, arg, needle = ILLEGAL[case]
    lines = json.loads(json.dumps(recorded_game))
    first = next(r for r in lines if r["type"] == "decision" and r["agent"].startswith(agent))
    first["action"] = {"kind": kind, "arg": arg}
    log = write_log(tmp_path / "bad.jsonl", [[json.dumps(r) for r in lines]])
    assert_refused(cli("corpus", "ingest", log, "--name", "demo"), f"{log}:", needle)
    assert_store_kept(data / "corpora" / "demo", {})


def test_a_turn_state_that_does_not_load_is_refused(recorded_game, cli, data, tmp_path):
    lines = json.loads(json.dumps(recorded_game))
    turn = next(r for r in lines if r["type"] == "turn")
    turn["state"]["map"]["terrain"][0] = "?" * len(turn["state"]["map"]["terrain"][0])
    log = write_log(tmp_path / "bad.jsonl", [[json.dumps(r) for r in lines]])
    assert_refused(cli("corpus", "ingest", log, "--name", "demo"), "does not load")
    assert_store_kept(data / "corpora" / "demo", {})


def test_a_human_seat_is_checked_on_what_a_turn_cannot_change(recorded_game, cli, data,
                                                             tmp_path):
    """`nlmcs serve` applies a human's orders one by one, so a human's attack may be legal only
    after earlier moves of the turn: its form is checked, its research exactly."""
    def human_log(change) -> Path:
        lines = json.loads(json.dumps(recorded_game))
        header = lines[0]
        header["players"][0]["kind"] = "human"
        change(lines)
        return write_log(tmp_path / "human.jsonl", [[json.dumps(r) for r in lines]])

    def set_first(agent: str, action: dict):
        def change(lines):
            first = next(r for r in lines if r["type"] == "decision" and r["player"] == 0
                         and r["agent"].startswith(agent))
            first["action"] = action
        return change

    attack = human_log(set_first("unit:", {"kind": "attack", "arg": 3}))
    assert cli("corpus", "ingest", attack, "--name", "demo").code == 0
    program = tmp_path / "program.jsonl"  # the same order from a program's seat is refused
    program.write_text(attack.read_text().replace('"kind": "human"', '"kind": "builtin"', 1))
    assert_refused(cli("corpus", "ingest", program, "--name", "demo4"), "cannot attack 3")
    assert_refused(cli("corpus", "ingest", human_log(set_first("unit:", {"kind": "move",
                                                                         "arg": 99})),
                       "--name", "demo2"), "cannot move 99")
    assert_refused(cli("corpus", "ingest", human_log(set_first("civ:", {"kind": "research",
                                                                        "arg": "monarchy"})),
                       "--name", "demo3"), "cannot research 'monarchy'")
