"""`nlmcs play`: one game of a search method against a scripted opponent; `nlmcs bench search`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    SEED,
    add_command,
    add_corpus_options,
    add_game_options,
    add_search_options,
    capped_workers,
    check_applies,
    configs,
    corpus_options,
    csv_ints,
    csv_names,
    int_option,
    net_options,
    reader_options,
    simulated_game,
)
from nlmcs.errors import UserInputError
from nlmcs.files import check_output

# The method table is light to import (no model, no corpus); help texts list its names.
from nlmcs.methods import PAPER_METHODS, get_method, make_planner, method_names


def register(sub) -> None:
    p = add_command(
        sub,
        "play",
        help="play one game with a search method against a scripted opponent",
        example="nlmcs play --method text --map small --steps 10 --rollouts 20 --depth 5 "
        "--log-decisions decisions.jsonl",
        func=play_cli,
    )
    p.add_argument("--method", default="text", help=f"planner: {', '.join(method_names())}")
    p.add_argument("--manual",
                   help="stored manual name or directory (default: the shipped civ-guide, "
                        "built on first use); random-text reads NAME-random, unrelated-text "
                        "shipped prose of its length; refused for a method that reads no "
                        "text")  # fmt: skip
    p.add_argument("--twin-seed", type=SEED,
                   help="random-text reads the twin shuffled with this seed, NAME-random-SEED "
                        "(default: the stored twin NAME-random, seed 0)")
    p.add_argument("--opponent", default="builtin",
                   help="builtin[:easy|normal|hard], random, greedy, or net[:FILE] (a network's "
                        "greedy player; roll-outs then model it by the built-in AI)")
    p.add_argument("--seed", type=SEED, default=0, help="map, game and search seed")
    p.add_argument("--steps", type=COUNT, default=100, help="real steps (turns) to play at most")
    p.add_argument("--log-decisions", type=Path, help="write every decision record (JSON lines)")
    p.add_argument("--log-states", action=argparse.BooleanOptionalAction, default=True,
                   help="the decision log also holds each step's state, for the maps of "
                        "`nlmcs relevance report` (default; --no-log-states keeps it small)")
    p.add_argument("--report", type=Path, metavar="HTML",
                   help="at the end, write the relevance report of the game (one HTML file; "
                        "the log is kept only with --log-decisions)")
    add_game_options(p)
    add_search_options(p)
    add_corpus_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def register_bench(bench_sub) -> None:
    b = add_command(
        bench_sub,
        "search",
        help="seconds per real step for each method, roll-out budget and worker count",
        example="nlmcs bench search --methods text,linear --rollouts 100,200,500 --workers 1,2 "
                "--out results/bench_search.csv",
        func=bench_cli,
    )
    b.add_argument("--methods", default=",".join(PAPER_METHODS), help="comma-separated methods")
    b.add_argument("--rollouts", default="100,200,500", help="comma-separated roll-out budgets")
    b.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    b.add_argument("--backends", default="numba,numpy",
                   help="value-network arithmetic to time: numba (compiled), numpy (reference)")
    b.add_argument("--seed", type=SEED, default=0, help="seed of the position")
    b.add_argument("--manual", default="civ-guide", help="stored manual name")
    b.add_argument("--opponent", default="builtin", help="opponent policy inside roll-outs")
    b.add_argument("--steps", type=COUNT, default=1,
                   help="real steps timed per row, each from the same position: the first is "
                        "reported as before, the mean of the others as 'warm s'")
    _start_turn_option(b)
    b.add_argument("--out", type=Path,
                   help="also append each row, with the time, host and load average, to this "
                        "CSV file")
    add_game_options(b)
    # Roll-outs, workers and the backend are the lists above; the rest is each row's template.
    add_search_options(b, skip=("rollouts", "workers", "backend"))
    add_corpus_options(b)

    s = add_command(
        bench_sub,
        "step",
        help="where a learned method's real step spends its time (one worker), and the "
             "least a step could take with more workers",
        example="nlmcs bench step --method text --rollouts 500 --depth 20 --steps 3 "
                "--out results/bench_step.csv",
        func=bench_step_cli,
    )
    s.add_argument("--method", default="text",
                   help="a method that learns a value network (text, random-text, "
                        "relevance-only, nonlinear, linear, ...)")
    s.add_argument("--manual", default="civ-guide", help="stored manual name")
    s.add_argument("--opponent", default="builtin", help="opponent policy inside roll-outs")
    s.add_argument("--seed", type=SEED, default=0, help="seed of the position and the search")
    s.add_argument("--steps", type=COUNT, default=3,
                   help="timed real steps, each from the same position (after one untimed "
                        "warm-up step)")
    _start_turn_option(s)
    s.add_argument("--path", choices=("both", *SCORING_PATHS), default="both",
                   help="how the network scores a candidate set: from integer tables in one "
                        "compiled call, a roll-out's turns chosen and played in compiled calls "
                        "(tables, the default), or signature by signature, turn by turn (the "
                        "path before it, kept as its reference); both: time the tables' "
                        "steps, then the same steps per signature, in one run (where the "
                        "network has tables: every learned kind but a ranked candidate set)")
    s.add_argument("--out", type=Path,
                   help="also append each timed step (its parts' seconds and calls), with the "
                        "time, host and load average, to this CSV file")
    add_game_options(s)
    add_search_options(s)
    add_corpus_options(s)


def _start_turn_option(p) -> None:
    p.add_argument("--start-turn", type=int_option(low=0), default=0,
                   help="time the steps from this turn of a game the built-in AIs play from "
                        "the seed (0: the start position); later turns have more units and "
                        "cities, and a step costs more")


def _check_writable(path: Path | None) -> None:
    """Refuse an output path that cannot be written, before any game is played."""
    if path is not None:
        check_output(path)


def play_cli(args: argparse.Namespace) -> int:
    method = get_method(args.method)
    check_applies(args, [args.method])
    _check_writable(args.log_decisions)
    _check_writable(args.report)
    if args.report is not None and method.reads == "nothing":
        raise UserInputError(f"--report shows what a text method read; {method.name} reads no "
                             "text (use text, relevance-only, random-text or unrelated-text)")
    game = simulated_game(args)
    scfg, mcfg = configs(args)
    scfg = capped_workers(scfg)
    with tempfile.TemporaryDirectory(prefix="nlmcs-play-") as scratch:
        log_path = args.log_decisions
        if args.report is not None and log_path is None:
            log_path = Path(scratch) / "decisions.jsonl"
        return _play(args, game, scfg, mcfg, log_path)


def _play(args: argparse.Namespace, game, scfg, mcfg, log_path: Path | None) -> int:
    from nlmcs.experiments.play import make_player, play

    # Everything that can fail on bad input (method, manual, corpus) fails here, before the bar.
    manual = args.manual
    reads_twin = get_method(args.method).reads == "random-twin"
    if args.twin_seed is not None and not reads_twin:
        raise UserInputError(f"--twin-seed chooses the twin random-text reads; --method "
                             f"{args.method} reads no twin")
    if get_method(args.method).reads != "nothing":
        from nlmcs.methods import method_text

        # a variant game's text methods read the manual stating this game's rule
        manual = method_text(args.method, args.manual, game=game, seed=args.seed,
                             twin_seed=args.twin_seed)
    planner = make_player(args.method, game=game, opponent=args.opponent, seed=args.seed,
                          manual=manual, corpus=corpus_options(args), search_config=scfg,
                          model_config=mcfg, log_decisions=log_path is not None,
                          reader=reader_options(args), net=net_options(args))
    from tqdm import tqdm

    print(_announce(args, scfg), file=sys.stderr, flush=True)
    bar = tqdm(total=args.steps, unit="step", disable=args.no_progress)

    def on_step(t, stats):
        bar.update(1)
        bar.set_postfix(sec=f"{stats['seconds']:.2f}",
                        score="/".join(f"{s:.0f}" for s in stats["scores"]))  # fmt: skip

    try:
        result = play(game=game, planner=planner, method=args.method, opponent=args.opponent,
                      seed=args.seed, steps=args.steps, log_path=log_path,
                      log_states=args.log_states,
                      log_header=_log_header(args, scfg, mcfg), on_step=on_step)  # fmt: skip
    finally:
        bar.close()
    s = result.summary()
    outcome = (f"player {s['winner']} won" if s["winner"] is not None
               else ("draw" if s["finished"] else "undecided (step limit)"))  # fmt: skip
    print(f"method {s['method']}  seed {s['seed']}  steps {s['steps']}  {outcome}")
    print(f"scores {' vs '.join(str(x) for x in s['scores'])}  "
          f"seconds/step {s['mean_seconds_per_step']}")  # fmt: skip
    if args.log_decisions:
        print(f"decisions written to {args.log_decisions}")
    if args.report is not None:
        from nlmcs.experiments.relevance.log import read_log
        from nlmcs.experiments.relevance.report import write_report

        write_report(logs=[read_log(log_path)], out=args.report)
        print(f"report written to {args.report}")
    return 0


def _announce(args: argparse.Namespace, scfg) -> str:
    """What is about to be played, before a game that can take minutes starts."""
    reads = get_method(args.method).reads
    text = "" if reads == "nothing" else f" reading {args.manual}"
    return (f"playing {args.method}{text} against {args.opponent} on the {args.map} map, seed "
            f"{args.seed}: up to {args.steps} steps of {scfg.rollouts} roll-outs x depth "
            f"{scfg.depth} (smaller --steps/--rollouts for a quick look)")


def _log_header(args: argparse.Namespace, scfg, mcfg) -> dict:
    """What the decision log's game record says beyond the game itself."""
    from nlmcs.experiments.play import manual_label
    from nlmcs.methods import method_model

    return {"manual": manual_label(args.method, args.manual, twin_seed=args.twin_seed),
            "search": scfg.to_dict(), "model": method_model(args.method, mcfg).to_dict()}


