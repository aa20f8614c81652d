"""Rules written as data, the players that follow or break them, and the audit's bookkeeping."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlmcs.advice.policy import AdvisedPolicy
from nlmcs.advice.rules import default_rules_path, load_rules
from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.experiments.advice_audit import AuditSpec, play_seed, read_rows, run_audit, summarise
from nlmcs.games import make_game
from nlmcs.games.base import Action
from nlmcs.games.civ.labels import vocabulary
from nlmcs.games.runner import play_game

SENTENCE = "Build your first city at once."
FIRST_CITY = f"""
manual = "civ-guide"
[[rule]]
name = "first-city"
sentences = ["{SENTENCE}"]
agent = "settlers"
civ_unless = ["city"]
do = "build city"
break_until = 4
"""


@pytest.fixture(scope="module")
def game():
    return make_game("civ", preset="small", max_turns=30)


def rules_from(tmp_path, text, game, sentences=(SENTENCE,)):
    path = tmp_path / "rules.advice.toml"
    path.write_text(text)
    return load_rules(path, vocabulary=vocabulary(game.tables), sentences=list(sentences))


def test_the_shipped_guide_rules_name_only_the_games_labels(game):
    path = default_rules_path("civ-guide")
    assert path is not None and path.name == "civ-guide.advice.toml"
    rules = load_rules(path, vocabulary=vocabulary(game.tables)).rules
    assert {"first-city", "expand", "improve-land"} <= {r.name for r in rules}
    expand = next(r for r in rules if r.name == "expand")
    assert expand.recommends and expand.action == ("build settlers",)
    assert expand.applies(("city",), ("city", "small", "growing"), ("civilization",))
    assert not expand.applies(("city",), ("city", "small", "enemy"), ("civilization",))
    assert not expand.applies(("settlers",), ("small",), ("civilization",))


@pytest.mark.parametrize("change, message", [
    (('agent = "settlers"', 'agent = "wizard"'), "'agent' names 'wizard': the game has no such"),
    (('do = "build city"', 'do = "build spaceship"'), "'do' names 'build spaceship'"),
    (('civ_unless = ["city"]', 'civ_unless = ["haunted"]'), "'civ_unless' names 'haunted'"),
    ((SENTENCE, "Build a palace of gold."), "sentence not in the manual"),
    (("break_until = 4", "break_until = 0"), "'break_until' must be a turn number"),
    (("break_until = 4", 'avoid = "wait"'), "give exactly one of 'do' and 'avoid'"),
    (("break_until = 4", 'colour = "red"'), "unknown key 'colour'"),
])
def test_a_bad_rule_is_one_line_naming_the_file_and_rule(tmp_path, game, change, message):
    old, new = change
    with pytest.raises(UserInputError) as err:
        rules_from(tmp_path, FIRST_CITY.replace(old, new), game)
    text = str(err.value)
    assert message in text and "rules.advice.toml: rule 1" in text and "\n" not in text


def test_a_rule_name_used_twice_is_refused(tmp_path, game):
    with pytest.raises(UserInputError, match="used twice"):
        rules_from(tmp_path, FIRST_CITY + FIRST_CITY.split("\n", 2)[2], game)


class Waiting:
    """A base that waits with every agent."""

    name = "waiting"

    def joint_action(self, state, player, rng):
        return {agent: Action("wait") for agent in state.agents(player)}


def test_following_enforces_the_action_and_breaking_forbids_it_until_its_turn(tmp_path, game):
    rule = rules_from(tmp_path, FIRST_CITY, game).rules[0]
    state = game.new_initial_state(3)
    rng = np.random.default_rng(0)
    settlers = [a for a in state.agents(0) if "settlers" in state.agent_labels(a)]
    assert settlers
    follow = AdvisedPolicy(Waiting(), rule, "follow")
    joint = follow.joint_action(state, 0, rng)
    assert all(joint[a] == Action("build_city") for a in settlers)
    assert follow.changes == len(settlers)
    ai = game.policy("builtin:normal")
    founding = ai.joint_action(state, 0, np.random.default_rng(0))
    assert Action("build_city") in founding.values()  # the AI founds at once: breaking matters
    broken = AdvisedPolicy(ai, rule, "break").joint_action(state, 0, np.random.default_rng(0))
    assert Action("build_city") not in broken.values()
    state.turn = rule.break_until  # from that turn on the rule is no longer broken
    late = AdvisedPolicy(ai, rule, "break").joint_action(state, 0, np.random.default_rng(0))
    assert late == ai.joint_action(state, 0, np.random.default_rng(0))


def test_a_horizon_reads_the_state_a_game_of_that_length_ends_in(tmp_path, game):
    spec = AuditSpec(manual="civ-guide", manual_sha256=None, rules_file="r", rules_sha256="x",
                     rules=("first-city",), turns=(6, 30), games=1, seed=0, max_turns=30)
    rules = rules_from(tmp_path, FIRST_CITY, game).rules
    row = play_seed(spec, rules, 0, 11, "fp")
    assert [a["arm"] for a in row["arms"]] == ["base", "follow:first-city", "break:first-city"]
    short = make_game("civ", preset="small", max_turns=6)
    ai = short.policy("builtin:normal")
    for arm in row["arms"]:
        player = AdvisedPolicy(ai, rules[0], "break") if arm["mode"] == "break" else ai
        result = play_game(short, {0: player, 1: short.policy("builtin:normal")}, seed=11)
        six = arm["horizons"]["6"]
        assert six["turn"] == 6
        assert six["margin"] == pytest.approx(result.scores[0] - result.scores[1])
        assert six["win"] == (result.winner == 0)
    broken = next(a for a in row["arms"] if a["mode"] == "break")
    assert broken["changes"] > 0


def test_a_folder_stored_before_the_chance_rule_was_named_resumes_with_the_legacy_rule(
        tmp_path, game):
    from dataclasses import replace

    from nlmcs.seeds import CHANCE_RULE, LEGACY_CHANCE

    rules = rules_from(tmp_path, FIRST_CITY, game).rules
    spec = AuditSpec(manual="civ-guide", manual_sha256=None, rules_file="r", rules_sha256="x",
                     rules=("first-city",), turns=(5, 10), games=1, seed=4,
                     base="random")  # a player that draws from the chance stream
    assert spec.chance == CHANCE_RULE and spec.identity()["chance"] == CHANCE_RULE
    old = replace(spec, chance=LEGACY_CHANCE)
    assert "chance" not in old.identity()  # as folders were stored before the rule was named
    folder = tmp_path / "old"
    first = run_audit(old, rules, folder)
    rows = run_audit(replace(spec, games=2), rules, folder)  # today's command line
    assert rows[0] == first[0] and len({r["fingerprint"] for r in rows}) == 1
    assert rows[1]["arms"] == play_seed(old, rules, 1, rows[1]["seed"], "fp")["arms"]
    # the two rules are different games
    new = run_audit(replace(spec, games=2), rules, tmp_path / "new")
    assert [r["seed"] for r in new] == [r["seed"] for r in rows]
    assert [a["horizons"] for r in new for a in r["arms"]] != \
        [a["horizons"] for r in rows for a in r["arms"]]


def test_an_audit_resumes_and_refuses_another_audit_in_its_folder(tmp_path, game):
    rules = rules_from(tmp_path, FIRST_CITY, game).rules
    spec = AuditSpec(manual="civ-guide", manual_sha256=None, rules_file="r", rules_sha256="x",
                     rules=("first-city",), turns=(5, 10), games=2, seed=4)
    folder = tmp_path / "audit"
    first = run_audit(spec, rules, folder)
    more = AuditSpec(**{**spec.__dict__, "games": 3})
    rows = run_audit(more, rules, folder)
    assert sorted(r["index"] for r in rows) == [0, 1, 2]
    stored = read_rows(folder)
    assert len(stored) == 3 and stored[:2] == first  # the first two were not played again
    with pytest.raises(UserInputError, match="holds another audit .*turns"):
        run_audit(AuditSpec(**{**spec.__dict__, "turns": (5, 12)}), rules, folder)
    summary = summarise(rows, more)
    assert [(s["turns"], s["pairs"]) for s in summary] == [(5, 3), (10, 3)]
    follow = {r["index"]: a for r in rows for a in r["arms"] if a["mode"] == "follow"}
    broken = {r["index"]: a for r in rows for a in r["arms"] if a["mode"] == "break"}
    worth = np.mean([follow[i]["horizons"]["10"]["margin"] - broken[i]["horizons"]["10"]["margin"]
                     for i in range(3)])
    assert summary[1]["worth"] == pytest.approx(worth, abs=1e-3)


def test_a_damaged_audit_line_is_named(tmp_path, game):
    folder = tmp_path / "audit"
    folder.mkdir()
    (folder / "games.jsonl").write_text(json.dumps({"format": "other"}) + "\n")
    with pytest.raises(UserInputError, match="games.jsonl line 1: not an audit row"):
        read_rows(folder)


def test_audit_command_writes_its_tables_and_refuses_bad_input_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["advice", "audit", "--only", "first-city,improve-land", "--turns", "5,8",
                 "--games", "2", "--seed", "1", "--out", str(out), "--no-progress"])
    assert code == 0
    assert {p.name for p in out.iterdir()} >= {"run.json", "games.jsonl", "games.csv",
                                               "summary.csv", "summary.md", "worth.png"}
    assert "| first-city | 5 | 2 |" in capsys.readouterr().out
    bad = [(["--turns", "5,200", "--max-turns", "100"], "longer than the game's turn limit"),
           (["--only", "nope"], "no rule named nope"),
           (["--base", "wizard"], "unknown player 'wizard'"),
           (["--rules", str(tmp_path / "missing.toml")], "missing.toml")]
    for extra, message in bad:
        folder = tmp_path / "never"
        code = main(["advice", "audit", "--games", "1", "--out", str(folder), "--no-progress",
                     *extra])
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and "\n" not in err, (extra, err)
        assert not folder.exists()


def test_an_audit_plays_against_a_network_opponent_as_every_command_does(tmp_path, capsys):
    """The opponent is made by `methods.opponent_policy`, as in play, ablations and series."""
    folder = tmp_path / "audit"
    code = main(["advice", "audit", "--only", "first-city", "--turns", "3", "--games", "1",
                 "--opponent", "net", "--out", str(folder), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    rows = read_rows(folder)
    assert len(rows) == 1 and [a["arm"] for a in rows[0]["arms"]] == [
        "base", "follow:first-city", "break:first-city"]


def _small_audit(tmp_path, game, games=2):
    rules = rules_from(tmp_path, FIRST_CITY, game).rules
    spec = AuditSpec(manual="civ-guide", manual_sha256=None, rules_file="r", rules_sha256="x",
                     rules=("first-city",), turns=(4,), games=games, seed=4, map="tiny")
    return spec, rules


def test_an_audit_cut_by_a_crash_resumes_through_the_shared_tail_repair(tmp_path, game, caplog):
    """The run store's one tail repair drops a half line once; the stored seeds are kept."""
    spec, rules = _small_audit(tmp_path, game)
    folder = tmp_path / "audit"
    first = run_audit(spec, rules, folder)
    results = folder / "games.jsonl"
    results.write_bytes(results.read_bytes() + b'{"format": "nlmcs-advice-game/1", "ind')
    rows = run_audit(AuditSpec(**{**spec.__dict__, "games": 3}), rules, folder)
    assert "dropped a last line cut off" in caplog.text
    assert sorted(r["index"] for r in rows) == [0, 1, 2]
    assert read_rows(folder)[:2] == first  # kept, not played again
    assert results.read_bytes().count(b"\n") == 3 and results.read_bytes().endswith(b"\n")


