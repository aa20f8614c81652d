"""`nlmcs reader train|show`: the text reader that turns a manual into a prior over moves.

`train` labels games with outcomes (moves tried at sampled decisions, each played to the end by
the built-in AI; resumable) and fits the reader's weights to them (`nlmcs.reader.train`);
`show` prints a reader file's weights and, at a position, the sentences it reads and the moves it
advises for each kind of agent.
"""

from __future__ import annotations

import json
from pathlib import Path

from nlmcs.commands.options import COUNT, GAMES, SEED, add_command, add_group

TRAIN_EXAMPLE = ("nlmcs reader train --manual civ-guide --games 600 --seed 37 "
                 "--out results/readers/civ-guide")


def register(sub) -> None:
    actions = add_group(sub, "reader", help="the text reader (a manual as a prior over moves): "
                        "train it across games, show what it reads",
                        example=TRAIN_EXAMPLE, dest="reader_action")  # fmt: skip
    t = add_command(actions, "train", func=_train_cli, example=TRAIN_EXAMPLE,
                    help="label games with outcomes (resumable) and fit a reader to them; "
                         "writes reader.json, curve.csv and curve.png")  # fmt: skip
    t.add_argument("--manual", default="civ-guide",
                   help="stored manual (its twin by name, e.g. civ-guide-random; default: "
                        "civ-guide)")
    t.add_argument("--games", type=GAMES, default=600, help="labelled games (default: 600)")
    t.add_argument("--seed", type=SEED, default=0,
                   help="S: training maps are drawn from S with a salt of their own, so no "
                        "ablation shares them")
    t.add_argument("--out", type=Path, required=True, help="folder for the reader")
    t.add_argument("--outcomes", type=Path,
                   help="outcomes file to label into and read (default: OUT/outcomes.jsonl); "
                        "give the manual's to train its twin's reader on the same labels")
    t.add_argument("--turns", type=COUNT, default=100, help="game length (default: 100)")
    t.add_argument("--map", default="small", help="map preset (default: small)")
    t.add_argument("--opponent", default="builtin", help="who plays around the tried move "
                   "(default: builtin)")
    t.add_argument("--points", type=COUNT, default=16, help="decisions per game (default: 16)")
    t.add_argument("--candidates", type=COUNT, default=4,
                   help="moves tried per decision (default: 4)")
    t.add_argument("--variant", default="", help="a rule variant of the civ game")
    t.add_argument("--epochs", type=COUNT, default=200, help="fitting epochs (default: 200)")
    t.add_argument("--lr", type=float, default=0.05, help="Adam's step (default: 0.05)")
    t.add_argument("--l2", type=float, default=1e-3, help="L2 penalty (default: 0.001)")
    from nlmcs.commands.ablation import add_executor_options

    add_executor_options(t).add_argument("--workers", type=COUNT, default=1,
                                         help="local labelling processes (default: 1)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")

    a = add_command(actions, "agreement", func=_agreement_cli,
                    example="nlmcs reader agreement results/readers/civ-guide/reader.json "
                            "--audit results/advice/civ-guide",
                    help="does the reader put its prior mass on the rules the advice audit "
                         "found worth following? (rank correlation over rules)")
    _reader_arguments(a)
    a.add_argument("--rules", type=Path, help="rules file (default: the manual's shipped one)")
    a.add_argument("--audit", type=Path,
                   help="audit folder (default: results/advice/MANUAL)")
    a.add_argument("--turns", type=COUNT, default=100,
                   help="horizon of the audit's worth, and the games' length (default: 100)")
    a.add_argument("--games", type=GAMES, default=20, help="games asked (default: 20)")
    a.add_argument("--seed", type=SEED, default=0, help="S: game i from game_seed(S, i)")
    a.add_argument("--map", default="small", help="map preset (default: small)")
    a.add_argument("--csv", type=Path, help="also write the rows to this CSV")

    s = add_command(actions, "show", func=_show_cli,
                    example="nlmcs reader show results/readers/civ-guide/reader.json "
                            "--turn 10",
                    help="a reader's weights, and what it reads and advises at a position")
    _reader_arguments(s)
    s.add_argument("--seed", type=SEED, default=0, help="map seed of the position")
    s.add_argument("--turn", type=COUNT, default=10,
                   help="turns the built-in AIs play before the position (default: 10)")
    s.add_argument("--map", default="small", help="map preset (default: small)")
    s.add_argument("--top", type=COUNT, default=3, help="sentences and moves shown per agent")
    s.add_argument("--json", action="store_true", help="print JSON")


def _reader_arguments(p) -> None:
    p.add_argument("reader", type=Path, nargs="?",
                   help="reader file (default: the untrained default weights)")
    p.add_argument("--manual", help="stored manual (default: the one the reader was trained "
                   "on, else civ-guide)")


def _reader_and_manual(args) -> tuple[dict, str]:
    from nlmcs.reader.prior import load_reader

    model = load_reader(args.reader)
    return model, args.manual or (model.get("manual") or {}).get("name") or "civ-guide"


