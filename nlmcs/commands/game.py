"""`nlmcs game ...` (play, render, convert-ruleset, series) and `nlmcs bench engine`.

Thin wrappers: each parses its options and calls a keyword-only function in `nlmcs.games` or
`nlmcs.experiments`. Every file named on the command line is checked before the work starts:
inputs must be regular files of a sane size (a FIFO would block, a huge file would be read into
memory), outputs must be writable, so no game is played only to fail at its last step.
"""

from __future__ import annotations

import json
from pathlib import Path

from nlmcs.commands.options import COUNT, GAMES, SEED, add_command, add_group, int_option
from nlmcs.errors import UserInputError
from nlmcs.files import check_distinct, check_input, check_output, read_document

STATE_MAX_BYTES = 64_000_000
"""A saved state of the largest map is a few MB; anything far larger is not one."""
RULESET_MAX_BYTES = 16_000_000


def register(sub) -> None:
    gsub = add_group(sub, "game", help="play, render and configure the civ game",
                     example="nlmcs game play --players builtin,random --seed 1 --turns 100",
                     dest="game_command")

    p = add_command(gsub, "play", help="play one game between two players and print the result",
                    example="nlmcs game play --players builtin,random --seed 1 --turns 100 "
                            "--save-log games.jsonl",
                    func=play_cli)
    p.add_argument("--players", default="builtin,random",
                   help="comma-separated players: builtin[:easy|normal|hard], howto, random, "
                        "greedy")
    p.add_argument("--seed", type=SEED, default=0, help="map and game seed")
    p.add_argument("--turns", type=COUNT, default=100, help="turn limit")
    _map_options(p)
    p.add_argument("--render", choices=("none", "ascii"), default="none",
                   help="print the final map")
    p.add_argument("--save-log", type=Path, help="append every decision to this corpus file")
    p.add_argument("--save-state", type=Path, help="write the final state as JSON")
    _engine_option(p, default="python")

    r = add_command(gsub, "render", help="draw a saved state as a PNG map or ASCII",
                    example="nlmcs game render state.json --png map.png", func=render_cli)
    r.add_argument("state", type=Path, help="state JSON written by `nlmcs game play --save-state`")
    r.add_argument("--png", type=Path, help="write a PNG picture here")
    r.add_argument("--ruleset", default=None, help="ruleset name or path (default: the state's)")

    c = add_command(gsub, "convert-ruleset", help="convert FreeCiv ruleset files to our JSON",
                    example="nlmcs game convert-ruleset /usr/share/games/freeciv/classic "
                            "--out data/rulesets/classic.json",
                    func=convert_cli)
    c.add_argument("directory", type=Path, help="a FreeCiv ruleset directory")
    c.add_argument("--out", type=Path, required=True, help="JSON ruleset to write")
    c.add_argument("--name", default=None, help="ruleset name (default: the directory name)")
    c.add_argument("--government", default="Despotism",
                   help="whose effects every player lives under (tile penalty, corruption, "
                        "martial law, highest rate): e.g. Monarchy for "
                        "data/rulesets/classic-monarchy.json (default: Despotism)")

    m = add_command(gsub, "series", help="play many games between two players and write a CSV",
                    example="nlmcs game series --players builtin,random --games 100 "
                            "--out results/ai_vs_random.csv",
                    func=series_cli)
    m.add_argument("--players", default="builtin,random",
                   help="two comma-separated players: builtin[:easy|normal|hard], howto, random, "
                        "greedy, net[:FILE] (a network's greedy player)")
    m.add_argument("--games", type=GAMES, default=100, help="number of games (sides alternate)")
    m.add_argument("--turns", type=COUNT, default=100, help="turn limit per game")
    m.add_argument("--seed", type=SEED, default=0, help="S: game k is played from game_seed(S, k)")
    m.add_argument("--out", type=Path, default=Path("results/ai_vs_random.csv"), help="CSV path")
    _map_options(m)
    _engine_option(m)


