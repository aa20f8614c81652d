"""`nlmcs ablation run|report|pair|share|status`: paired games of several methods, tables,
tests and plots.

`run` plays in local worker processes, or on a Dask cluster with `--scheduler` (or
`DASK_SCHEDULER_ADDRESS`); re-running the same command resumes a stopped run. `report`
rebuilds the tables and plots from the stored games; `status` says what is done and what is left.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import replace
from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    GAMES,
    SEED,
    add_command,
    add_corpus_options,
    add_game_options,
    add_group,
    add_search_options,
    check_applies,
    configs,
    corpus_options,
    csv_ints,
    csv_names,
    float_option,
    make_game,
    net_options,
    reader_options,
)
from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.spec import (
    DEFAULT_METHODS,
    DEFAULT_PRESET,
    PRESETS,
    AblationSpec,
    get_preset,
)
from nlmcs.games import game_entry

# A first run in minutes; the paper's scale is `--preset paper` (200 games x 500 roll-outs).
RUN_EXAMPLE = ("nlmcs ablation run --methods text,random-text,nonlinear --manual civ-guide "
               "--map small --full-games --max-turns 20 --games 4 --rollouts 10 --depth 5 "
               "--out runs/first --workers 2")  # fmt: skip


def register(sub) -> None:
    actions = add_group(sub, "ablation",
                        help="paired games of several methods: win rates, paired tests, plots",
                        example="nlmcs ablation run --preset quick --out runs/quick",
                        dest="ablation_action")  # fmt: skip
    p = add_command(actions, "run", func=run_cli, example=RUN_EXAMPLE,
                    help="play every method on the same seeds and store each game as it ends "
                         "(re-run the same command to resume)")  # fmt: skip
    g = p.add_argument_group("ablation")
    g.add_argument("--preset", choices=list(PRESETS),
                   help="; ".join(f"{name}: {p.help}" for name, p in PRESETS.items())
                   + "; explicit options override the preset")
    g.add_argument("--methods", help=f"comma-separated methods (default: the preset's, else "
                   f"{','.join(DEFAULT_METHODS)})")
    g.add_argument("--manual", help="manual of the text methods (default: civ-guide; "
                   "random-text reads a word-permuted twin of it, one per game); refused when "
                   "no method reads text")
    g.add_argument("--twin-seed", type=SEED, help="random-text reads one twin, shuffled with "
                   "this seed, in every game (default: each game's twin is shuffled with the "
                   "game's own seed)")
    g.add_argument("--games", type=GAMES, help="paired games per method (more can be added "
                   f"later; default: the preset's, {PRESETS[DEFAULT_PRESET].games} without one)")
    g.add_argument("--steps", type=COUNT, help="real steps per game (default: the preset's, "
                   f"{PRESETS[DEFAULT_PRESET].steps} without one)")
    g.add_argument("--full-games", action=argparse.BooleanOptionalAction,
                   help="play every game to its end (the turn limit, --max-turns); "
                        "--no-full-games turns off a --config file's")
    g.add_argument("--opponent", default="builtin", help="builtin[:easy|normal|hard], random, ...")
    g.add_argument("--seed", type=SEED, default=0, help="S: game i of every method uses a seed "
                   "derived from (S, i)")
    g.add_argument("--out", type=Path, help="run folder (default: runs/PRESET or runs/ablation)")
    g.add_argument("--force-mix", action="store_true",
                   help="add games to a run folder that holds another configuration")
    g.add_argument("--log-decisions", action="store_true",
                   help="keep each game's decision log in RUN/decisions/ARM/ (for `nlmcs "
                        "relevance report RUN`); games already stored keep none")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    x = add_executor_options(p)
    add_game_options(p)
    # --rollouts is a list of budgets here and --workers counts game processes (below): each
    # game searches in one process, at its arm's budget.
    add_search_options(p, skip=("rollouts", "workers"))
    add_corpus_options(p)
    g.add_argument("--rollouts", help="roll-outs per real step; several (50,100,200) make one "
                   "arm per method and budget, named method@rollouts (default: the preset's, "
                   f"{','.join(map(str, PRESETS[DEFAULT_PRESET].rollouts))} without one)")
    x.add_argument("--workers", type=COUNT, help="local game processes (default: usable CPUs); "
                   "each game runs its roll-outs in one process")
    p.set_defaults(map=None, depth=None)

    r = add_command(actions, "report", func=report_cli,
                    help="rebuild the tables, paired tests and plots from a run's stored games",
                    example="nlmcs ablation report runs/quick")  # fmt: skip
    r.add_argument("run", type=Path, help="run folder")
    r.add_argument("--skip-bad-lines", action="store_true",
                   help="report the good rows of a damaged results file (bad lines are named)")
    q = add_command(actions, "pair", func=pair_cli,
                    help="one arm of a run against one arm of another run of the same games "
                         "(e.g. another budget at equal wall time), paired by seed",
                    example="nlmcs ablation pair results/net/final/turns-20 puct-net "
                            "results/net/final/turns-20-flat-ucb-corpus-50 flat-ucb-corpus")
    q.add_argument("run_a", type=Path, help="first run folder")
    q.add_argument("arm_a", help="its arm (method, or method@rollouts)")
    q.add_argument("run_b", type=Path, help="second run folder")
    q.add_argument("arm_b", help="its arm")
    h = add_command(actions, "share", func=share_cli,
                    help="the semantic share (text - control) / (text - no text) of three arms "
                         "of one or several runs of the same games, paired by seed",
                    example="nlmcs ablation share runs/civ2 text runs/civ2-release-salad text "
                            "runs/civ2 nonlinear")
    for role in ("text", "control", "none"):
        h.add_argument(f"run_{role}", type=Path, help=f"run folder of the {role} arm")
        h.add_argument(f"arm_{role}", help=f"the {role} arm (method, or method@rollouts)")
    s = add_command(actions, "status", func=status_cli,
                    help="games done and left per method in a run folder",
                    example="nlmcs ablation status runs/quick")  # fmt: skip
    s.add_argument("run", type=Path, help="run folder")


def register_bench(bench_sub) -> None:
    """No benchmark of its own (`nlmcs bench search` times the methods)."""


def build_spec(args: argparse.Namespace) -> tuple[AblationSpec, Path]:
    """The spec from the options: explicit options, else the preset's, else the defaults."""
    preset = get_preset(args.preset)
    methods = tuple(csv_names(args.methods)) if args.methods else (preset.methods
                                                                  or DEFAULT_METHODS)
    check_applies(args, methods)
    rollouts = (tuple(csv_ints(args.rollouts, "rollouts")) if args.rollouts
                else preset.rollouts)  # fmt: skip
    # A preset's turn limit means full games, unless the user asked for a step count or said
    # --no-full-games (or a --config file's full_games = false).
    full_games = args.full_games if args.full_games is not None else (
        preset.max_turns is not None and args.steps is None)
    if args.full_games and args.steps is not None:
        raise UserInputError("--full-games plays to the turn limit; give --max-turns, not "
                             "--steps (or --no-full-games)")
    ns = argparse.Namespace(**{**vars(args), "map": args.map or preset.map,
                               "max_turns": args.max_turns if args.max_turns is not None
                               else (preset.max_turns if full_games else None)})  # fmt: skip
    game = make_game(ns)
    # The preset's depth is a layer below the options given and the --config file's.
    search, model = configs(ns, search_presets=({"depth": preset.depth},))
    search = replace(search, rollouts=rollouts[0], workers=1)
    config = getattr(game, "config", None)
    max_turns = getattr(config, "max_turns", None)
    if full_games:
        if max_turns is None:
            raise UserInputError(f"game {args.game!r} has no turn limit for --full-games")
        steps = int(max_turns)
    else:
        steps = args.steps if args.steps is not None else preset.steps
    options = game_entry(args.game).options(map_preset=ns.map, max_turns=ns.max_turns,
                                            variant=ns.variant)
    spec = AblationSpec(
        methods=methods, rollouts=rollouts,
        games=args.games if args.games is not None else preset.games, seed=args.seed,
        steps=steps, opponent=args.opponent, game=args.game, game_options=options,
        full_games=full_games, manual=args.manual, twin_seed=args.twin_seed, search=search,
        model=model, corpus=corpus_options(args), reader=reader_options(args),
        net=net_options(args),
    )  # fmt: skip
    return spec, args.out or Path("runs") / (args.preset or "ablation")