def _agreement_cli(args) -> int:
    from nlmcs.commands.advice import load_for
    from nlmcs.files import write_csv_rows
    from nlmcs.games import make_game
    from nlmcs.reader.agreement import agreement_rows, audit_worth, rule_lifts
    from nlmcs.reader.prior import make_text_prior
    from nlmcs.seeds import game_seed

    model, manual = _reader_and_manual(args)
    base = manual.removesuffix("-random")  # a twin's reader is asked the manual's rules
    _, ruleset = load_for(base, args.rules)
    game = make_game("civ", preset=args.map, max_turns=args.turns)
    rules = ruleset.rules
    worth = audit_worth(args.audit or Path("results/advice") / base, args.turns)
    prior = make_text_prior(manual, game, model)
    lifts = rule_lifts(prior, rules, game, [game_seed(args.seed, i) for i in range(args.games)],
                       args.turns)
    rows, stats = agreement_rows(lifts, worth)
    if args.csv:
        write_csv_rows(args.csv, rows)
    print(f"reader {args.reader or 'untrained default'} reading {manual}; audit worth at "
          f"{args.turns} turns; {args.games} games of the built-in AI")
    print(f"{'rule':<14} {'decisions':>9} {'log lift':>9} {'worth':>8}")
    for r in rows:
        lift = "-" if r["lift"] is None else f"{r['lift']:+.3f}"
        w = "-" if r["worth"] is None else f"{r['worth']:+.2f}"
        print(f"{r['rule']:<14} {r['decisions']:>9} {lift:>9} {w:>8}")
    rho = "-" if stats["spearman"] is None else f"{stats['spearman']:+.3f} (p {stats['p']:.3g})"
    print(f"Spearman rank correlation over {stats['rules']} rules: {rho}")
    return 0


def _train_cli(args) -> int:
    from nlmcs.files import check_distinct, check_output
    from nlmcs.reader.outcomes import OutcomeSpec
    from nlmcs.reader.train import CURVE_CSV, CURVE_PNG, MODEL_NAME, FitSpec, train_reader

    outcomes = OutcomeSpec(games=args.games, seed=args.seed, turns=args.turns, map=args.map,
                           opponent=args.opponent, points=args.points,
                           candidates=args.candidates, variant=args.variant)
    spec = FitSpec(manual=args.manual, epochs=args.epochs, lr=args.lr, l2=args.l2)
    check_output(args.out / MODEL_NAME, what="reader file", make_parent=True)
    # --out names a folder: the files written there, against the outcomes read (and appended)
    check_distinct({"--outcomes": args.outcomes},
                   {f"--out ({name})": args.out / name for name in (MODEL_NAME, CURVE_CSV,
                                                                    CURVE_PNG)})
    from nlmcs.commands.ablation import scheduler_executor

    with scheduler_executor(args) as (executor, window):
        model = train_reader(outcomes, spec, args.out, outcomes_path=args.outcomes,
                             workers=args.workers, progress=not args.no_progress,
                             executor=executor, max_in_flight=window)
    t = model["training"]
    g = t["gain"]
    print(f"{args.out / MODEL_NAME}: {t['decisions']['train']} decisions "
          f"({t['decisions']['valid']} held out), kept epoch {t['chosen_epoch']}")
    print(f"margin gain over a uniform pick among the tried moves, held-out maps: prior "
          f"{g['valid']:+.3f}, the AI's own move {g['ai_valid']:+.3f}, best tried "
          f"{g['best_valid']:+.3f}")
    print(f"curve: {args.out / CURVE_PNG}; labelling {t['seconds']['label']} s, fitting "
          f"{t['seconds']['fit']} s")
    return 0


def _show_cli(args) -> int:
    from nlmcs.experiments.positions import start_position
    from nlmcs.games import make_game
    from nlmcs.reader.prior import make_text_prior

    model, manual = _reader_and_manual(args)
    game = make_game("civ", preset=args.map)
    prior = make_text_prior(manual, game, model)
    state = start_position(game, seed=args.seed, turns=args.turn)
    seen, agents = set(), []
    for agent, actions in state.agent_actions(0):
        kind = tuple(state.agent_labels(agent))
        if kind not in seen and len(actions) > 1:
            seen.add(kind)
            agents.append({"agent": agent, "labels": list(kind),
                           "state": list(state.state_labels(agent)),
                           **prior.explain(state, agent, list(actions), top=args.top)})
    weights = {k: model[k] for k in ("relevance", "advice", "label_bias")}
    if args.json:
        print(json.dumps({"manual": manual, "turn": int(state.turn), "weights": weights,
                          "agents": agents}, indent=1))
        return 0
    print(f"reader: {args.reader or 'untrained default'}; manual {manual}; position: seed "
          f"{args.seed}, turn {state.turn}")
    for key, values in weights.items():
        shown = values.items() if isinstance(values, dict) else enumerate(values)
        print(f"  {key}: " + ", ".join(f"{k} {v:+.2f}" for k, v in shown))
    for a in agents:
        print(f"\n{' '.join(a['labels'])} ({', '.join(a['state'])}): NULL "
              f"{a['prior_null']:.2f}")
        for s in a["prior_sentences"]:
            print(f"  {s['relevance']:.3f}  {s['text'][:100]}")
        print("  advises: " + "; ".join(f"{' '.join(m['labels'])} {m['p']:.2f}"
                                        for m in a["prior_top"]))
    return 0


def register_bench(bench_sub) -> None:
    """No benchmark of its own: the prior's cost is timed inside the planners that ask it, by
    `nlmcs bench step` and `nlmcs bench search` (a row per text-prior method)."""
