"""`nlmcs freeciv ...`: the bridge to Debian's FreeCiv 3.0 server (fetch-protocol, probe, play)."""

from __future__ import annotations

from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    SEED,
    add_command,
    add_group,
    add_search_options,
    capped_workers,
    check_applies,
    configs,
    int_option,
)
from nlmcs.files import check_output
from nlmcs.games.freeciv.server import AI_LEVELS


def register(sub) -> None:
    fsub = add_group(sub, "freeciv", help="play Debian's FreeCiv 3.0 server over its protocol",
                     example="nlmcs freeciv probe --turns 10 --ai-level easy --seed 1",
                     dest="freeciv_command")

    f = add_command(fsub, "fetch-protocol",
                    help="download FreeCiv's protocol definition from Debian's source package",
                    example="nlmcs freeciv fetch-protocol", func=fetch_cli)
    f.add_argument("--suite", default="bookworm", help="Debian suite of the source package")
    f.add_argument("--mirror", default="http://deb.debian.org/debian", help="Debian mirror")

    g = add_command(fsub, "play",
                    help="play a search method against FreeCiv's AI on a local FreeCiv 3.0 "
                         "server, with the rules-gap report of our engine against it",
                    example="nlmcs freeciv play --method text --ai-level easy --turns 100 "
                            "--seed 1 --rollouts 100 --depth 10 --out results/freeciv/text-1",
                    func=play_cli)
    g.add_argument("--method", default="text", help="planner (as `nlmcs play --method`)")
    g.add_argument("--manual", help="stored manual the text methods read (default: "
                   "civ-guide; refused for a method that reads no text)")
    g.add_argument("--out", type=Path,
                   help="folder for the game's diagnosis: summary.md, players.png and turns, "
                        "gaps, players, orders and losses CSVs")
    g.add_argument("--log-decisions", type=Path,
                   help="write the decision log (JSON lines, as `nlmcs play`: a game record "
                        "with the manual, configurations and server settings, every decision, "
                        "an end record)")
    _server_options(g)
    add_search_options(g)

    p = add_command(fsub, "probe",
                    help="check the bridge: a short game against FreeCiv's AI with a fixed rule "
                         "(settlers found cities, then the turn ends), reported per turn",
                    example="nlmcs freeciv probe --turns 10 --ai-level easy --seed 1 "
                            "--out results/freeciv/probe.csv",
                    func=probe_cli)
    p.add_argument("--out", type=Path, help="write the per-turn table here (CSV)")
    _server_options(p)


def _server_options(p) -> None:
    p.add_argument("--turns", type=COUNT, default=10, help="turns to play")
    p.add_argument("--ai-level", default="easy", choices=AI_LEVELS,
                   help="skill of FreeCiv's AI players")
    p.add_argument("--ai-players", type=int_option(low=1, high=7), default=1,
                   help="FreeCiv AI players besides us")
    p.add_argument("--seed", type=SEED, default=0, help="map and game seed of the server "
                                                         "(and the search's seed)")
    p.add_argument("--xsize", type=int_option(low=16, high=200), default=40, help="map width")
    p.add_argument("--ysize", type=int_option(low=16, high=200), default=25, help="map height")


def register_bench(bench_sub) -> None:
    """No benchmark: a bridged game's time is the server's and the planner's."""


def fetch_cli(args) -> int:
    from nlmcs.games.freeciv.protocol_source import fetch

    fetch(suite=args.suite, mirror=args.mirror)
    return 0


def _server(args):
    """(protocol, server config) of the options; a missing protocol file or server fails here."""
    from nlmcs.games.freeciv import packets_def
    from nlmcs.games.freeciv.protocol_source import packets_def_path
    from nlmcs.games.freeciv.server import ServerConfig, find_binary

    find_binary()
    proto = packets_def.load(packets_def_path())
    return proto, ServerConfig(seed=args.seed, ai_players=args.ai_players,
                               ai_level=args.ai_level, xsize=args.xsize, ysize=args.ysize,
                               end_turn=args.turns)


def play_cli(args) -> int:
    from nlmcs.experiments.freeciv_play import play_freeciv
    from nlmcs.methods import get_method

    get_method(args.method)
    check_applies(args, [args.method])
    scfg, mcfg = configs(args)
    scfg = capped_workers(scfg)
    if args.out is not None:
        check_output(args.out / "summary.md", make_parent=True)
    if args.log_decisions is not None:
        check_output(args.log_decisions)
    proto, server = _server(args)
    played = play_freeciv(proto=proto, server=server, method=args.method, turns=args.turns,
                          seed=args.seed, search_config=scfg, model_config=mcfg,
                          manual=args.manual, out=args.out,
                          log_decisions=args.log_decisions)  # fmt: skip
    r = played.result
    outcome = {None: "draw", 0: "won"}.get(r["winner"], "lost")
    print(f"method {r['method']} vs FreeCiv AI ({r['ai_level']}) seed {r['seed']}: "
          f"{r['turns']} turns, {outcome}, final score {r['our_score']} vs best other "
          f"{r['best_other_score']} (as a player, fog of war)"
          + (f"; results in {args.out}" if args.out else ""))
    return 0


def probe_cli(args) -> int:
    from nlmcs.games.freeciv.probe import probe

    if args.out is not None:
        check_output(args.out, make_parent=True)
    proto, config = _server(args)
    rows = probe(proto=proto, config=config, turns=args.turns, out=args.out)
    last = rows[-1]
    print(f"played {len(rows)} turns against {args.ai_players} FreeCiv AI ({args.ai_level}), "
          f"fog of war as a player: {last['units']} units, {last['cities']} cities, score "
          f"{last['score']}; {last['packets']} packets of {last['packet_types']} kinds decoded"
          + (f"; table in {args.out}" if args.out else ""))
    return 0
