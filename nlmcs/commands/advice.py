"""`nlmcs advice rules|audit`: a manual's advice as rules, and what each rule is worth in play.

`rules` checks a rules file against its manual and the game's labels and lists the rules;
`audit` plays the base player following and breaking each rule on paired seeds and writes the
table, CSVs and a plot (`nlmcs.experiments.advice_audit`). Re-running the same audit resumes it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    GAMES,
    SEED,
    add_command,
    add_config_option,
    add_group,
    csv_ints,
    csv_names,
)
from nlmcs.errors import UserInputError

AUDIT_EXAMPLE = ("nlmcs advice audit --manual civ-guide --turns 20,50,100 --games 300 --seed 36 "
                 "--out results/advice/civ-guide")


def register(sub) -> None:
    actions = add_group(sub, "advice", help="a manual's advice as rules: check them, and "
                        "measure what following each is worth without a reader",
                        example=AUDIT_EXAMPLE, dest="advice_action")  # fmt: skip
    rules = add_command(actions, "rules", func=_rules_cli,
                        help="check a manual's rules file and list its rules",
                        example="nlmcs advice rules --manual civ-guide")
    _common(rules)
    audit = add_command(actions, "audit", func=_audit_cli, example=AUDIT_EXAMPLE,
                        help="play each rule followed vs broken on paired seeds, per horizon "
                             "(re-run the same command to resume)")  # fmt: skip
    _common(audit)
    audit.add_argument("--only", help="comma-separated rule names (default: every rule)")
    audit.add_argument("--turns", default="20,50,100",
                       help="horizons at which each game is scored (default: 20,50,100)")
    audit.add_argument("--max-turns", type=COUNT,
                       help="the game's turn limit (default: the longest horizon)")
    audit.add_argument("--games", type=GAMES, default=100, help="paired seeds (default: 100)")
    audit.add_argument("--seed", type=SEED, default=0,
                       help="S: game i is played from game_seed(S, i), as ablations draw them")
    audit.add_argument("--base", default="builtin:normal",
                       help="player 0 before the rule: builtin[:easy|normal|hard], random, "
                            "greedy, or a search method such as q0 (default: builtin:normal)")
    audit.add_argument("--opponent", default="builtin:normal",
                       help="player 1 (default: builtin:normal)")
    audit.add_argument("--map", default="small", help="map preset (default: small)")
    audit.add_argument("--rollouts", type=COUNT, default=30,
                       help="roll-outs per step of a search base (default: 30)")
    audit.add_argument("--depth", type=COUNT, default=5,
                       help="roll-out depth of a search base (default: 5)")
    from nlmcs.commands.ablation import add_executor_options

    add_executor_options(audit).add_argument("--workers", type=COUNT, default=1,
                                             help="local game processes (default: 1)")
    audit.add_argument("--out", type=Path,
                       help="audit folder (default: results/advice/MANUAL)")
    audit.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_config_option(audit)


def _common(p) -> None:
    p.add_argument("--manual", default="civ-guide", help="stored manual the rules quote "
                   "(default: civ-guide, built on first use)")
    p.add_argument("--rules", type=Path, help="rules file (TOML; default: the shipped "
                   "data/manuals/MANUAL.advice.toml)")


def load_for(manual_name: str, rules_path: Path | None):
    """(manual, rule set) with every rule checked against the manual and the civ game."""
    from nlmcs.advice.rules import default_rules_path, load_rules
    from nlmcs.games import make_game
    from nlmcs.games.civ.labels import vocabulary
    from nlmcs.model.manuals import resolve_manual

    path = rules_path or default_rules_path(manual_name)
    if path is None:
        raise UserInputError(f"manual {manual_name!r} has no shipped rules file; give --rules "
                             "FILE.toml")
    manual = resolve_manual(manual_name)
    game = make_game("civ", preset="small")
    ruleset = load_rules(path, vocabulary=vocabulary(game.tables),
                         sentences=list(manual.sentences["text"]))
    if ruleset.manual is not None and ruleset.manual != manual.name:
        raise UserInputError(f"{path}: its rules are for manual {ruleset.manual!r}, not "
                             f"{manual.name!r}")
    return manual, ruleset


def _rules_cli(args) -> int:
    _, ruleset = load_for(args.manual, args.rules)
    print(f"{ruleset.path}: {len(ruleset.rules)} rules, every sentence found in the manual")
    for r in ruleset.rules:
        verb = "do" if r.recommends else "avoid"
        where = " ".join(f"{k}={','.join(sorted(v))}" for k, v in (
            ("when", r.when), ("when_any", r.when_any), ("unless", r.unless),
            ("civ_when", r.civ_when), ("civ_unless", r.civ_unless)) if v)
        print(f"- {r.name}: {','.join(sorted(r.agent))} {where} -> {verb} "
              f"{' | '.join(r.action)}" + (f"  ({r.note})" if r.note else ""))
        for s in r.sentences:
            print(f"    \"{s}\"")
    return 0


def _audit_cli(args) -> int:
    from nlmcs.experiments.advice_audit import (
        AuditSpec,
        check_spec,
        run_audit,
        stored_spec,
        write_outputs,
    )
    from nlmcs.files import sha256_file

    turns = tuple(csv_ints(args.turns, "turns"))  # before the manual is built on first use
    manual, ruleset = load_for(args.manual, args.rules)
    rules = ruleset.get(csv_names(args.only or ""))
    spec = AuditSpec(manual=manual.name,
                     manual_sha256=(manual.meta.get("source") or {}).get("sha256"),
                     rules_file=ruleset.path.name, rules_sha256=sha256_file(ruleset.path),
                     rules=tuple(r.name for r in rules), turns=turns, games=args.games,
                     seed=args.seed, base=args.base, opponent=args.opponent, map=args.map,
                     max_turns=args.max_turns, rollouts=args.rollouts, depth=args.depth)
    check_spec(spec)
    _check_players(spec)
    out = args.out or Path("results") / "advice" / manual.name
    spec = stored_spec(out, spec)  # a folder stored before the rule was named keeps the legacy one
    from tqdm import tqdm

    bar = tqdm(total=spec.games, unit="seed", disable=args.no_progress, file=sys.stderr)

    def progress(done: int, total: int) -> None:
        bar.update(done)

    from nlmcs.commands.ablation import scheduler_executor

    try:
        with scheduler_executor(args) as (executor, window):
            rows = run_audit(spec, rules, out, workers=args.workers, progress=progress,
                             executor=executor, max_in_flight=window)
    finally:
        bar.close()
    command = "nlmcs " + shlex.join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith(
        "nlmcs") else ""
    summary, paths = write_outputs(out, rows, spec, command)
    from nlmcs.experiments.advice_audit import markdown

    print(markdown(summary, spec))
    print("files written: " + ", ".join(str(p) for p in paths))
    return 0


def _check_players(spec) -> None:
    """Refuse a bad base, opponent or map before any game runs."""
    from nlmcs.experiments.advice_audit import audit_game
    from nlmcs.methods import METHODS, opponent_policy

    game = audit_game(spec)
    if spec.base.partition(":")[0] not in METHODS:
        game.policy(spec.base)
    opponent_policy(game, spec.opponent)  # a network opponent too (net[:FILE])


def register_bench(bench_sub) -> None:
    """No benchmark: an audit's games are the engine's and the built-in AI's, timed by
    `nlmcs bench engine`."""