def run_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.ablation.runner import prepare_run

    spec, out = build_spec(args)
    prepared = prepare_run(spec=spec, out=out, force_mix=args.force_mix,
                           log_decisions=args.log_decisions)
    arms = [a.label for a in spec.arms()]
    wins = {a: [0, 0] for a in arms}
    for row in prepared.stored:
        if row["arm"] in wins:
            wins[row["arm"]][0] += row["outcome"] == "win"
            wins[row["arm"]][1] += 1
    if not prepared.jobs:
        print(f"{out}: all {prepared.total} games are stored; nothing to play")
        return _print_report(out, strict=True, findings=get_preset(args.preset).findings
                             if args.preset else "")
    from tqdm import tqdm

    from nlmcs.experiments.ablation.runner import run_jobs
    from nlmcs.jobs import WorkerLost

    try:
        with contextlib.ExitStack() as stack:
            executor, window, where = stack.enter_context(game_executor(args, len(prepared.jobs)))
            print(f"{out}: {len(arms)} arm(s) x {spec.games} games, {prepared.done} stored, "
                  f"{len(prepared.jobs)} to play {where}", flush=True)
            bar = stack.enter_context(tqdm(total=prepared.total, initial=prepared.done,
                                           unit="game", disable=args.no_progress,
                                           dynamic_ncols=True, smoothing=0))  # fmt: skip
            # smoothing 0: the time left from the mean game so far; games end in bursts, one
            # per worker, and the default's recent rate jumps with each burst

            def on_game(row: dict) -> None:
                if row["arm"] in wins:
                    wins[row["arm"]][0] += row["outcome"] == "win"
                    wins[row["arm"]][1] += 1
                bar.update(1)
                bar.set_postfix_str(" ".join(f"{a} {100 * w / n:.0f}%"
                                             for a, (w, n) in wins.items() if n))

            run_jobs(prepared, executor=executor, max_in_flight=window,
                     force_mix=args.force_mix, on_game=on_game)  # fmt: skip
    except KeyboardInterrupt:
        print(f"interrupted: {_stored(out)} of {prepared.total} games are stored in {out}; "
              "re-run the same command to resume", file=sys.stderr)
        raise
    except WorkerLost as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return _print_report(out, strict=True,
                         findings=get_preset(args.preset).findings if args.preset else "")