def register_bench(bench_sub) -> None:
    b = add_command(bench_sub, "engine", help="simulated turns per second of the civ engine",
                    example="nlmcs bench engine --rollouts 200 --out results/bench_engine.csv",
                    func=bench_cli)
    b.add_argument("--rollouts", type=COUNT, default=200, help="random roll-outs to time")
    b.add_argument("--depth", type=COUNT, default=20, help="turns per roll-out")
    b.add_argument("--seed", type=SEED, default=0, help="seed of the mid-game position")
    b.add_argument("--midgame-turns", type=int_option(low=0), default=50,
                   help="turns of built-in AI play before timing")
    _map_options(b)
    b.add_argument("--out", type=Path,
                   help="also append the figures, with the time, host and load average, as a "
                        "row of this CSV file")


def _map_options(p) -> None:
    p.add_argument("--map", default="default", help="map preset: default (40x25), small, tiny")
    p.add_argument("--width", type=COUNT, help="map width (overrides the preset)")
    p.add_argument("--height", type=COUNT, help="map height (overrides the preset)")
    p.add_argument("--ruleset", default="classic", help="ruleset name or JSON path")
    p.add_argument("--variant", default="", help="rule variant: sacred-terrain or "
                   "sacred-terrain-end (default: none)")


def _engine_option(p, default: str = "compiled") -> None:
    # `runner.ENGINES`, spelled out: building the parser loads no numpy (the runner does)
    p.add_argument("--engine", choices=("compiled", "python"), default=default,
                   help="compiled: built-in and random players play in compiled code, the same "
                        "games as the Python reference engine (python); other players and "
                        "--save-log always use the reference. Loading the compiled engine takes "
                        "about a second (half a minute the first time, to compile it), so one "
                        f"game is quicker on the reference (default: {default})")


def _ruleset_path(name: str | None) -> Path | None:
    """The file a --ruleset names, if it names one (not a shipped ruleset's name)."""
    return Path(name) if name is not None and ("/" in name or name.endswith(".json")) else None


def _check_ruleset(name: str | None) -> None:
    """A ruleset given as a path is checked like any input file (the engine reads it whole)."""
    path = _ruleset_path(name)
    if path is not None:
        check_input(path, what="ruleset file", max_bytes=RULESET_MAX_BYTES)


def _config(args, turns: int | None = None):
    from nlmcs.games.civ import CivConfig

    _check_ruleset(args.ruleset)
    overrides = {"ruleset": args.ruleset, "variant": args.variant}
    if args.width is not None:
        overrides["width"] = args.width
    if args.height is not None:
        overrides["height"] = args.height
    if turns is not None:
        overrides["max_turns"] = turns
    return CivConfig.preset(args.map, **overrides)


def play_cli(args) -> int:
    from nlmcs.games.civ import CivGame
    from nlmcs.games.record import CorpusRecorder
    from nlmcs.games.runner import play_game

    for out in (args.save_log, args.save_state):
        if out is not None:
            check_output(out, make_parent=True)
    check_distinct({"--ruleset": _ruleset_path(args.ruleset)},
                   {"--save-log": args.save_log, "--save-state": args.save_state})
    specs = [x.strip() for x in args.players.split(",") if x.strip()]
    game = CivGame(_config(args, args.turns))
    if len(specs) != game.num_players:
        raise UserInputError(f"--players needs {game.num_players} players, got {args.players!r}")
    policies = {p: game.policy(spec) for p, spec in enumerate(specs)}
    hooks = [CorpusRecorder(args.save_log)] if args.save_log else []
    state = game.new_initial_state(args.seed)
    result = play_game(game, policies, seed=args.seed, max_turns=args.turns, hooks=hooks,
                       state=state, engine=args.engine)
    if args.render == "ascii":
        print(state.render_ascii())
    if args.save_state:
        _write_json(args.save_state, state.to_json())
    winner = "none" if result.winner is None else f"player {result.winner} ({specs[result.winner]})"
    scores = ", ".join(f"{specs[p]} {s:.1f}" for p, s in enumerate(result.scores))
    print(f"seed {args.seed}: {result.turns} turns, winner {winner}; scores: {scores}")
    if args.save_log:
        print(f"decisions appended to {args.save_log}")
    return 0