SEARCH_COLUMNS = ("method", "rollouts", "workers", "backend", "seconds", "cpu_seconds",
                  "peak_mb", "warm_seconds", "depth", "seed", "start_turn", "steps", "opponent",
                  "manual", "game", "map", "x_ref", "release_seconds", "engine")
"""The columns of `nlmcs bench search --out` after the context ones: `BenchRow`'s fields, the
options that set the position and budget, the compiled path's speed-up over the numpy
reference, the 2011 release's seconds where known, and where roll-outs beyond a tree played
(`SearchConfig.engine`; empty in rows from before it existed)."""


def bench_cli(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from nlmcs.experiments.bench_record import BenchLog
    from nlmcs.experiments.bench_search import RELEASE_SECONDS, bench_search

    scfg, mcfg = configs(args)
    methods = csv_names(args.methods)
    for m in methods:
        get_method(m)
    game = simulated_game(args)
    rollouts = csv_ints(args.rollouts, "rollouts")
    workers = csv_ints(args.workers, "workers")
    backends = csv_names(args.backends)
    if not backends or set(backends) - {"numba", "numpy"}:
        raise UserInputError(f"--backends takes numba and/or numpy, not {args.backends!r}")
    log = BenchLog(args.out, SEARCH_COLUMNS)
    print(f"{'method':<16}{'rollouts':>9}{'workers':>8}{'backend':>8}{'sec/step':>10}"
          f"{'warm s':>8}{'cpu s':>8}{'peak MB':>9}{'x ref':>7}{'release':>9}")
    done: dict[tuple, float] = {}

    def on_row(r):
        done[(r.method, r.rollouts, r.workers, r.backend)] = r.seconds
        ref = done.get((r.method, r.rollouts, r.workers, "numpy"))
        x_ref = ref / r.seconds if ref and r.backend != "numpy" else None
        ratio = f"{x_ref:>7.1f}" if x_ref else f"{'':>7}"
        release = RELEASE_SECONDS.get((r.method.replace("random-", ""), r.rollouts))
        release = release if scfg.depth == 20 else None
        rel = f"{release:>9.1f}" if release else f"{'':>9}"
        warm = f"{r.warm_seconds:>8.2f}" if r.warm_seconds is not None else f"{'-':>8}"
        print(f"{r.method:<16}{r.rollouts:>9}{r.workers:>8}{r.backend:>8}{r.seconds:>10.2f}"
              f"{warm}{r.cpu_seconds:>8.2f}{r.peak_mb:>9.0f}{ratio}{rel}", flush=True)  # fmt: skip
        log.record({**asdict(r), "depth": scfg.depth, "seed": args.seed,
                    "start_turn": args.start_turn, "steps": args.steps,
                    "opponent": args.opponent, "manual": args.manual, "game": args.game,
                    "map": args.map, "x_ref": x_ref, "release_seconds": release,
                    "engine": scfg.engine})

    bench_search(game=game, methods=methods, rollouts=rollouts, workers=workers,
                 backends=sorted(backends, reverse=True), search_config=scfg,
                 model_config=mcfg, seed=args.seed, manual=args.manual,
                 corpus=corpus_options(args), reader=reader_options(args),
                 net=net_options(args), opponent=args.opponent, steps=args.steps,
                 start_turn=args.start_turn, on_row=on_row)  # fmt: skip
    print("sec/step: the first step; warm s: the mean of the later ones (--steps); cpu s: per "
          "step; x ref: the numpy reference's seconds over these; release: the 2011 C++ release "
          "on two cores (text and linear, depth 20)")
    print(log.summary())
    return 0


SCORING_PATHS = {"tables": "tables (a roll-out's turns in compiled calls)",
                 "signatures": "per signature (the path before the tables)"}
"""The network's two ways to score a search's candidates (`nlmcs bench step --path`), with
the label each one's table is printed under."""


def step_columns(parts, later: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The columns of `nlmcs bench step --out` after the context ones: a row per timed step;
    the `later` parts' columns come last, then the scoring path (`SCORING_PATHS`)."""
    def split(names):
        return [f"{name}_{what}" for name in names for what in ("seconds", "calls")]

    return ("method", "rollouts", "depth", "workers", "backend", "seed", "start_turn", "step",
            "seconds", *split([p for p in parts if p not in later]), "rest_seconds",
            "replay_seconds", "replay_same", "engine", *split(later), "path")


def bench_step_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.bench_record import BenchLog
    from nlmcs.experiments.bench_step import LATER_PARTS, PARTS
    from nlmcs.experiments.positions import start_position

    method = get_method(args.method)
    if method.planner != "mc" or method.model is None:  # q0: a constant Q, nothing learned
        raise UserInputError(f"{method.name} learns no value network; `nlmcs bench step` "
                             "times the methods that do (`nlmcs bench search` times any)")
    scfg, mcfg = configs(args)
    if scfg.workers != 1:
        raise UserInputError("--workers: `nlmcs bench step` times one worker (it prints what "
                             "more could give at best); `nlmcs bench search` times several")
    columns = step_columns(PARTS, LATER_PARTS)
    log = BenchLog(args.out, columns)  # a bad --out is refused before any work
    game = simulated_game(args)
    state = start_position(game, seed=args.seed, turns=args.start_turn)

    def planner_on(path: str):
        planner = make_planner(method.name, game=game, manual=args.manual,
                               corpus=corpus_options(args), search_config=scfg,
                               model_config=mcfg, seed=args.seed, reader=reader_options(args),
                               net=net_options(args))  # fmt: skip
        net = getattr(planner.core.evaluator, "net", None)
        if path == "signatures" and net is not None:
            net.tables = None
        return planner, getattr(net, "tables", None) is not None

    planner, tabled = planner_on(args.path)
    if not tabled:
        paths = ["signatures"]
        if args.path != "signatures":
            print("note: this network has no tables (the numpy backend or a ranked candidate "
                  "set): timing its per-signature path", flush=True)
    else:
        paths = ["tables", "signatures"] if args.path == "both" else [args.path]
    print(f"{method.name}, {scfg.rollouts} roll-outs x {scfg.depth}, {mcfg.backend}, "
          f"{scfg.engine} engine, from turn {state.turn}; scoring "
          f"{' then '.join(SCORING_PATHS[p] for p in paths)}, each with one warm-up step, "
          f"then {args.steps} timed", flush=True)
    same, means = True, {}
    for n, path in enumerate(paths):
        if n:
            print(f"\nscoring {SCORING_PATHS[path]}:", flush=True)
            planner, _ = planner_on(path)
        rows = _time_steps(args, planner, state, method.name, (scfg, mcfg), log, columns, path)
        means[path] = sum(r.seconds for r in rows) / len(rows)
        _print_parts(rows, PARTS, path if n else None)
        same = same and all(r.replay_same for r in rows)
    if len(means) == 2:
        ratio = means["tables"] / means["signatures"]
        print(f"\ntables against per signature: {means['tables']:.3f} / "
              f"{means['signatures']:.3f} s per step ({ratio:.2f}x)")
    print(log.summary())
    if not same:
        print("error: learning the step's roll-outs again from its first weights did not give "
              "its last ones: the updates depend on more than the roll-outs' rows",
              file=sys.stderr)
        return 1
    return 0


def _time_steps(args, planner, state, name: str, configs_: tuple, log, columns, path: str
                ) -> list:
    """The timed steps of one scoring path, each row appended to the --out table."""
    from nlmcs.experiments.bench_step import PARTS, bench_step

    scfg, mcfg = configs_

    def on_step(k, row):
        print(f"step {k + 1}: {row.seconds:.2f} s", flush=True)
        split = {f"{part}_{what}": getattr(row, attr).get(part, 0)
                 for part in PARTS for what, attr in (("seconds", "parts"), ("calls", "calls"))}
        fields = {"method": name, "rollouts": scfg.rollouts, "depth": scfg.depth,
                  "workers": scfg.workers, "backend": mcfg.backend, "seed": args.seed,
                  "start_turn": args.start_turn, "step": k + 1, "seconds": row.seconds,
                  **split, "rest_seconds": row.rest, "replay_seconds": row.replay_seconds,
                  "replay_same": row.replay_same, "engine": scfg.engine, "path": path}
        log.record({c: fields[c] for c in columns})

    try:
        return bench_step(planner, state, steps=args.steps, seed=args.seed, on_step=on_step)
    finally:
        planner.close()


def _print_parts(rows: list, parts: dict, path: str | None) -> None:
    """The parts table of one path's timed steps: the first path's ends on the plain `step`
    line, a later one's on a line labelled with its path."""
    from nlmcs.experiments.bench_step import rollout_spread

    n = len(rows)
    total = sum(r.seconds for r in rows) / n
    print(f"\n{'part (mean of the timed steps)':<40}{'calls':>9}{'s/step':>9}{'us/call':>9}"
          f"{'share':>7}")
    for name, label in parts.items():
        calls = sum(r.calls.get(name, 0) for r in rows) / n
        if not calls:
            continue
        sec = sum(r.parts.get(name, 0.0) for r in rows) / n
        print(f"{label:<40}{calls:>9.0f}{sec:>9.3f}{1e6 * sec / calls:>9.1f}"
              f"{100 * sec / total:>6.1f}%")
    rest = sum(r.rest for r in rows) / n
    rest_name = ("roll-out loop (the rest)" if any(r.calls.get("board") for r in rows)
                 else "engine, roll-out loop (the rest)")
    print(f"{rest_name:<40}{'':>9}{rest:>9.3f}{'':>9}{100 * rest / total:>6.1f}%")
    step = "step" if path is None else f"step, {path}"
    print(f"{step:<40}{'':>9}{total:>9.3f}")
    replay_s = sum(r.replay_seconds for r in rows) / n
    same = all(r.replay_same for r in rows)
    print(f"\nsweeps learned again alone: {1e3 * replay_s / rows[0].rollouts:.3f} ms per roll-out "
          f"({replay_s:.3f} s per step); weights equal to the step's: {'yes' if same else 'NO'}")
    spread = rollout_spread(rows)
    if spread is not None:
        print(f"roll-outs played: {spread[0]:.2f} ms median, {spread[1]:.2f} ms 90th percentile, "
              f"{spread[2]:.2f} ms the longest, in batches of {rows[0].batch}")
    for w in (2, 4):
        least = sum(r.ceiling(w) for r in rows) / n
        print(f"{w} workers at best: {least:.2f} s per step ({total / least:.2f}x): each batch "
              "waits for its last roll-out, then every replica learns all of them")
