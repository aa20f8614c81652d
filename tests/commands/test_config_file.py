"""`--config FILE`: a TOML file or a recorded run.json gives the same settings as the options it
stands for, options given override it, and a bad file is one line naming the file and the key,
before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlmcs.cli import main, parse_command_line
from nlmcs.commands.ablation import build_spec
from nlmcs.commands.config_file import ADDED, REMOVED
from nlmcs.commands.options import configs, corpus_options
from nlmcs.errors import UserInputError
from nlmcs.methods import get_method
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig

ROOT = Path(__file__).resolve().parents[2]
FINAL = ROOT / "results/manual-ablation/final-2929/run.json"
STATE_ACTION = ["--max-sentences", "10", "--rank-sentences", "state-action", "--overlap-state",
                "--center", "--normalize", "--alpha", "0.001", "--hidden-l2", "0",
                "--hidden-update", "expected", "--hidden-alpha", "1.0", "--persist", "hidden"]
README_FINAL = ["--methods", "text,random-text,nonlinear,linear", "--map", "small",
                "--full-games", "--max-turns", "20", "--rollouts", "30", "--depth", "5", "--seed",
                "2929", "--games", "300", *STATE_ACTION]  # fmt: skip
"""README's command of the fifth attempt's main block (`--workers` and `--out` aside)."""


def _spec(*argv):
    return build_spec(parse_command_line(["ablation", "run", *map(str, argv)]))[0]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_toml_file_gives_the_spec_of_the_options_it_stands_for(tmp_path):
    toml = _write(tmp_path / "final.toml", """
methods = ["text", "random-text", "nonlinear", "linear"]
map = "small"
full_games = true
max_turns = 20
rollouts = [30]
seed = 2929
games = 300
model_preset = "state-action"

