"""`nlmcs relevance show|report|accuracy|planted`: what the text model read, and whether it selects.

`show` prints decisions in the terminal, `report` writes one self-contained HTML page (maps per
step when the log holds states), `accuracy` plays games with decoy sentences mixed into the
manual and measures how often the model ranks a manual sentence first, `planted` measures
whether one step's relevance picks the one sentence that says which move wins.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    GAMES,
    SEED,
    add_command,
    add_game_options,
    add_group,
    add_search_options,
    configs,
    csv_ints,
    csv_names,
    int_option,
    simulated_game,
)
from nlmcs.errors import UserInputError
from nlmcs.files import check_input, check_output, same_file

DECOY_MAX_BYTES = 64_000_000


def register(sub) -> None:
    actions = add_group(sub, "relevance",
                        help="inspect learned sentence relevance: terminal view, HTML report, "
                             "accuracy against decoy sentences",
                        example="nlmcs relevance show decisions.jsonl --step 3 --agent settlers",
                        dest="relevance_action")  # fmt: skip
    s = add_command(actions, "show", func=show_cli,
                    help="print each decision's state and action words, its top sentences with "
                         "probabilities and the sampled sentence with its words marked",
                    example="nlmcs relevance show decisions.jsonl --step 3 --agent settlers -k 5")
    s.add_argument("log", type=Path, help="decision log of `nlmcs play --log-decisions`")
    s.add_argument("--step", type=int_option(low=0), help="only this real step")
    s.add_argument("--agent", help="only this agent: an id (unit:3, city:7, civ:0) or a kind "
                   "(settlers, city, civilization)")
    s.add_argument("-k", type=COUNT, default=5, help="top sentences per decision")
    s.add_argument("--manual", help="check the log was written reading this stored manual")
    s.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour action and state words (auto: when stdout is a terminal and "
                        "NO_COLOR is unset)")  # fmt: skip

    r = add_command(actions, "report", func=report_cli,
                    help="write one self-contained HTML page: maps per step, top sentences and "
                         "marked words per agent, sentences used most, entropy plot, learned "
                         "word-attribute associations",  # fmt: skip
                    example="nlmcs relevance report text.jsonl --html report.html "
                            "--compare random-text.jsonl; nlmcs relevance report runs/reading "
                            "--html reading.html")
    r.add_argument("log", type=Path, help="decision log, or an ablation run folder whose games "
                   "kept theirs (`nlmcs ablation run --log-decisions`)")
    r.add_argument("--html", type=Path, required=True, help="the page to write")
    r.add_argument("--compare", type=Path, help="a second log shown side by side")
    r.add_argument("--arms", help="run folder: the two arms compared game by game, A,B "
                   "(default: the first arm reading the manual and the first reading its twin)")
    r.add_argument("--seed", type=SEED, default=0, help="seed of the bootstrap intervals")
    r.add_argument("-k", type=COUNT, default=5, help="top sentences per decision")
    r.add_argument("--map-every", type=COUNT, default=1, help="draw the map every N steps")
    r.add_argument("--manual", help="check the logs were written reading this stored manual")

    a = add_command(actions, "accuracy", func=accuracy_cli,
                    help="mix decoy sentences into the manual at random positions, play, and "
                         "measure how often the arg-max sentence is a manual sentence, for the "
                         "text model and its random-text twin (CSV, PNG, summary)",
                    example="nlmcs relevance accuracy --manual civ-guide --games 5 --steps 30 "
                            "--rollouts 100 --depth 10 --map small --out runs/accuracy")
    a.add_argument("--manual", default="civ-guide", help="stored manual name or directory")
    a.add_argument("--decoys", type=Path, help="unrelated text (.txt, .md, .html; default: the "
                   "shipped data/decoys/unrelated.txt)")
    a.add_argument("--method", default="text,random-text",
                   help="comma-separated methods that read text: text, relevance-only, "
                        "random-text (each on the same games, decoy positions and ties)")
    a.add_argument("--games", type=GAMES, default=10, help="games (game i from game_seed(S, i))")
    a.add_argument("--steps", type=COUNT, default=50, help="real steps per game")
    a.add_argument("--seed", type=SEED, default=0, help="S: the run seed of the games, of the "
                   "decoys' positions and of the draws that break ties")
    a.add_argument("--opponent", default="builtin", help="builtin[:easy|normal|hard], random")
    a.add_argument("--out", type=Path, required=True, help="folder for summary.json and, per "
                   "method, a folder with its CSV, PNG, summary and games' decision logs")
    add_game_options(a)
    add_search_options(a)

    pl = add_command(actions, "planted", func=planted_cli,
                     help="the planted-sentence test: one real step at the start of a "
                          "sacred-terrain game whose manual has one sentence saying which "
                          "move wins; that sentence's relevance over uniform for the text "
                          "model and for the twin, and how far the step moved each layer",
                     example="nlmcs relevance planted --model-preset selecting --budgets "
                             "1,30,500 --depth 20 --out planted.csv")
    pl.add_argument("--seed", type=SEED, default=3, help="game seed (its settlers must start "
                    "on the sacred terrain; default 3)")
    pl.add_argument("--twin-seed", type=SEED, default=0, help="seed the twin is shuffled with")
    pl.add_argument("--budgets", default="500", help="comma-separated roll-outs per step to "
                    "measure at (each a fresh step; 1 shows where relevance starts)")
    pl.add_argument("--manual", default="civ-guide", help="stored manual the sentence is "
                    "planted in (name or directory)")
    pl.add_argument("--out", type=Path, help="CSV of the rows")
    add_search_options(pl, skip=("rollouts",))


def register_bench(bench_sub) -> None:
    """No benchmarks."""


def _log(path: Path, manual: str | None):
    from nlmcs.experiments.relevance.log import check_manual, read_log, require_text

    log = read_log(path)
    if log.cut_line is not None:
        print(f"warning: {path}:{log.cut_line}: last line is cut off; showing the complete "
              "records before it", file=sys.stderr)
    require_text(log)
    if manual is not None:
        from nlmcs.model.manuals import resolve_manual

        check_manual(log, manual=resolve_manual(manual))
    return log


def show_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.relevance.views import select, show_lines

    log = _log(args.log, args.manual)
    records = select(log, step=args.step, agent=args.agent)
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty()
                                        and not os.environ.get("NO_COLOR"))
    for line in show_lines(records, k=args.k, colour=colour):
        print(line)
    return 0


def report_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.relevance.report import write_report

    check_output(args.html, what="HTML file")
    if args.log.is_dir():
        return _run_report(args)
    if args.arms is not None:
        raise UserInputError("--arms chooses two arms of an ablation run folder; "
                             f"{args.log} is a single log (use --compare)")
    if args.compare is not None and same_file(args.log, args.compare):
        raise UserInputError(f"--compare {args.compare}: the log itself; a comparison needs "
                             "another log (a twin's, another method's)")
    logs = [_log(args.log, args.manual)]
    if args.compare is not None:
        logs.append(_log(args.compare, args.manual))
    write_report(logs=logs, out=args.html, k=args.k, map_every=args.map_every)
    print(f"report written to {args.html}")
    return 0


def _run_report(args: argparse.Namespace) -> int:
    from nlmcs.experiments.relevance.run_report import write_run_report

    if args.compare is not None:
        raise UserInputError(f"--compare shows a second log beside one log; {args.log} is a run "
                             "folder (choose its arms with --arms A,B)")
    pair = None
    if args.arms is not None:
        names = csv_names(args.arms)
        if len(names) != 2 or names[0] == names[1]:
            raise UserInputError(f"--arms {args.arms!r}: name two different arms, A,B")
        pair = (names[0], names[1])
    manual = None
    if args.manual is not None:
        from nlmcs.model.manuals import resolve_manual

        manual = resolve_manual(args.manual)
    write_run_report(args.log, out=args.html, pair=pair, seed=args.seed, manual=manual)
    print(f"report written to {args.html}")
    return 0


def accuracy_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.relevance.accuracy import relevance_accuracy, write_comparison
    from nlmcs.experiments.relevance.decoys import shipped_decoys
    from nlmcs.methods import get_method

    methods = list(dict.fromkeys(csv_names(args.method)))
    if not methods:
        raise UserInputError("--method names no method; choose text, relevance-only, "
                             "random-text or unrelated-text")
    for method in methods:
        if get_method(method).reads == "nothing":
            raise UserInputError(f"--method {method} reads no text; choose text, "
                                 "relevance-only, random-text or unrelated-text")
    if args.out.exists() and not args.out.is_dir():
        raise UserInputError(f"{args.out}: exists and is not a folder")
    decoys = args.decoys or shipped_decoys()
    check_input(decoys, what="decoy text", max_bytes=DECOY_MAX_BYTES)
    game = simulated_game(args)
    scfg, mcfg = configs(args)
    from nlmcs.experiments.relevance.accuracy import check_settings

    config = getattr(game, "config", None)
    settings = {"methods": methods, "manual": args.manual, "decoys": str(decoys),
                "games": args.games, "steps": args.steps, "seed": args.seed,
                "opponent": args.opponent,
                "game": config.to_dict() if hasattr(config, "to_dict") else args.game,
                "search": scfg.to_dict(), "model": mcfg.to_dict()}
    check_settings(args.out, settings)
    summaries = {}
    for method in methods:

        def on_game(i, path, method=method):
            print(f"{method}: game {i + 1}/{args.games} done: {path}", file=sys.stderr,
                  flush=True)

        result = relevance_accuracy(game=game, manual=args.manual, decoys=decoys,
                                    out=args.out / method, method=method, games=args.games,
                                    steps=args.steps, seed=args.seed, opponent=args.opponent,
                                    search_config=scfg, model_config=mcfg, on_game=on_game)
        summaries[method] = result.summary
        _print_accuracy(result.summary)
    combined = write_comparison(args.out, summaries, settings)
    diff = combined["text_minus_twin"]
    if diff is not None:
        above = diff.get("above_chance")
        print(f"text - random-text: accuracy {_points(diff['accuracy'])}"
              + ("" if above is None else f", above chance {_points(above)}"))
    print("accuracy = manual / (manual + decoy) of the arg-max sentence, ties drawn at random "
          "(the paper: 71.8%); chance: the manual share of the sentences offered; uniform: "
          "decisions whose relevance is uniform, whose pick is drawn among all offered")
    print(f"wrote {args.out / 'summary.json'} and, per method, its CSV, PNG and summary")
    return 0


def _print_accuracy(s: dict) -> None:
    print(f"{s['method']} reading {s['manual']} ({s['manual_sentences']} sentences) + "
          f"{s['decoy_sentences']} decoy sentences at random positions (seed "
          f"{s['decoy_seed']}): {s['games']} games x {s['steps']} steps")
    print(f"{'':<9}{'decisions':>10}{'manual':>9}{'decoy':>8}{'NULL':>8}{'accuracy':>10}"
          f"{'chance':>8}{'uniform':>9}")
    for name in ("overall", "early", "late"):
        row = s[name]
        print(f"{name:<9}{row['decisions']:>10}{_pct(row.get('manual_share')):>9}"
              f"{_pct(row.get('decoy_share')):>8}{_pct(row.get('null_share')):>8}"
              f"{_pct(row.get('accuracy')):>10}{_pct(row.get('chance_accuracy')):>8}"
              f"{_pct(row.get('uniform_share')):>9}")


def _points(value: float) -> str:
    return f"{100 * value:+.1f} points"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def planted_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.relevance.planted import run_planted, verdict

    budgets = csv_ints(args.budgets, "budgets")
    if args.out is not None:
        check_output(args.out, what="CSV file")
    scfg, mcfg = configs(args)
    print(f"{'arm':<6}{'rollouts':>9}{'cands':>7}{'distinct':>9}{'planted':>9}{'rank':>6}"
          f"{'top':>8}{'entropy':>9}  {'uniform':<8}{'|du|':>9}{'|w|':>9}{'s':>7}")

    def on_row(r: dict) -> None:
        print(f"{r['arm']:<6}{r['rollouts']:>9}{r['candidates']:>7}{r['distinct_rows']:>9}"
              f"{r['planted_lift']:>8.2f}x{str(r['planted_rank']):>6}{r['top_lift']:>7.2f}x"
              f"{r['entropy']:>9.4f}  {str(r['uniform']):<8}{r['u_moved']:>9.3g}"
              f"{r['w_moved']:>9.3g}{r['seconds']:>7.1f}", flush=True)

    rows = run_planted(seed=args.seed, twin_seed=args.twin_seed, budgets=budgets,
                       search_config=scfg, model_config=mcfg, manual=args.manual, out=args.out,
                       on_row=on_row)
    for n in budgets:
        print(f"{n} roll-outs x {scfg.depth}: {verdict(rows, n).line()}")
    print("planted/top: probability over uniform; rank among the candidates (1 = first); "
          "|du|: how far relevance's weights moved in the step, |w|: the output layer's")
    if args.out is not None:
        print(f"wrote {args.out}")
    return 0
