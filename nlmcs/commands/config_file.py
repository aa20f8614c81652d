"""`--config FILE`: a command's settings from a TOML file, or from a recorded ablation's run.json.

A TOML file's top-level keys are the command's own options by their names (`seed`, `steps`,
`methods = ["text", "linear"]`, `map`, ...) and its sections `[search]`, `[model]`, `[corpus]`
hold config fields by name; a run.json (read as JSON) is turned into the same keys, so any
stored ablation can be re-run. The file becomes the parser's defaults and the command line is
parsed again, so options given override it. Every key and value is checked before any work:
a bad one is one `UserInputError` line naming the file and the key.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Mapping
from pathlib import Path

from nlmcs.commands.options import NONE
from nlmcs.errors import UserInputError
from nlmcs.fields import field_specs
from nlmcs.files import read_document
from nlmcs.methods import CorpusOptions, NetOptions, ReaderOptions
from nlmcs.model.config import LATER_FIELDS as MODEL_LATER
from nlmcs.model.config import ModelConfig
from nlmcs.net.spec import TrainSpec
from nlmcs.search.config import LATER_FIELDS as SEARCH_LATER
from nlmcs.search.config import SearchConfig

notice = logging.getLogger("nlmcs.notice")

MAX_BYTES = 1_000_000
"""Largest config file read (a run.json is a few KB)."""
SECTIONS = {"search": SearchConfig, "model": ModelConfig, "corpus": CorpusOptions,
            "reader": ReaderOptions, "net": NetOptions, "train": TrainSpec}
REMOVED_AT = "0587f02"
"""The last commit with the options in `REMOVED`: it reproduces the runs that used them."""
REMOVED = {
    "model": {"advice": False, "prior_advice": 0.0, "prior_overlap": 0.0, "prior_match": 0.0,
              "hidden": "sample", "game_features": True},
    "search": {"late_refresh": 1},
}  # fmt: skip
"""Options removed after `REMOVED_AT`, each with its value that is today's behaviour: a recorded
run holding that value loads as if the key were absent; any other value is refused."""
ADDED = {"model": {"relevance_prior": 0.0, **MODEL_LATER}, "search": dict(SEARCH_LATER)}
"""Options added since runs were recorded, each with its value that plays as before it existed:
a recorded run without the key ran with that value."""
REMOVED_VALUES = {("model", "hidden_update"): "error", ("model", "rank_sentences"): "state"}
"""Values removed after `REMOVED_AT` from fields that remain."""


def apply_config(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 argv: list[str] | None) -> argparse.Namespace:
    """`args` parsed again with the --config file's settings as the command's defaults."""
    command = args.config_parser
    top, sections = read_config(args.config, command)
    command.set_defaults(**top, config_sections=sections)
    return parser.parse_args(argv)


def read_config(path: Path, parser: argparse.ArgumentParser) -> tuple[dict, dict]:
    """(option values by dest, {section: {field: value}}) of a config file for the command of
    `parser`, every key and value checked."""
    data = _load(path)
    recorded = "format" in data or isinstance(data.get("identity"), dict)
    notes: list[str] = []  # what a record's reader has to say, once every key is checked
    if recorded:
        data = _from_run_record(path, data, parser.prog, notes)
    fields = parser.get_default("config_fields") or {}
    generated = {name for names in fields.values() for name in names}
    options = {a.dest: a for a in parser._actions  # argparse lists its actions nowhere else
               if a.option_strings and a.dest not in generated
               and a.dest not in (argparse.SUPPRESS, "help", "config")}  # fmt: skip
    _refuse_removed(path, data)
    top = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if key in SECTIONS:
            continue
        if name in options:
            top[name] = _option_value(path, key, value, options[name])
        elif name in generated:
            section = next(s for s, names in fields.items() if name in names)
            raise UserInputError(f"{path}: {key} belongs in [{section}]")
        else:
            raise UserInputError(f"{path}: unknown key {key!r}; `{parser.prog}` takes "
                                 f"{', '.join(sorted(options))} and the sections "
                                 f"{', '.join(f'[{s}]' for s in fields)}")
    sections = {s: _section(path, s, data[s], parser, fields, {**data, **top})
                for s in SECTIONS if s in data}
    if not recorded:  # a run's record holds the paths as its command line gave them
        _relative_to_file(Path(path), top, sections, options)
    for note in notes:
        notice.info("%s: %s", path, note)
    return top, sections


PATH_FIELDS = {"reader": ("reader", "twin_reader"), "net": ("net",), "corpus": ("corpus",),
               "train": ("init",)}
"""Section fields that may name a file or folder (a corpus or manual by name is left alone)."""
FILE_FIELDS = {("reader", "reader"), ("reader", "twin_reader"), ("net", "net"), ("train", "init")}
"""Of those, the fields that only ever name a file: a bare name (`init = "start.pt"`) is a file
next to the config file too."""


def _relative_to_file(path: Path, top: dict, sections: dict, options: dict) -> None:
    """A relative path in a config file is relative to the file's folder, wherever the command
    runs from (as a shell script's own files would be); names (a manual, a corpus, no slash)
    stay names."""
    base = path.parent

    def here(value, file: bool = False):
        if isinstance(value, Path):
            return value if value.is_absolute() else base / value
        if isinstance(value, str) and (file or "/" in value) and not Path(value).is_absolute():
            return str(base / value)
        return value

    for name, value in top.items():
        if options[name].type is Path or name == "manual":
            top[name] = here(value)
    for section, names in PATH_FIELDS.items():
        for name in names:
            if name in sections.get(section, {}):
                sections[section][name] = here(sections[section][name],
                                               (section, name) in FILE_FIELDS)


def _load(path: Path) -> dict:
    toml = Path(path).suffix.lower() != ".json"  # a run.json is read as JSON, else TOML
    return read_document(path, what="config file", max_bytes=MAX_BYTES, toml=toml)


def _from_run_record(path: Path, data: dict, prog: str, notes: list[str]) -> dict:
    """The keys of a run.json (an ablation's, or the spec inside it; an advice audit's; a
    network training's) as a config of the command that wrote it."""
    from nlmcs.experiments.ablation.spec import SPEC_FORMAT
    from nlmcs.experiments.advice_audit import AUDIT_FORMAT
    from nlmcs.experiments.advice_audit import RUN_FORMAT as AUDIT_RUN
    from nlmcs.net.train import RUN_FORMAT as NET_RUN

    spec = data.get("spec", data)
    fmt = spec.get("format") if isinstance(spec, dict) else None
    if fmt is None and isinstance(data.get("identity"), dict):  # an older audit's audit.json
        fmt = data["identity"].get("format")
    readers = {SPEC_FORMAT: ("nlmcs ablation run", _from_ablation),
               AUDIT_RUN: ("nlmcs advice audit", _from_audit),
               AUDIT_FORMAT: ("nlmcs advice audit", _from_audit),
               NET_RUN: ("nlmcs net train", _from_training)}
    if fmt not in readers:
        raise UserInputError(f"{path}: format {data.get('format')!r} is not a run.json of this "
                             f"project ({', '.join(readers)})")
    command, read = readers[fmt]
    if command != prog:
        raise UserInputError(f"{path}: the run.json of `{command}`, not of `{prog}`")
    return read(path, spec, notes)


def _identity(path: Path, data: dict) -> dict:
    identity = data.get("identity")
    if not isinstance(identity, dict):
        raise UserInputError(f"{path}: its run holds no settings (no identity table)")
    return identity


def _from_audit(path: Path, data: dict, notes: list[str]) -> dict:
    """An advice audit's run.json: its identity as the audit's options. The rules file is
    named by its file name only: the shipped one of the manual is read again (its content,
    checked by the audit's identity), any other must be given as --rules."""
    from nlmcs.advice.rules import default_rules_path
    from nlmcs.files import sha256_file
    from nlmcs.seeds import LEGACY_CHANCE

    ident = _identity(path, data)
    out = {k: ident[k] for k in ("manual", "seed", "base", "opponent", "map", "max_turns",
                                 "rollouts", "depth") if ident.get(k) is not None}
    for key, option, kind in (("turns", "turns", int), ("rules", "only", str)):
        value = ident.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not value or not all(
                isinstance(v, kind) and not isinstance(v, bool) for v in value):
            what = "integers" if kind is int else "names"
            raise UserInputError(f"{path}: identity.{key} = {json.dumps(value)}: must be a "
                                 f"list of {what}")
        out[option] = value
    if data.get("games") is not None:
        out["games"] = data["games"]
    shipped = default_rules_path(str(ident.get("manual")))
    if shipped is None or not shipped.is_file() or sha256_file(shipped) != ident.get(
            "rules_sha256"):
        notes.append(f"the audit read the rules file {ident.get('rules_file')}, which is not "
                     "the shipped one as it is now: give it as --rules")
    if ident.get("chance", LEGACY_CHANCE) == LEGACY_CHANCE:
        notes.append("its games drew their chance by the legacy rule; in its own folder they "
                     "resume so, in another they are new games")
    return out


def _from_training(path: Path, data: dict, notes: list[str]) -> dict:
    """A network training's run.json: its identity and generations as [train] settings."""
    ident = _identity(path, data)
    train = {k: v for k, v in ident.items() if v is not None}
    if data.get("generations") is not None:
        train["generations"] = data["generations"]
    return {"train": train}


def _from_ablation(path: Path, spec: dict, notes: list[str]) -> dict:
    """The keys of a recorded ablation's run.json as `nlmcs ablation run`'s config."""
    # version, arms and the corpus's content are what the run was, not settings: the run is
    # replayed by this code (against the corpus as it is now, which its identity then checks).
    # A value of None is the option's default (a twin per game, no turn limit): left out.
    out = {k: v for k, v in spec.items() if k not in ("format", "version", "arms", "game_options",
                                                      "corpus_content") and v is not None}
    options = spec.get("game_options", {})
    if not isinstance(options, dict):
        raise UserInputError(f"{path}: game_options must be a table")
    renamed = {"preset": "map", "max_turns": "max_turns", "variant": "variant"}
    for key, value in options.items():
        if key not in renamed:
            raise UserInputError(f"{path}: game_options.{key} is not an option of "
                                 f"`nlmcs ablation run`")
        if value is not None:
            out[renamed[key]] = value
    if out.get("full_games") is True:
        out.pop("steps", None)  # a full game's steps are its turn limit
    readers = out.get("reader")
    if isinstance(readers, dict):  # recorded as {path, sha256}: the settings are the paths
        out["reader"] = {k: (v.get("path") if isinstance(v, dict) else v)
                         for k, v in readers.items() if v is not None}
    net = out.get("net")
    if isinstance(net, dict) and "sha256" in net:  # recorded with its hash: the settings
        settings = {"net": net.get("net"), "net_depth": net.get("net_depth"),
                    "value_weight": net.get("value_weight")}
        if net.get("net") == "shipped":  # the shipped file it played, by hash (one per horizon)
            from nlmcs.net.guide import shipped_net_of_hash

            played = shipped_net_of_hash(str(net["sha256"]))
            settings["net"] = None if played is None else str(played)
            if played is None:
                notes.append(f"its network (shipped then, sha256 {net['sha256']}) ships no "
                             "longer: the shipped network of its horizon plays instead")
        out["net"] = {k: v for k, v in settings.items() if v is not None}
    if "twin_seed" not in spec:  # recorded before twins were drawn per game: one, of seed 0
        out["twin_seed"] = 0
    _refuse_removed(path, out)  # first: a run that cannot be replayed needs no note
    changed = replay_changes(spec)
    if changed:
        notes.append(f"the same settings, but not the same games: {' and '.join(changed)} "
                     f"changed after commit {REMOVED_AT}, which replays them")
    return out


def replay_changes(spec: Mapping) -> list[str]:
    """What a recorded run used that plays differently since its fixes (so a replay gives the
    same configuration, not the same games)."""
    model, search = spec.get("model"), spec.get("search")
    model = model if isinstance(model, dict) else {}  # a damaged one is refused by its section
    search = search if isinstance(search, dict) else {}
    methods = spec.get("methods")
    methods = [m for m in methods if isinstance(m, str)] if isinstance(methods, list) else []
    out = []
    if model.get("center"):
        out.append("--center (a step's first roll-out no longer learns its raw reward)")
    corpus_trees = {"uct-corpus", "flat-ucb-corpus"} & set(methods)
    if search.get("prior_mode") == "visits" and corpus_trees:
        out.append("--prior-mode visits (the real move is a tried one, by real visits)")
    return out


def _refuse_removed(path: Path, data: dict) -> None:
    stale = []
    for section, table in data.items():
        if not isinstance(table, dict):
            continue
        removed = REMOVED.get(section, {})
        stale += [(section, k, v) for k, v in table.items()
                  if (k in removed and not _same(v, removed[k]))
                  or REMOVED_VALUES.get((section, k), ...) == v]
    if stale:
        listed = "; ".join(f"[{s}] " + ", ".join(f"{k} = {json.dumps(v)}"
                                                 for t, k, v in stale if t == s)
                           for s in dict.fromkeys(s for s, _, _ in stale))
        what = "are no longer options" if len(stale) > 1 else "is no longer an option"
        raise UserInputError(f"{path}: {listed} {what} (removed after commit {REMOVED_AT}, "
                             "which reproduces this run)")


def _same(value, neutral) -> bool:
    """`value` is `neutral` read back from a file (an int where a float was written: 0 for 0.0)."""
    same_type = type(value) is type(neutral) or (type(neutral) is float and type(value) is int)
    return same_type and value == neutral


def _section(path: Path, section: str, table, parser, fields: dict, top: dict) -> dict:
    if not isinstance(table, dict):
        raise UserInputError(f"{path}: {section} must be a section ([{section}])")
    if section not in fields:
        raise UserInputError(f"{path}: `{parser.prog}` takes no [{section}] settings")
    out = {}
    for spec in field_specs(SECTIONS[section]):
        if spec.name not in table:
            continue
        value = table[spec.name]
        where = f"{path}: [{section}] {spec.name} = {json.dumps(value, default=str)}"
        if spec.optional and spec.kind in (int, float) and value == NONE:
            value = None
        if spec.set_by is not None:
            # Set by the command; a recorded run holds the value the command set.
            agrees = top.get(spec.name, parser.get_default(spec.name) or spec.default)
            if value != agrees and value != spec.default:
                raise UserInputError(f"{where}: set by {spec.set_by}, not in [{section}]")
            continue
        if spec.name not in fields[section] and spec.kind is not Mapping:
            other = spec.name in {a.dest for a in parser._actions}
            raise UserInputError(f"{where}: " + (f"give it as the top-level key {spec.name}"
                                                 if other else f"not a setting of "
                                                 f"`{parser.prog}`"))
        stored, problem = spec.check(value)
        if problem is not None:
            raise UserInputError(f"{where}: {problem}")
        out[spec.name] = stored
    known = {spec.name for spec in field_specs(SECTIONS[section])}
    for key in table:
        if key not in known and key not in REMOVED.get(section, {}):
            raise UserInputError(f"{path}: [{section}] unknown key {key!r}")
    return out


def _option_value(path: Path, key: str, value, action: argparse.Action):
    """A top-level value checked as its option checks the command line's text."""
    where = f"{path}: {key} = {json.dumps(value, default=str)}"
    if action.nargs == 0:  # a flag: --full-games, --center / --no-center
        if not isinstance(value, bool):
            raise UserInputError(f"{where}: must be true or false")
        return value
    kind = {"integer": int, "number": float, "int": int, "float": float}.get(
        getattr(action.type, "__name__", ""), str)
    if isinstance(value, list) and kind is str:  # methods = ["text", "linear"]
        if not value or not all(isinstance(v, str | int) and not isinstance(v, bool)
                                for v in value):
            raise UserInputError(f"{where}: must be a list of names or numbers")
        value = ",".join(map(str, value))
    wanted = {int: (int,), float: (int, float), str: (str,)}[kind]
    if isinstance(value, bool) or not isinstance(value, wanted):
        what = {int: "an integer", float: "a number", str: "a string"}[kind]
        raise UserInputError(f"{where}: must be {what}")
    try:
        parsed = action.type(str(value)) if action.type is not None else value
    except (argparse.ArgumentTypeError, ValueError, TypeError) as err:
        raise UserInputError(f"{where}: {err}") from None
    if action.choices is not None and parsed not in action.choices:
        raise UserInputError(f"{where}: choose from {', '.join(map(str, action.choices))}")
    return parsed