[search]
depth = 5
""")
    assert _spec("--config", toml) == _spec(*README_FINAL)
    assert _spec("--config", toml).fingerprint() == _spec(*README_FINAL).fingerprint()


def _in_identity(added: dict) -> dict:
    """The added options a run's identity holds: not those added later still at their old
    value (the `LATER_FIELDS` of `ModelConfig` and `SearchConfig`)."""
    from nlmcs.model.config import LATER_FIELDS
    from nlmcs.search.config import LATER_FIELDS as SEARCH_LATER

    later = {**LATER_FIELDS, **SEARCH_LATER}
    return {k: v for k, v in added.items() if later.get(k, object()) != v}


def test_a_recorded_run_json_replays_its_settings(tmp_path, caplog):
    # The run was recorded when PUCT's constant defaulted to 1.0 (the text methods ignore it).
    with caplog.at_level("INFO", logger="nlmcs.notice"):
        spec = _spec("--config", FINAL)
    # it used --center, whose first roll-out of a step has learned nothing since: not its games
    assert "not the same games: --center" in caplog.text
    # and before twins were drawn per game: random-text read one twin, of seed 0
    assert spec == _spec(*README_FINAL, "--puct-c", "1.0", "--twin-seed", "0")
    record = json.loads(FINAL.read_text())
    stored = record["identities"][record["fingerprint"]]
    ident = spec.identity()
    for key in stored:
        if key == "model":  # the removed options held today's behaviour: dropped; options
            # added later are in the identity only where they change the game
            assert ident[key] == {**_in_identity(ADDED[key]),
                                  **{k: v for k, v in stored[key].items()
                                     if k not in REMOVED[key]}}
        elif key == "search":
            assert ident[key] == {k: v for k, v in stored[key].items() if k != "late_refresh"}
        else:
            assert ident[key] == stored[key], key
    assert spec.to_dict()["arms"] == record["spec"]["arms"]


def test_options_given_override_the_file(tmp_path):
    spec = _spec("--config", FINAL, "--games", "2", "--depth", "7", "--no-center",
                 "--methods", "text,linear")  # fmt: skip
    assert (spec.games, spec.search.depth, spec.model.center, spec.methods) == \
        (2, 7, False, ("text", "linear"))
    assert spec.model.persist == "hidden" and spec.seed == 2929  # the rest is the file's
    toml = _write(tmp_path / "p.toml", 'seed = 4\nsteps = 9\nmodel_preset = "state-action"\n'
                                       '[model]\nalpha = 0.002\nmax_sentences = "none"\n'
                                       '[search]\nbatch = 3\n[corpus]\nprior = "naive-bayes"\n')
    args = parse_command_line(["play", "--config", str(toml), "--steps", "5", "--batch", "4"])
    search, model = configs(args)
    assert (args.seed, args.steps, search.batch, model.alpha) == (4, 5, 4, 0.002)
    assert model.max_sentences is None and model.persist == "hidden"  # file > preset
    assert corpus_options(args).prior == "naive-bayes"
    args = parse_command_line(["play", "--config", str(toml), "--alpha", "0.003",
                               "--model-preset", "release"])  # fmt: skip
    model = configs(args)[1]
    assert model.alpha == 0.003 and model.persist == "none"  # flag > file > preset (the flag's)


def test_an_ablation_files_depth_beats_the_preset(tmp_path):
    toml = _write(tmp_path / "q.toml", 'preset = "quick"\n[search]\ndepth = 3\n')
    assert _spec("--config", toml).search.depth == 3
    assert _spec("--config", toml, "--depth", "4").search.depth == 4
    assert _spec("--preset", "quick").search.depth == 5


def test_every_command_with_search_options_takes_a_config(tmp_path):
    toml = _write(tmp_path / "c.toml", "seed = 3\n[search]\ndepth = 2\n[model]\nl2 = 0.5\n")
    for command in (["play"], ["bench", "step"], ["bench", "search"],
                    ["relevance", "accuracy", "--out", "x"], ["freeciv", "play"],
                    ["ablation", "run"]):
        args = parse_command_line([*command, "--config", str(toml)])
        search, model = configs(args)
        assert (args.seed, search.depth, model.l2) == (3, 2, 0.5), command


STORED = sorted(p for p in ROOT.glob("results/**/run.json")
                if "spec" in json.loads(p.read_text()))
"""The stored ablations' records (a training's or an audit's run.json re-runs its own command)."""
STALE = {"civ-guide", "civ-guide-expected", "civ-guide-full-games",
         "civ-guide-full-games-replication", "freeciv-classic", "freeciv-classic-full-games",
         "full-games-budget-60x10-scout", "advice-learned", "advice-prior-0.2", "mean-q",
         "no-priors", "priors", "game-features", "no-game-features",
         "no-game-features-state-action"}  # fmt: skip
"""Stored runs (under results/manual-ablation/) that used an option removed after 0587f02
(rank_sentences state, the priors, advice, no game features, hidden_update error)."""


@pytest.mark.parametrize("path", STORED, ids=[str(p.parent.relative_to(ROOT)) for p in STORED])
def test_every_stored_run_loads_or_says_which_options_are_gone(path):
    stale = path.parent.name in STALE and "manual-ablation" in path.parent.parts
    if stale:
        with pytest.raises(UserInputError, match="no longer (an option|options).*commit 0587f02"):
            _spec("--config", path)
        return
    spec = _spec("--config", path)
    record = json.loads(path.read_text())["spec"]
    # runs recorded before twins were drawn per game read one, of seed 0
    twin_seed = record.get("twin_seed", 0)
    got = spec.to_dict()
    # the corpus's content joined the identity after these runs (issue 60): recorded now
    content = got.pop("corpus_content", None)
    assert (content is not None) == any(get_method(m).corpus for m in spec.methods)
    assert got == {**record, "twin_seed": twin_seed,
                              "version": spec.to_dict()["version"],
                              "model": spec.to_dict()["model"],
                              "search": spec.to_dict()["search"]}  # fmt: skip
    for section in ("model", "search"):
        kept = {**_in_identity(ADDED.get(section, {})),
                **{k: v for k, v in record[section].items() if k not in REMOVED.get(section, {})}}
        assert spec.to_dict()[section] == kept