def add_executor_options(p) -> argparse._ArgumentGroup:
    """--scheduler and --connect-timeout (the caller adds its own --workers to the group)."""
    x = p.add_argument_group("where games run")
    x.add_argument("--scheduler", default=os.environ.get("DASK_SCHEDULER_ADDRESS"),
                   help="Dask scheduler address, e.g. tcp://127.0.0.1:8786 (default: "
                        "$DASK_SCHEDULER_ADDRESS)")  # fmt: skip
    x.add_argument("--connect-timeout", type=float_option(above=0, high=3600), default=5.0,
                   help="seconds to wait for the scheduler")
    return x


@contextlib.contextmanager
def game_executor(args: argparse.Namespace, jobs: int):
    """(executor, games to keep in flight, where): the Dask cluster's, or a local pool's."""
    from nlmcs.jobs import dask_executor
    from nlmcs.processes import local_pool, usable_cpus

    if args.scheduler:
        with dask_executor(args.scheduler, timeout=args.connect_timeout) as (executor, threads):
            yield executor, 2 * threads, f"on {args.scheduler} ({threads} worker threads)"
    else:
        workers = min(args.workers or usable_cpus(), jobs)
        with local_pool(workers) as pool:
            yield pool, workers, f"in {workers} local process(es)"


@contextlib.contextmanager
def scheduler_executor(args: argparse.Namespace):
    """(executor, games to keep in flight) on the Dask cluster of --scheduler, or (None, None)
    without one: the command's own --workers then play locally."""
    if not args.scheduler:
        yield None, None
        return
    from nlmcs.jobs import dask_executor

    with dask_executor(args.scheduler, timeout=args.connect_timeout) as (executor, threads):
        yield executor, 2 * threads


def _stored(out: Path) -> int:
    from nlmcs.experiments.ablation.store import RESULTS_NAME, read_results

    return len(read_results(out / RESULTS_NAME, strict=False).rows)


def _print_report(folder: Path, *, strict: bool, findings: str = "") -> int:
    from nlmcs.experiments.ablation.report import write_report

    report = write_report(folder, strict=strict)
    for bad in report.bad:
        print(f"warning: {folder} results line {bad.line}: {bad.reason} (skipped)",
              file=sys.stderr)
    print()
    # What summary.md says (its bootstrap seed is the run's), not a second rendering of it.
    print((folder / "summary.md").read_text(), end="")
    print()
    print("files written: " + ", ".join(str(p) for p in report.files))
    if findings:
        print()
        print(findings)
    return 0


def report_cli(args: argparse.Namespace) -> int:
    return _print_report(args.run, strict=not args.skip_bad_lines)


def pair_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.ablation.report import pair_runs

    print(pair_runs((args.run_a, args.arm_a), (args.run_b, args.arm_b)), end="")
    return 0


def share_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.ablation.report import share_runs

    print(share_runs((args.run_text, args.arm_text), (args.run_control, args.arm_control),
                     (args.run_none, args.arm_none)), end="")
    return 0


def status_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.ablation.report import run_status

    st = run_status(args.run)
    spec = st.spec
    steps = f"full games of {spec['steps']} turns" if spec["full_games"] else \
        f"{spec['steps']} steps"
    print(f"{st.folder}: {spec['game']} {spec['game_options']}, {steps}, "
          f"roll-outs {','.join(map(str, spec['rollouts']))} x depth {spec['search']['depth']}, "
          f"vs {spec['opponent']}, seed {spec['seed']}, nlmcs {spec['version']}")
    if st.configurations > 1:
        print(f"note: this folder mixes {st.configurations} configurations (--force-mix)")
    print(f"{'method':<22}{'done':>6}{'of':>6}{'wins':>6}")
    for a in st.arms:
        print(f"{a.arm:<22}{a.done:>6}{a.total or '-':>6}{a.wins:>6}")
    left = st.total - st.done
    print(f"{st.done} of {st.total} games done, {left} left"
          + ("; re-run the same `nlmcs ablation run` to finish" if left else ""))
    for bad in st.bad:
        print(f"warning: results line {bad.line}: {bad.reason}", file=sys.stderr)
    return 0