def test_an_interrupted_audit_keeps_its_stored_seeds(tmp_path, game, monkeypatch):
    from nlmcs.experiments import advice_audit

    spec, rules = _small_audit(tmp_path, game, games=3)
    folder = tmp_path / "audit"
    real = advice_audit._play_job

    def interrupted_at_seed_1(job):
        if job[2] == 1:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(advice_audit, "_play_job", interrupted_at_seed_1)
    with pytest.raises(KeyboardInterrupt):
        run_audit(spec, rules, folder)
    assert [r["index"] for r in read_rows(folder)] == [0]
    monkeypatch.setattr(advice_audit, "_play_job", real)
    played = []
    monkeypatch.setattr(advice_audit, "_play_job", lambda job: played.append(job[2]) or real(job))
    rows = run_audit(spec, rules, folder)
    assert played == [1, 2] and sorted(r["index"] for r in rows) == [0, 1, 2]


def test_an_audit_folder_of_an_older_version_is_read_and_locked_while_written(tmp_path, game):
    from filelock import FileLock

    spec, rules = _small_audit(tmp_path, game)
    folder = tmp_path / "audit"
    first = run_audit(spec, rules, folder)
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").unlink()  # as an older version left it: audit.json, no run.json
    (folder / "audit.json").write_text(json.dumps({k: run[k] for k in
                                                   ("identity", "games", "fingerprint")}))
    with pytest.raises(UserInputError, match="holds another audit .*turns"):
        run_audit(AuditSpec(**{**spec.__dict__, "turns": (5,)}), rules, folder)
    assert read_rows(folder) == first
    other = FileLock(str(folder / ".lock"), is_singleton=False)  # as another process holds it
    with other, pytest.raises(UserInputError, match="another nlmcs process"):
        run_audit(spec, rules, folder)
    rows = run_audit(AuditSpec(**{**spec.__dict__, "games": 3}), rules, folder)
    assert rows[:2] == first and json.loads((folder / "run.json").read_text())["games"] == 3