def test_every_network_a_stored_run_names_is_in_the_repository_with_its_recorded_hash():
    """A run that names a scratch copy (`/tmp/...`) loads only on the machine that made it."""
    from nlmcs.files import sha256_file

    named = 0
    for path in STORED:
        net = (json.loads(path.read_text())["spec"].get("net") or {})
        if net.get("net") not in (None, "shipped"):  # "shipped": the network the code ships
            where = ROOT / net["net"]
            assert not Path(net["net"]).is_absolute() and where.is_file(), f"{path}: {net['net']}"
            assert sha256_file(where).startswith(net["sha256"]), path
            named += 1
    assert named >= 14


def test_the_state_action_preset_is_the_setting_of_the_final_blocks():
    for name in ("final-2929", "final-3939-100x10", "civ-guide-full-games-state-action-fresh-8383"):
        model = json.loads((ROOT / "results/manual-ablation" / name / "run.json").read_text())
        kept = {**ADDED["model"], **{k: v for k, v in model["spec"]["model"].items()
                                     if k not in REMOVED["model"]}}
        assert kept == ModelConfig.preset("state-action").to_dict(), name


BAD = [
    ("missing.toml", None, "missing.toml: no such file or directory"),
    ("folder", None, "folder: is a directory"),
    ("a.toml", "seed = [", "a.toml: not valid TOML"),
    ("a.json", '{"seed": ', "a.json: not valid JSON (line 2"),
    ("a.toml", "seeds = 1", "unknown key 'seeds'"),
    ("a.toml", 'seed = "1"', "seed = \"1\": must be an integer"),
    ("a.toml", "seed = -1", "seed = -1: must be between 0 and 4294967295"),
    ("a.toml", "steps = 2.5", "steps = 2.5: must be an integer"),
    ("a.toml", 'log_states = "yes"', "log_states = \"yes\": must be true or false"),
    ("a.toml", 'model_preset = "x"', "model_preset = \"x\": choose from"),
    ("a.toml", "rollouts = 5", "rollouts belongs in [search]"),
    ("a.toml", "[model]\nalpha = 5", "[model] alpha = 5: must be"),
    ("a.toml", "[model]\nalpha = nan", "[model] alpha = NaN: must be a finite number"),
    ("a.toml", '[model]\nhidden_update = "relase"',
     "[model] hidden_update = \"relase\": choose from release, consistent, expected"),
    ("a.toml", "[model]\npassess = 3", "[model] unknown key 'passess'"),
    ("a.toml", "[model]\ncenter = 1", "[model] center = 1: must be true or false"),
    ("a.toml", '[model]\nkind = "linear"', "[model] kind = \"linear\": set by --method"),
    ("a.toml", "[search]\nrollouts = true", "[search] rollouts = true: must be an integer"),
    ("a.toml", '[search.reward_weights]\nscore = "x"', "reward_weights"),
    ("a.toml", "model = 1", "model must be a section"),
    ("a.toml", "[corpus]\npool_size = 0", "[corpus] pool_size = 0: must be at least 1"),
]  # fmt: skip


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[2][:40] for b in BAD])
def test_a_bad_file_is_one_line_naming_the_file_and_the_key(name, text, message, tmp_path,
                                                            monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    if text is not None:
        _write(tmp_path / name, text + "\n")
    assert main(["play", "--config", name, "--map", "tiny", "--steps", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"error: {name}"), err
    assert message in err, err


def test_a_stale_run_is_refused_naming_its_removed_options(capsys):
    path = ROOT / "results/manual-ablation/civ-guide/run.json"
    assert main(["ablation", "run", "--config", str(path), "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err
    assert ('[model] hidden_update = "error", prior_match = 0.5, prior_overlap = 1.0, '
            'rank_sentences = "state" are no longer options (removed after commit 0587f02, '
            'which reproduces this run)') in err


def test_a_run_json_is_an_ablations_file_only(capsys):
    assert main(["play", "--config", str(FINAL)]) == 2
    assert "the run.json of `nlmcs ablation run`, not of `nlmcs play`" in capsys.readouterr().err


def test_a_run_recorded_today_replays_its_twins(tmp_path):
    # A run.json written now says which twins random-text read: one per game (null) or one.
    from nlmcs.experiments.ablation.spec import AblationSpec
    from nlmcs.experiments.ablation.store import RUN_NAME, start_run

    for twin_seed in (None, 7):
        spec = AblationSpec(methods=("text", "random-text"), rollouts=(4,), games=2, seed=3,
                            steps=2, twin_seed=twin_seed)
        (tmp_path / str(twin_seed)).mkdir()
        start_run(tmp_path / str(twin_seed), spec)
        assert _spec("--config", tmp_path / str(twin_seed) / RUN_NAME).twin_seed == twin_seed


def test_a_files_flags_can_be_turned_off_on_the_command_line(tmp_path):
    spec = _spec("--config", FINAL, "--no-full-games", "--steps", "5")
    assert (spec.full_games, spec.steps) == (False, 5)
    with pytest.raises(UserInputError, match="--no-full-games"):
        _spec("--config", FINAL, "--steps", "5")
    toml = _write(tmp_path / "r.toml", "release = true\n")
    args = parse_command_line(["play", "--config", str(toml), "--no-release"])
    assert configs(args) == (SearchConfig(), ModelConfig())


def test_a_run_the_fixes_leave_alone_replays_without_a_note(caplog):
    with caplog.at_level("INFO", logger="nlmcs.notice"):
        _spec("--config", ROOT / "results/corpus-ablation/fresh-7575/run.json")
        assert not caplog.text
        _spec("--config", ROOT / "results/corpus-ablation/paper-fresh-7575/run.json")
    assert "--prior-mode visits" in caplog.text


def test_relative_paths_in_a_config_file_are_relative_to_the_file(tmp_path, monkeypatch):
    """Issue 60 class 7: they resolved against the folder the command ran from."""
    from nlmcs.cli import parse_command_line

    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "c.toml").write_text('log_decisions = "logs/d.jsonl"\nmanual = "civ-guide"\n'
                                   '[reader]\nreader = "readers/r.json"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    args = parse_command_line(["play", "--method", "uct-text", "--config",
                               str(folder / "c.toml")])
    assert args.log_decisions == folder / "logs" / "d.jsonl"
    assert args.manual == "civ-guide"  # a name stays a name
    assert args.config_sections["reader"]["reader"] == str(folder / "readers" / "r.json")
    # given on the command line, a path is the shell's, relative to where the command runs
    args = parse_command_line(["play", "--config", str(folder / "c.toml"), "--log-decisions",
                               "x.jsonl"])
    assert str(args.log_decisions) == "x.jsonl"
    # a field that only names a file takes a bare name as a file next to the config file
    (folder / "bare.toml").write_text('[reader]\nreader = "r.json"\n[corpus]\ncorpus = "demo"\n')
    args = parse_command_line(["play", "--method", "uct-text-corpus", "--config",
                               str(folder / "bare.toml")])
    assert args.config_sections["reader"]["reader"] == str(folder / "r.json")
    assert args.config_sections["corpus"]["corpus"] == "demo"  # a corpus by name stays a name


def _rows(folder: Path) -> list[dict]:
    """A results file's rows without what a replay may change (timings, pids)."""
    out = []
    for line in (folder / "games.jsonl").read_text().splitlines():
        row = json.loads(line)
        out.append({k: v for k, v in row.items() if "seconds" not in k and k != "pid"})
    return out


def test_an_audits_run_json_re_runs_the_audit(tmp_path, capsys):
    first, again = tmp_path / "first", tmp_path / "again"
    argv = ["advice", "audit", "--only", "first-city", "--turns", "3,4", "--games", "2",
            "--seed", "5", "--map", "tiny", "--no-progress"]
    assert main([*argv, "--out", str(first)]) == 0
    capsys.readouterr()
    record = first / "run.json"
    # into its own folder it plays nothing; into another, the same games
    assert main(["advice", "audit", "--config", str(record), "--out", str(first),
                 "--no-progress"]) == 0
    assert main(["advice", "audit", "--config", str(record), "--out", str(again),
                 "--no-progress"]) == 0
    assert _rows(again) == _rows(first)
    assert json.loads((again / "run.json").read_text())["identity"] == json.loads(
        record.read_text())["identity"]
    # options given override the file's
    args = parse_command_line(["advice", "audit", "--config", str(record), "--games", "7"])
    assert (args.games, args.seed, args.turns, args.only) == (7, 5, "3,4", "first-city")


def test_a_trainings_run_json_gives_its_settings(tmp_path):
    from nlmcs.commands.options import merged
    from nlmcs.net.spec import TrainSpec

    record = ROOT / "results/net/civ-small/train.json"
    args = parse_command_line(["net", "train", "--config", str(record), "--out",
                               str(tmp_path / "again")])
    stored = json.loads(record.read_text())
    spec = merged(args, "train", TrainSpec())
    assert spec.identity() == stored["identity"] and spec.generations == stored["generations"]


def test_a_run_json_is_read_only_by_the_command_that_wrote_it(tmp_path, capsys):
    record = ROOT / "results/net/civ-small/train.json"
    code = main(["advice", "audit", "--config", str(record), "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "the run.json of `nlmcs net train`, not of `nlmcs advice audit`" in err
    assert not (tmp_path / "x").exists()


def test_a_notice_of_reading_a_config_file_reaches_the_user(tmp_path, capsys):
    """Notices print from the start: one given while the --config file is read (before the
    command runs) is not lost."""
    record = ROOT / "results/advice/civ-guide/audit.json"
    args = ["advice", "audit", "--config", str(record), "--games", "1", "--turns", "2",
            "--out", str(tmp_path / "one"), "--no-progress"]
    assert main(args) == 0
    assert "drew their chance by the legacy rule" in capsys.readouterr().err


@pytest.mark.parametrize("identity,needle", [
    ({"turns": "x"}, 'identity.turns = "x": must be a list of integers'),
    ({"turns": [5, "x"]}, "identity.turns = [5, \"x\"]: must be a list of integers"),
    ({"rules": [3]}, "identity.rules = [3]: must be a list of names"),
    ({"seed": -1}, "seed = -1: must be between 0"),
])
def test_a_damaged_audit_record_is_refused_by_its_file_before_any_game(tmp_path, capsys,
                                                                      identity, needle):
    record = tmp_path / "run.json"
    record.write_text(json.dumps({"format": "nlmcs-advice-audit-run/1", "identity": identity}))
    out = tmp_path / "out"
    assert main(["advice", "audit", "--config", str(record), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert str(record) in err and needle in err and "\n" not in err
    assert not out.exists()


def test_a_preset_a_run_record_overrides_entirely_is_refused(tmp_path):
    record = Path(__file__).parents[2] / "results" / "corpus-ablation" / "puct" / "run.json"
    for flags in (["--release"], ["--model-preset", "release"]):
        args = parse_command_line(["ablation", "run", "--config", str(record), *flags,
                                   "--out", str(tmp_path / "x")])
        with pytest.raises(UserInputError, match=f"{flags[0]}: the --config file sets every"):
            configs(args)
    args = parse_command_line(["ablation", "run", "--config", str(record), "--model-preset",
                               "default", "--out", str(tmp_path / "x")])
    configs(args)  # the defaults' preset says nothing a record could override


def test_a_run_of_an_earlier_shipped_network_replays_that_file_not_todays_default():
    """100-turn games played before the long network shipped used the 20-turn one: loaded from
    their record they play it again (by hash), where a plain command now plays the new one."""
    from nlmcs.net.guide import default_net

    record = ROOT / "results/net/long-final/normal-ref/run.json"
    spec = _spec("--config", record)
    assert Path(spec.net.net) == default_net("civ", 20)
    assert spec.identity()["net"]["net"] == "shipped"
    plain = _spec("--methods", "puct-net", "--map", "small", "--full-games", "--max-turns", "100")
    assert plain.net.net is None
    assert plain.identity()["net"]["sha256"] == "7ca9465cbb4f7e2c"  # self-play generation 2
    assert spec.identity()["net"]["sha256"] == "ed331591b8757742"
    # the second block's reference arm played the goal-word clone, shipped until that block
    clone = _spec("--config", ROOT / "results/net/long-final-2/normal-ref/run.json")
    assert Path(clone.net.net).name == "civ-100-clone.pt"
    assert clone.identity()["net"]["sha256"] == "6f41bfdd72f83de4"
