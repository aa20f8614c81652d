"""`nlmcs serve`: play in the browser against the built-in AI or a search agent; every game is
recorded into a corpus. Thin over `nlmcs.serve`."""

from __future__ import annotations

import argparse
import errno
import socket

from nlmcs.commands.options import COUNT, add_command, int_option
from nlmcs.errors import UserInputError
from nlmcs.games import game_entry
from nlmcs.serve.config import GAME

PORT = int_option(low=1, high=65535)


def register(sub) -> None:
    p = add_command(sub, "serve", help="play in the browser; every game is recorded into a corpus",
                    example="nlmcs serve --port 8000 --opponent builtin --corpus human-play "
                            "(then open http://127.0.0.1:8000/)", func=serve_cli)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; another "
                        "address lets anyone who reaches it play and write to your corpus)")
    p.add_argument("--port", type=PORT, default=8000, help="port (default 8000)")
    p.add_argument("--opponent", default="builtin",
                   help="builtin[:easy|normal|hard], random, greedy, or a search method "
                        "(uct, text, uct-corpus, ...)")
    p.add_argument("--corpus", default="human-play",
                   help="corpus recording the games: logs go to its logs/ folder; finished "
                        "games are ingested on request and at shutdown (default human-play)")
    served = game_entry(GAME)
    p.add_argument("--map", default="small", choices=served.maps,
                   help=f"map of a new game: {served.map_help} (default small)")
    p.add_argument("--max-turns", type=COUNT, help="turn limit (default: the game's, 100)")
    p.add_argument("--opponent-rollouts", type=COUNT, default=20,
                   help="roll-outs per turn of a search opponent (default 20)")
    p.add_argument("--opponent-depth", type=COUNT, default=5,
                   help="roll-out depth of a search opponent (default 5)")
    p.add_argument("--advice-rollouts", type=COUNT, default=10,
                   help="roll-outs of the text agent's advice (default 10)")
    p.add_argument("--advice-depth", type=COUNT, default=4,
                   help="roll-out depth of the text agent's advice (default 4)")
    p.add_argument("--manual", default="civ-guide", help="manual the text agent reads")


def register_bench(bench_sub) -> None:
    """No benchmark: the server's work is the engine's and the search's, timed elsewhere."""


def serve_cli(args: argparse.Namespace) -> int:
    from nlmcs.paths import validate_store_name
    from nlmcs.serve.config import ServeConfig
    from nlmcs.serve.opponents import check_opponent

    check_opponent(args.opponent)
    validate_store_name(args.corpus, kind="corpus")
    config = ServeConfig(opponent=args.opponent, corpus=args.corpus, map=args.map,
                         max_turns=args.max_turns, opponent_rollouts=args.opponent_rollouts,
                         opponent_depth=args.opponent_depth,
                         advice_rollouts=args.advice_rollouts, advice_depth=args.advice_depth,
                         manual=args.manual)
    _check_port(args.host, args.port)
    _check_ready(config)
    try:
        import uvicorn

        from nlmcs.serve.app import LOOPBACK_NAMES, create_app
    except ImportError as err:  # the serve extra (`make setup` installs it)
        raise UserInputError(f"nlmcs serve needs the serve extra ({err.name} is missing): pip "
                             "install 'nlmcs[serve]'") from None
    from corpus.store import store_dir

    loopback = is_loopback(args.host)
    # the address as given is a name the browser sends too (127.0.0.2, [::ffff:127.0.0.1])
    hosts = (*LOOPBACK_NAMES, args.host, f"[{args.host}]") if loopback else ("*",)
    app = create_app(config, allowed_hosts=hosts)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"serving on http://{shown}:{args.port}/  (opponent {args.opponent}; games recorded "
          f"in {store_dir(args.corpus) / 'logs'}; Ctrl-C stops and ingests finished games)",
          flush=True)
    if not loopback:
        print(f"note: listening on {args.host}, not only this machine: anyone who reaches it can "
              "play and add games to the corpus", flush=True)
    # A Server rather than uvicorn.run, which swallows Ctrl-C: after its graceful shutdown (and
    # the ingest) the signal reaches the CLI, which exits 130 or 143 like every other command.
    uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port,
                                  log_level="warning")).run()
    return 0


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only: any loopback address in any spelling (127.0.0.0/8,
    ::1, an IPv4-mapped one), or the name localhost."""
    import ipaddress

    if host.strip("[]").lower() in ("localhost", "localhost."):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _check_ready(config) -> None:
    """What every game will need, found before the server starts (not a 500 at each new game):
    the manual the advice reads, and a search opponent with its manual, corpus or network."""
    from nlmcs.games import make_game
    from nlmcs.games.base import SCRIPTED_PLAYERS
    from nlmcs.model.manuals import resolve_manual
    from nlmcs.serve.config import GAME
    from nlmcs.serve.opponents import close_opponent, make_opponent

    resolve_manual(config.manual)
    if config.opponent.split(":", 1)[0] not in SCRIPTED_PLAYERS:
        opponent = make_opponent(make_game(GAME), config.opponent, seed=0, rollouts=1, depth=1,
                                 manual=config.manual)
        close_opponent(opponent)


def _check_port(host: str, port: int) -> None:
    """Refuse an address in use or not ours in one line, before the server starts."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise UserInputError(f"--host {host!r}: {err.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            why = "already in use" if err.errno == errno.EADDRINUSE else err.strerror
            raise UserInputError(f"cannot listen on {host}:{port}: {why}") from None