def test_an_audit_on_a_dask_cluster_stores_the_same_rows(tmp_path, game, monkeypatch):
    """One job loop: the audit plays on a Dask cluster as the ablations do."""
    distributed = pytest.importorskip("distributed")
    from nlmcs.jobs import dask_executor

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "1")  # pin_threads runs in this process (in-process workers)
    spec, rules = _small_audit(tmp_path, game)
    local = run_audit(spec, rules, tmp_path / "local")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)  # fmt: skip
    with cluster, dask_executor(cluster.scheduler_address, timeout=10) as (executor, threads):
        rows = run_audit(spec, rules, tmp_path / "dask", executor=executor,
                         max_in_flight=2 * threads)
    assert sorted(rows, key=lambda r: r["index"]) == local


def test_a_smaller_games_count_never_shrinks_the_audit(tmp_path, game):
    """Issue 60 class 2: `--games 2` over the shipped 300-seed audit rewrote its summary from
    2 seeds; the tables now cover every stored seed, and run.json keeps the larger count."""
    import dataclasses

    spec, rules = _small_audit(tmp_path, game, games=3)
    folder = tmp_path / "audit"
    assert [r["index"] for r in run_audit(spec, rules, folder)] == [0, 1, 2]
    fewer = dataclasses.replace(spec, games=2)
    assert [r["index"] for r in run_audit(fewer, rules, folder)] == [0, 1, 2]
    assert json.loads((folder / "run.json").read_text())["games"] == 3
