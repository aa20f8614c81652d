"""What the command modules share: subcommands with examples, and the common option groups.

The search, model and corpus options are generated from the fields of the library's configs
(`SearchConfig`, `ModelConfig`, `CorpusOptions`, declared with `nlmcs.fields`): a value out of a
field's range is one usage line naming the option, and the configs check themselves again.
Nothing heavy is imported at module level (the config modules are light), so `nlmcs --help`
stays fast.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from collections.abc import Mapping
from dataclasses import is_dataclass, replace
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.fields import MAX_GAMES, MAX_SEED, Range, field_specs, summary
from nlmcs.methods import CorpusOptions, NetOptions, ReaderOptions
from nlmcs.model.config import MODEL_PRESETS, ModelConfig
from nlmcs.search.config import SearchConfig


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's help shows its default: argparse's own "(default: X)" where the help does
    not already say what the default is, and nothing for a flag off by default or an option
    with no value unless given (those say in words what happens without them)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help = action.help or ""
        default = action.default
        if ("default" in help.lower() or not action.option_strings
                or default is None or default is False or default == argparse.SUPPRESS
                or isinstance(action, argparse.BooleanOptionalAction)):
            return help
        return f"{help} (default: %(default)s)"


def add_command(sub, name: str, *, help: str, example: str, func) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with a worked example."""
    parser = sub.add_parser(
        name,
        help=help,
        description=help[:1].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=HelpFormatter,
    )
    parser.set_defaults(func=func)
    return parser


def add_group(sub, name: str, *, help: str, example: str, dest: str):
    """A command with sub-actions (`nlmcs manual ingest`, ...); alone it prints its usage."""
    parser = add_command(sub, name, help=help, example=example, func=None)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    return parser.add_subparsers(dest=dest, metavar="ACTION")


