"""`nlmcs play`: one game of a search method against the built-in AI; `nlmcs bench search`."""

from __future__ import annotations

import argparse
from pathlib import Path

from nlmcs.cli import add_command
from nlmcs.errors import UserInputError

BASE_METHODS = ("uct", "linear", "nonlinear", "random-text", "relevance-only", "text")


def register(sub) -> None:
    p = add_command(
        sub,
        "play",
        help="play one game with a search method against a scripted opponent",
        example="nlmcs play --method text --manual civ-guide --opponent builtin --seed 0 "
        "--steps 100 --rollouts 500 --depth 20 --workers 2 --log-decisions decisions.jsonl",
        func=play_cli,
    )
    p.add_argument("--method", default="text",
                   help=f"planner: {', '.join(BASE_METHODS)} (or a registered extra)")
    p.add_argument("--manual", default="civ-guide",
                   help="stored manual name; random-text uses NAME-random")
    p.add_argument("--opponent", default="builtin", help="builtin[:easy|normal|hard], random, ...")
    p.add_argument("--seed", type=int, default=0, help="map, game and search seed")
    p.add_argument("--steps", type=int, default=100, help="real steps (turns) to play at most")
    p.add_argument("--log-decisions", type=Path, help="write every decision record (JSON lines)")
    _game_options(p)
    _search_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def register_bench(bench_sub) -> None:
    b = add_command(
        bench_sub,
        "search",
        help="seconds per real step for each method, roll-out budget and worker count",
        example="nlmcs bench search --methods text,linear --rollouts 100,200,500 --workers 1,2",
        func=bench_cli,
    )
    b.add_argument("--methods", default=",".join(BASE_METHODS), help="comma-separated methods")
    b.add_argument("--rollouts", default="100,200,500", help="comma-separated roll-out budgets")
    b.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    b.add_argument("--depth", type=int, default=20, help="simulated steps per roll-out")
    b.add_argument("--seed", type=int, default=0, help="seed of the position")
    b.add_argument("--manual", default="civ-guide", help="stored manual name")
    b.add_argument("--opponent", default="builtin", help="opponent policy inside roll-outs")
    b.add_argument("--backend", choices=("numpy", "torch"), default="numpy",
                   help="array library that scores the network")
    _game_options(b)


def _game_options(p) -> None:
    p.add_argument("--game", default="civ", help="game name")
    p.add_argument("--map", default="default", help="map preset: default (40x25), small, tiny")
    p.add_argument("--max-turns", type=int, default=None, help="game turn limit (default: game's)")


def _search_options(p) -> None:
    g = p.add_argument_group("search")
    g.add_argument("--rollouts", type=int, default=500, help="roll-outs per real step")
    g.add_argument("--depth", type=int, default=20, help="simulated steps per roll-out")
    g.add_argument("--workers", type=int, default=1, help="roll-out worker processes")
    g.add_argument("--batch", type=int, default=10, help="roll-outs per weight snapshot")
    g.add_argument("--learn-steps", type=int, default=4, help="steps of a roll-out that train")
    g.add_argument("--real-move", choices=("best-rollout", "mean-q"), default="best-rollout")
    g.add_argument("--early-q", choices=("sampled", "expected"), default="expected")
    g.add_argument("--late-q", choices=("sampled", "expected"), default="expected")
    g.add_argument("--reward", choices=("ratio", "weighted"), default="ratio")
    g.add_argument("--rollout", choices=("uniform", "typed"), default="uniform")
    m = p.add_argument_group("model")
    m.add_argument("--alpha", type=float, default=1e-4, help="learning rate of every layer")
    m.add_argument("--l2", type=float, default=0.01, help="L2 penalty")
    m.add_argument("--passes", type=int, default=7, help="update passes per roll-out")
    m.add_argument("--sign", choices=("release", "consistent"), default="release",
                   help="hidden-layer update sign")
    m.add_argument("--hidden", choices=("sample", "expect"), default="sample")
    m.add_argument("--table-bits", type=int, default=18, help="log2 of each weight table size")
    m.add_argument("--max-sentences", type=int, default=None, help="candidate sentence cap")
    m.add_argument("--backend", choices=("numpy", "torch"), default="numpy",
                   help="arithmetic of the network's scoring (same values either way)")


def _make_game(args):
    from nlmcs.games import make_game

    kwargs = {"preset": args.map} if args.game == "civ" else {}
    if args.max_turns is not None:
        kwargs["max_turns"] = args.max_turns
    return make_game(args.game, **kwargs)


def _configs(args):
    from nlmcs.model.config import ModelConfig
    from nlmcs.search.config import SearchConfig

    for name in ("rollouts", "depth", "workers", "batch", "passes", "steps"):
        if getattr(args, name, 1) < 1:
            raise UserInputError(f"--{name} must be at least 1")
    if not 8 <= args.table_bits <= 26:
        raise UserInputError("--table-bits must be between 8 and 26")
    scfg = SearchConfig(
        rollouts=args.rollouts, depth=args.depth, workers=args.workers, batch=args.batch,
        learn_steps=args.learn_steps, real_move=args.real_move, early_q=args.early_q,
        late_q=args.late_q, reward=args.reward, rollout=args.rollout,
    )  # fmt: skip
    mcfg = ModelConfig(
        alpha=args.alpha, l2=args.l2, passes=args.passes, sign=args.sign, hidden=args.hidden,
        table_bits=args.table_bits, max_sentences=args.max_sentences, backend=args.backend,
    )  # fmt: skip
    return scfg, mcfg


def play_cli(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from nlmcs.search.session import play

    game = _make_game(args)
    scfg, mcfg = _configs(args)
    bar = tqdm(total=args.steps, unit="step", disable=args.no_progress)

    def on_step(t, stats):
        bar.update(1)
        bar.set_postfix(sec=f"{stats['seconds']:.2f}",
                        score="/".join(f"{s:.0f}" for s in stats["scores"]))  # fmt: skip

    try:
        result = play(game=game, method=args.method, manual=args.manual, opponent=args.opponent,
                      seed=args.seed, steps=args.steps, search_config=scfg, model_config=mcfg,
                      log_path=args.log_decisions, on_step=on_step)  # fmt: skip
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
    return 0


def _csv_ints(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise UserInputError(f"--{what} must be comma-separated integers, got {text!r}") from err
    if not out or min(out) < 1:
        raise UserInputError(f"--{what} needs positive integers, got {text!r}")
    return out


def bench_cli(args: argparse.Namespace) -> int:
    from nlmcs.model.config import ModelConfig
    from nlmcs.search.methods import METHOD_NAMES
    from nlmcs.search.session import bench_search

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHOD_NAMES]
    if unknown:
        raise UserInputError(f"unknown method(s) {', '.join(unknown)}")
    game = _make_game(args)
    print(f"{'method':<16}{'rollouts':>9}{'workers':>8}{'sec/step':>10}{'cpu s':>8}{'peak MB':>9}")

    def on_row(r):
        print(f"{r.method:<16}{r.rollouts:>9}{r.workers:>8}{r.seconds:>10.2f}"
              f"{r.cpu_seconds:>8.2f}{r.peak_mb:>9.0f}", flush=True)  # fmt: skip

    bench_search(game=game, methods=methods, rollouts=_csv_ints(args.rollouts, "rollouts"),
                 workers=_csv_ints(args.workers, "workers"), depth=args.depth, seed=args.seed,
                 manual=args.manual, opponent=args.opponent,
                 model_config=ModelConfig(backend=args.backend), on_row=on_row)  # fmt: skip
    return 0
