"""`nlmcs freeciv ...`: the bridge to Debian's FreeCiv 3.0 server (fetch-protocol, probe)."""

from __future__ import annotations

from pathlib import Path

from nlmcs.commands.options import COUNT, SEED, add_command, add_group, int_option
from nlmcs.files import check_output


def register(sub) -> None:
    fsub = add_group(sub, "freeciv", help="play Debian's FreeCiv 3.0 server over its protocol",
                     example="nlmcs freeciv probe --turns 10 --ai-level easy --seed 1",
                     dest="freeciv_command")

    f = add_command(fsub, "fetch-protocol",
                    help="download FreeCiv's protocol definition from Debian's source package",
                    example="nlmcs freeciv fetch-protocol", func=fetch_cli)
    f.add_argument("--suite", default="bookworm", help="Debian suite of the source package")
    f.add_argument("--mirror", default="http://deb.debian.org/debian", help="Debian mirror")

    p = add_command(fsub, "probe",
                    help="check the bridge: a short game against FreeCiv's AI with a fixed rule "
                         "(settlers found cities, then the turn ends), reported per turn",
                    example="nlmcs freeciv probe --turns 10 --ai-level easy --seed 1 "
                            "--out results/freeciv/probe.csv",
                    func=probe_cli)
    p.add_argument("--turns", type=COUNT, default=10, help="turns to play")
    p.add_argument("--ai-level", default="easy", choices=("novice", "easy", "normal", "hard"),
                   help="skill of FreeCiv's AI players")
    p.add_argument("--ai-players", type=int_option(low=1, high=7), default=1,
                   help="FreeCiv AI players besides us")
    p.add_argument("--seed", type=SEED, default=0, help="map and game seed of the server")
    p.add_argument("--xsize", type=int_option(low=16, high=200), default=40, help="map width")
    p.add_argument("--ysize", type=int_option(low=16, high=200), default=25, help="map height")
    p.add_argument("--out", type=Path, help="write the per-turn table here (CSV)")


def register_bench(bench_sub) -> None:
    """No benchmark: a bridged game's time is the server's and the planner's."""


def fetch_cli(args) -> int:
    from nlmcs.games.freeciv.protocol_source import fetch

    fetch(suite=args.suite, mirror=args.mirror)
    return 0


def probe_cli(args) -> int:
    from nlmcs.games.freeciv import packets_def
    from nlmcs.games.freeciv.probe import probe
    from nlmcs.games.freeciv.protocol_source import packets_def_path
    from nlmcs.games.freeciv.server import ServerConfig

    if args.out is not None:
        check_output(args.out, make_parent=True)
    proto = packets_def.load(packets_def_path())
    config = ServerConfig(seed=args.seed, ai_players=args.ai_players, ai_level=args.ai_level,
                          xsize=args.xsize, ysize=args.ysize)  # fmt: skip
    rows = probe(proto=proto, config=config, turns=args.turns, out=args.out)
    last = rows[-1]
    print(f"played {len(rows)} turns against {args.ai_players} FreeCiv AI ({args.ai_level}), "
          f"fog of war as a player: {last['units']} units, {last['cities']} cities, score "
          f"{last['score']}; {last['packets']} packets of {last['packet_types']} kinds decoded"
          + (f"; table in {args.out}" if args.out else ""))
    return 0