def int_option(*, low: int | None = None, high: int | None = None):
    """An argparse `type=` for an integer in [low, high]; a bad value is a one-line usage error
    naming the option (argparse adds "argument --name:")."""
    bounds = Range(low, high)

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value not in bounds:
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def float_option(*, low: float | None = None, high: float | None = None,
                 above: float | None = None):
    """An argparse `type=` for a finite number in [low, high] (or above `above`, exclusive)."""
    bounds = Range(low, high, above)

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value not in bounds:
            raise argparse.ArgumentTypeError(f"must be a finite number {bounds}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


SEED = int_option(low=0, high=MAX_SEED)
"""Seeds are non-negative (numpy's SeedSequence refuses negative ones) and fit 32 bits, the
run seeds `nlmcs.seeds.game_seed` hashes with a game's index."""
COUNT = int_option(low=1)
"""Counts of steps, roll-outs, workers, results shown: at least 1."""
GAMES = int_option(low=1, high=MAX_GAMES)
"""Counts of games: at least 1, at most `MAX_GAMES`."""


def csv_ints(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise UserInputError(f"--{what} must be comma-separated integers, got {text!r}") from err
    if not out or min(out) < 1:
        raise UserInputError(f"--{what} needs positive integers, got {text!r}")
    return out


def csv_names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


# --- games --------------------------------------------------------------------------------------
def add_game_options(p) -> None:
    from nlmcs.games import game_entries

    entries = game_entries()
    games = "; ".join(f"{e.name}: {e.summary}" for e in entries)
    maps = "; ".join(f"{e.name}: {e.map_help}" for e in entries if e.maps)
    p.add_argument("--game", default="civ", choices=[e.name for e in entries], metavar="GAME",
                   help=f"game ({games})")
    p.add_argument("--map", default="default", help=f"map preset ({maps})")
    p.add_argument("--max-turns", type=COUNT, default=None,
                   help="game turn limit (default: game's)")
    variants = "; ".join(f"{e.name}: {', '.join(e.variants)}" for e in entries if e.variants)
    p.add_argument("--variant", default=None,
                   help=f"rule variant, stated only in each game's manual ({variants}; "
                        "default: none)")


def make_game(args):
    from nlmcs.games import game_entry
    from nlmcs.games import make_game as by_name

    options = game_entry(args.game).options(map_preset=args.map, max_turns=args.max_turns,
                                            variant=getattr(args, "variant", None))
    return by_name(args.game, **options)


def simulated_game(args):
    """`make_game` for the commands that play the game in this process (`play`, `bench
    search`, `bench step`, `relevance accuracy`): a FreeCiv match runs on a server and is
    played by `nlmcs freeciv play` and `nlmcs ablation run --game freeciv`."""
    from nlmcs.games import game_entry, simulated_games

    if not game_entry(args.game).simulated:
        here = ", ".join(e.name for e in simulated_games())
        raise UserInputError(f"--game {args.game}: this command plays a simulated game "
                             f"({here}); a {args.game} game is played on a server with `nlmcs "
                             f"freeciv play` or `nlmcs ablation run --game {args.game}`")
    return make_game(args)


# --- search, model and corpus options, generated from the config fields -------------------------
PRIOR_FIELDS = ("prior_mode", "puct_c", "prior_visits", "prior_floor", "prior_weight")
"""`SearchConfig` fields listed with the corpus options: only methods with a prior use them."""
NONE = "none"
"""What `X | None` number fields take for None, on the command line and in TOML (which has no
null)."""
CLEARED = object()
"""The parsed value of `none` (None itself means "not given")."""
PRECEDENCE = ("options given > the --config file > --model-preset > --release (the 2011 "
              "release's search and model) or the defaults")


def add_search_options(p, *, skip: tuple[str, ...] = ()) -> None:
    """--config, --release, --model-preset and an option per `SearchConfig` and `ModelConfig`
    field (bar `skip`, the fields the command sets its own way, and `PRIOR_FIELDS`, which
    `add_corpus_options` adds); an option left out keeps the value of the layers below it."""
    s = p.add_argument_group("settings", "\n".join(textwrap.wrap(
        f"Each setting is taken from the first of: {PRECEDENCE}.", 76)))
    s.add_argument("--config", type=Path, metavar="FILE",
                   help="settings from a TOML file (top-level keys: this command's options; "
                        "sections [search], [model], [corpus], [reader]: config fields) or a "
                        "recorded "
                        "ablation's run.json; options given override it")
    s.add_argument("--release", action=argparse.BooleanOptionalAction,
                   help="start from the 2011 release's search and model settings "
                        "(--no-release turns off a --config file's)")
    s.add_argument("--model-preset", choices=tuple(MODEL_PRESETS),
                   help="start from a named model setting (`ModelConfig.preset`): default, "
                        "release, state-action (the manual ablations' fourth and fifth "
                        "attempts) or selecting (relevance that selects, docs/reading.md)")
    add_fields(p, section(p, "search", "search (`SearchConfig`)"), "search", SearchConfig,
               skip=(*skip, *PRIOR_FIELDS))
    add_fields(p, section(p, "model", "model (`ModelConfig`)"), "model", ModelConfig, skip=skip)
    p.set_defaults(config_parser=p)


def add_corpus_options(p) -> None:
    g = section(p, "corpus", "corpus (uct-corpus, flat-ucb-corpus, text-corpus)")
    add_fields(p, g, "corpus", CorpusOptions)
    add_fields(p, g, "search", SearchConfig, only=PRIOR_FIELDS)
    r = section(p, "reader", "reader (uct-text, flat-ucb-text, uct-text-corpus, text-prior and "
                             "their random-text twins)")
    add_fields(p, r, "reader", ReaderOptions)
    n = section(p, "net", "network (puct-net, uct-net-prior)")
    add_fields(p, n, "net", NetOptions)
    p.set_defaults(config_parser=p)


def add_config_option(p, group=None) -> None:
    """--config FILE on a command without settings sections of the search: its options from a
    TOML file, or the run.json it wrote (the run re-run as it was); options given override it."""
    (group or p).add_argument("--config", type=Path, metavar="FILE",
                              help="options from a TOML file (keys: this command's options"
                                   "; sections: its settings), or the run.json this command "
                                   "wrote; options given override it")
    p.set_defaults(config_parser=p)


HELP_SECTION = "--help-section"


def section(p, name: str, title: str):
    """An option group that `--help` names in one line rather than listing (`--help-section
    NAME` lists it): a command's own options stay readable above the config sections."""
    group = p.add_argument_group(title)
    sections = p.__dict__.setdefault("help_sections", {})
    if not sections:
        p.add_argument(HELP_SECTION, metavar="NAME", action=SectionHelp,
                       help="list one settings section (or all) and exit")
    sections[name] = group
    return group


class SectionHelp(argparse.Action):
    """`--help-section NAME`: the help with that section's options listed."""

    def __call__(self, parser, namespace, values, option_string=None):
        sections = parser.help_sections
        if values != "all" and values not in sections:
            parser.error(f"{HELP_SECTION}: no section {values!r} (sections: "
                         f"{', '.join(sections)}, all)")
        parser.shown_sections = set(sections) if values == "all" else {values}
        parser.print_help()
        parser.exit()


def sectioned_help(parser) -> str | None:
    """The help of a command with settings sections: its own options listed, each section not
    asked for in one line (None: a command without sections, helped as argparse does)."""
    sections = getattr(parser, "help_sections", None)
    if not sections:
        return None
    shown = getattr(parser, "shown_sections", set())
    hidden = {id(g): name for name, g in sections.items() if name not in shown}
    formatter = parser._get_formatter()
    formatter.add_usage("%(prog)s [OPTIONS]", [], [])
    formatter.add_text(parser.description)
    rows = []
    for group in parser._action_groups:
        name = hidden.get(id(group))
        if name is not None:
            row = f"  {name:<8}{len(group._group_actions):>3} options  {group.title}"
            rows.append(row if len(row) <= 78 else row[:74] + " ...")
            continue
        formatter.start_section(group.title)
        formatter.add_text(group.description)
        formatter.add_arguments(group._group_actions)
        formatter.end_section()
    if rows:
        example = next(iter(sections.values()))._group_actions[0].option_strings
        formatter.start_section("settings sections")
        formatter.add_text("\n".join(textwrap.wrap(
            f"Each option is also named with its section (e.g. {' or '.join(example)}); "
            f"`{parser.prog} {HELP_SECTION} NAME` lists a section's options with their "
            "defaults:", 76)) + "\n" + "\n".join(rows))
        formatter.end_section()
    formatter.add_text(parser.epilog)
    return formatter.format_help()


def add_fields(p, group, section: str, cls, *, skip=(), only=None) -> None:
    """An option `--field-name` (also `--SECTION.field-name`) per field of `cls` (bar mappings,
    tuples, fields the command sets and `skip`; or just `only`): choices from its Literal, its
    range checked as it is parsed, help from its docstring, default None (not given); the names
    go into `config_fields`."""
    added = []
    for spec in field_specs(cls):
        if (spec.set_by or spec.kind in (Mapping, tuple) or is_dataclass(spec.kind)
                or spec.name in skip
                or (only is not None and spec.name not in only)):
            continue
        kwargs: dict = {"dest": spec.name, "default": None, "help": _help(spec)}
        if spec.kind is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif spec.choices is not None:
            kwargs["choices"] = spec.choices
        elif spec.kind in (int, float):
            kwargs["type"] = _number_option(spec)
        flag = spec.name.replace("_", "-")
        group.add_argument(f"--{flag}", f"--{section}.{flag}", **kwargs)
        added.append(spec.name)
    fields = dict(p.get_default("config_fields") or {})
    fields[section] = (*fields.get(section, ()), *added)
    p.set_defaults(config_fields=fields)


def _number_option(spec):
    bounds = spec.range or Range()
    parse = (int_option if spec.kind is int else float_option)(
        low=bounds.low, high=bounds.high, **({} if spec.kind is int else {"above": bounds.above}))
    if not spec.optional:
        return parse

    def parse_or_none(text: str):
        return CLEARED if text.strip().lower() == NONE else parse(text)

    parse_or_none.__name__ = parse.__name__
    return parse_or_none


def _help(spec) -> str:
    default = spec.default
    shown = ({True: "on", False: "off", None: NONE}.get(default, default)
             if isinstance(default, bool | None) else default)
    # only a number reads `none` as no value: a text may be a name (a corpus called none)
    clear = f"; `{NONE}` for no value" if spec.optional and spec.kind in (int, float) else ""
    return f"{summary(spec.doc)} (default: {shown}{clear})".replace("%", "%%")


OUTPUT_OPTIONS = frozenset({"out", "html", "report", "log_decisions", "csv", "png", "save_log",
                            "save_state"})
"""The options (by dest) that name what a command writes; every other path it is given
(positional, option, --config and the config file's own keys) is read."""
FILE_FIELDS = (("reader", "reader"), ("reader", "twin_reader"), ("net", "net"),
               ("train", "init"))
"""Config fields that name files a command reads."""


def check_paths(args, positional: frozenset[str] = frozenset()) -> None:
    """The one check of every command's paths, after its --config file is applied: no output
    over an input, inside a folder read as input, or over another output
    (`files.check_distinct`). `positional`: the dests named as arguments, not options."""
    from nlmcs.files import check_distinct

    inputs: dict[str, Path] = {}
    outputs: dict[str, Path] = {}
    for dest, value in sorted(vars(args).items()):
        if isinstance(value, Path):
            name = (f"the {dest.replace('_', ' ')}" if dest in positional
                    else f"--{dest.replace('_', '-')}")
            (outputs if dest in OUTPUT_OPTIONS else inputs)[name] = value
    for section, name in FILE_FIELDS:
        value = settings(args, section).get(name) if getattr(args, "config_fields", None) \
            else None
        if isinstance(value, str | Path) and str(value):
            inputs[f"--{name.replace('_', '-')}"] = Path(value)
    check_distinct(inputs, outputs)


READ_BY = {
    "corpus": ("the corpus options", "a corpus method (uct-corpus, flat-ucb-corpus, "
               "text-corpus, ...)", lambda m: m.corpus),
    "reader": ("the reader options", "a text-prior method (uct-text, text-prior, ...)",
               lambda m: m.text_prior),
    "net": ("the network options", "a network method (puct-net, uct-net-prior)",
            lambda m: bool(m.net)),
}
"""Option groups only some methods read: (what, who reads it, does method m read it)."""


def check_applies(args, methods) -> None:
    """Refuse an option none of `methods` reads (`play --method uct --net x` once ran without a
    word), from the command line or the --config file; a recorded run's file, which lists every
    field at its default, passes. Then fill in the default manual where none was given."""
    from nlmcs.methods import CorpusOptions, NetOptions, ReaderOptions, get_method
    from nlmcs.model.manuals import DEFAULT_MANUAL

    chosen = [get_method(m) for m in methods]
    defaults = {"corpus": CorpusOptions(), "reader": ReaderOptions(), "net": NetOptions()}
    for section, (what, who, reads) in READ_BY.items():
        given = [name for name, value in settings(args, section).items()
                 if value != getattr(defaults[section], name)]
        if given and not any(reads(m) for m in chosen):
            names = ", ".join("--" + n.replace("_", "-") for n in given)
            it = "it" if len(given) == 1 else "them"
            raise UserInputError(f"{names}: no method here reads {what} "
                                 f"({', '.join(methods)}); leave {it} out, or add {who}")
    # the default manual named (as a recorded run's file names it) changes nothing: not refused
    if (getattr(args, "manual", None) not in (None, DEFAULT_MANUAL)
            and all(m.reads == "nothing" for m in chosen)):
        raise UserInputError(f"--manual {args.manual}: no method here reads a manual "
                             f"({', '.join(methods)}); leave it out, or add a text method")
    if hasattr(args, "manual") and args.manual is None:
        args.manual = DEFAULT_MANUAL


def settings(args, section: str) -> dict:
    """The `section` fields set by the --config file and by the options given (these last)."""
    out = dict((getattr(args, "config_sections", None) or {}).get(section, {}))
    for name in (getattr(args, "config_fields", None) or {}).get(section, ()):
        value = getattr(args, name, None)
        if value is not None:
            out[name] = None if value is CLEARED else value
    return out


def merged(args, section: str, base, *presets: Mapping):
    """The one precedence of every setting of a section: the options given, then the --config
    file (`settings`), then each of `presets` in turn (a command's own preset: an ablation's
    --preset, ...), then `base` (--model-preset, --release or the defaults); the config checks
    every value."""
    values: dict = {}
    for layer in reversed(presets):
        values.update({k: v for k, v in layer.items() if v is not None})
    return replace(base, **{**values, **settings(args, section)})


def configs(args, *, search_presets: tuple[Mapping, ...] = ()):
    """(SearchConfig, ModelConfig) of the options, the --config file, a command's presets
    (`search_presets`), --model-preset and --release, in the order of `PRECEDENCE`."""
    release = getattr(args, "release", False)
    preset = getattr(args, "model_preset", None)
    search = SearchConfig.release() if release else SearchConfig()
    if preset is not None:
        model = ModelConfig.preset(preset)
    else:
        model = ModelConfig.release() if release else ModelConfig()
    out = (merged(args, "search", search, *search_presets), merged(args, "model", model))
    if getattr(args, "config_sections", None) and (release or preset is not None):
        plain = (merged(args, "search", SearchConfig(), *search_presets),
                 merged(args, "model", ModelConfig()))
        if (search, model) != (SearchConfig(), ModelConfig()) and out == plain:
            flag = "--release" if release else "--model-preset"
            raise UserInputError(f"{flag}: the --config file sets every setting it would, so it "
                                 "changes nothing; give the settings to change as options")
    return out


def capped_workers(search: SearchConfig) -> SearchConfig:
    """The search's roll-out processes capped at what the work and the machine can use (the
    roll-outs of a step, the usable CPUs), with a note: `play --workers 40` once started 40
    processes for a 3-roll-out game. A roll-out's result does not depend on the process that
    runs it, so the game is the same."""
    import logging

    from nlmcs.processes import usable_cpus

    cap = max(1, min(search.rollouts, max(2, usable_cpus())))  # two are always allowed
    if search.workers <= cap:
        return search
    logging.getLogger("nlmcs.notice").info(
        "--workers %d capped at %d (%d roll-outs a step, %d usable CPUs)", search.workers, cap,
        search.rollouts, usable_cpus())
    return replace(search, workers=cap)


def corpus_options(args):
    return merged(args, "corpus", CorpusOptions())


def reader_options(args):
    return merged(args, "reader", ReaderOptions())


def net_options(args):
    return merged(args, "net", NetOptions())