def _write_json(path: Path, data: dict) -> None:
    from nlmcs.files import write_atomic

    write_atomic(path, json.dumps(data, allow_nan=False))


def load_state_file(path: Path, ruleset: str | None = None):
    """Read a state JSON file into a state of a matching game; bad files raise UserInputError."""
    from nlmcs.games.civ import CivConfig, CivGame

    data = read_document(path, what="state file", max_bytes=STATE_MAX_BYTES)
    name = ruleset or data.get("ruleset") or "classic"
    if not isinstance(name, str):
        raise UserInputError(f"{path}: field 'ruleset' must be a ruleset name")
    _check_ruleset(name)
    game = CivGame(CivConfig(ruleset=name))
    try:
        return game.state_from_json(data)
    except UserInputError as err:
        raise UserInputError(f"{path}: {err}") from err


def render_cli(args) -> int:
    if args.png:
        check_output(args.png, what="PNG file")
    check_distinct({"the state": args.state, "--ruleset": _ruleset_path(args.ruleset)},
                   {"--png": args.png})
    state = load_state_file(args.state, args.ruleset)
    if args.png:
        from nlmcs.games.civ.render_png import render_png

        render_png(state, args.png)
        print(f"wrote {args.png}")
    else:
        print(state.render_ascii())
    return 0


def convert_cli(args) -> int:
    from nlmcs.games.civ.convert import convert_freeciv_ruleset, write_ruleset

    check_output(args.out, what="ruleset file", make_parent=True)
    data = convert_freeciv_ruleset(args.directory, name=args.name, government=args.government)
    write_ruleset(data, args.out)
    print(f"wrote {args.out}: {len(data['terrains'])} terrains, {len(data['units'])} units, "
          f"{len(data['buildings'])} buildings, {len(data['techs'])} techs")
    return 0


def series_cli(args) -> int:
    from nlmcs.experiments.series import play_matches
    from nlmcs.games.civ import CivGame

    specs = tuple(x.strip() for x in args.players.split(",") if x.strip())
    if len(specs) != 2 or specs[0] == specs[1]:
        raise UserInputError(f"--players needs two different players, got {args.players!r}")
    check_output(args.out, what="CSV file", make_parent=True)
    check_distinct({"--ruleset": _ruleset_path(args.ruleset)}, {"--out": args.out})
    summary = play_matches(game=CivGame(_config(args, args.turns)), players=specs,
                           games=args.games, turns=args.turns, seed=args.seed, out=args.out,
                           engine=args.engine)
    for name in specs:
        p, se = summary.win_rate(name)
        wins = f"{summary.wins[name]}/{summary.games}"
        print(f"{name}: {wins} wins ({100 * p:.1f}% +- {100 * se:.1f})")
    print(f"undecided: {summary.draws}; per-game results in {summary.csv_path}")
    return 0


ENGINE_OPTIONS = ("map", "width", "height", "ruleset", "seed", "midgame_turns")
"""The options recorded beside `bench_engine`'s figures in an --out row."""


def bench_cli(args) -> int:
    from nlmcs.experiments.bench_engine import FIGURES, bench_engine
    from nlmcs.experiments.bench_record import BenchLog
    from nlmcs.games.civ import CivGame

    game = CivGame(_config(args))
    log = BenchLog(args.out, [*ENGINE_OPTIONS, *FIGURES])
    figures = bench_engine(game=game, rollouts=args.rollouts, depth=args.depth,
                           seed=args.seed, midgame_turns=args.midgame_turns)
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        text = f"{value:,.1f}" if isinstance(value, float) else str(value)
        print(f"{key:<{width}}  {text}")
    cfg = game.config
    log.record({"map": args.map, "width": cfg.width, "height": cfg.height,
                "ruleset": cfg.ruleset, "seed": args.seed, "midgame_turns": args.midgame_turns,
                **{k: figures[k] for k in FIGURES}})
    print(log.summary())
    return 0
