"""`nlmcs corpus record|ingest|list|stats|query|export` and `nlmcs bench priors`, thin over
`corpus`."""

from __future__ import annotations

import json
from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    GAMES,
    SEED,
    add_command,
    add_group,
    csv_ints,
    float_option,
)
from nlmcs.errors import UserInputError

STATE_MAX_BYTES = 64_000_000
"""A saved state of the largest map is a few MB; anything far larger is not one."""


def register(sub) -> None:
    inner = add_group(sub, "corpus", help="record, ingest, inspect and query game corpora",
                      example="nlmcs corpus stats demo", dest="corpus_command")

    p = add_command(inner, "record", help="record self-play games into a corpus",
                    example="nlmcs corpus record --games 200 --players builtin,builtin "
                            "--name civ-builtin --preset small", func=_record)
    p.add_argument("--games", type=GAMES, default=10, help="games to play (default 10)")
    p.add_argument("--players", default="builtin,builtin",
                   help="comma-separated: builtin[:easy|normal|hard], howto, random, greedy, "
                        "search")
    p.add_argument("--method", help="search method for 'search' players (e.g. uct)")
    p.add_argument("--rollouts", type=COUNT, default=50,
                   help="roll-outs per step for search players")
    p.add_argument("--name", required=True, help="corpus name (under data/corpora/)")
    p.add_argument("--seed", type=SEED, default=0, help="S: game i is played from game_seed(S, i)")
    p.add_argument("--workers", type=COUNT, default=2, help="parallel processes (default 2)")
    p.add_argument("--max-turns", type=COUNT, help="turn limit (default: the game's)")
    p.add_argument("--preset", default="default", choices=("default", "small", "tiny"),
                   help="map preset: default 40x25, small 16x12, tiny 10x8")
    p.add_argument("--ruleset", default="classic", help="ruleset name or path")
    p.add_argument("--no-states", action="store_true",
                   help="leave the full state of every turn out of the logs (mining needs only "
                        "the decisions' vectors; the logs are about 20x smaller)")

    p = add_command(inner, "ingest", help="mine recorded game logs into a stored corpus",
                    example="nlmcs corpus ingest logs/*.jsonl --name demo", func=_ingest)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="nlmcs-corpus/1 .jsonl log files, or directories of them")
    p.add_argument("--name", required=True, help="corpus name (created or appended to)")
    p.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                   help="stop at a malformed line (default) or skip it and report it")

    p = add_command(inner, "list", help="stored and shipped corpora",
                    example="nlmcs corpus list", func=_list)

    p = add_command(inner, "export", help="copy a stored corpus without its logs, to share or ship",
                    example="nlmcs corpus export civ-sample --out data/corpora/civ-sample",
                    func=_export)
    p.add_argument("name", help="corpus name or directory")
    p.add_argument("--out", required=True, type=Path, help="new folder to write")

    p = add_command(inner, "stats", help="counts of a stored corpus",
                    example="nlmcs corpus stats demo --naive-bayes", func=_stats)
    p.add_argument("name", help="corpus name or directory")
    p.add_argument("--naive-bayes", action="store_true",
                   help="also train the naive-Bayes action model and score it on held-out games")

    p = add_command(inner, "query", help="most similar recorded pairs for each candidate action",
                    example="nlmcs corpus query demo --state state.json --agent unit:3 -k 5",
                    func=_query)
    p.add_argument("name", help="corpus name or directory")
    p.add_argument("--state", required=True, type=Path, help="a state as written by to_json()")
    p.add_argument("--agent", required=True, help="agent id, e.g. unit:3, city:1, civ:0")
    p.add_argument("-k", type=COUNT, default=10, help="pairs shown per action (default 10)")
    p.add_argument("--pool", type=COUNT, default=256, help="nearest corpus states pooled")
    p.add_argument("--utility", choices=("one", "result"), default="one",
                   help="U = 1, or the recorded player's win (1) / loss (0)")
    p.add_argument("--type-weight", type=float_option(low=0, high=1), default=0.0,
                   help="weight of same-action-type in the action similarity (0 = paper)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def register_bench(bench_sub) -> None:
    p = add_command(bench_sub, "priors", help="milliseconds per decision of corpus priors",
                    example="nlmcs bench priors --sizes 10000,100000,1000000", func=_bench)
    p.add_argument("--sizes", default="10000,100000,1000000",
                   help="corpus sizes in decisions (synthetic, drawn from --seed)")
    p.add_argument("--features", type=COUNT, default=64, help="state vector width")
    p.add_argument("--queries", type=COUNT, default=200, help="prior calls timed per size")
    p.add_argument("--index", default="exact,ivf", help="indexes to time: exact, ivf")
    p.add_argument("--pool", type=COUNT, default=256, help="nearest corpus states pooled")
    p.add_argument("--seed", type=SEED, default=0)


def _record(args) -> int:
    from corpus.store import store_dir
    from nlmcs.experiments.record import RecordConfig
    from nlmcs.locking import store_lock

    config = RecordConfig(
        games=args.games, players=tuple(s.strip() for s in args.players.split(",") if s.strip()),
        method=args.method, rollouts=args.rollouts, seed=args.seed, workers=args.workers,
        max_turns=args.max_turns, preset=args.preset,
        ruleset=args.ruleset, record_states=not args.no_states)
    directory = store_dir(args.name)
    # One recorder per corpus: a second waits, then finds the games recorded and plays none.
    with store_lock(directory, what=f"corpus {args.name}"):
        return _record_locked(args, config, directory)


def _record_locked(args, config, directory: Path) -> int:
    import sys

    from tqdm import tqdm

    from corpus.store import ingest
    from nlmcs.experiments.record import record_games

    logs = directory / "logs"
    before = sum(1 for _ in logs.glob("game-*.jsonl")) if logs.is_dir() else 0
    bar = tqdm(total=config.games, unit="game", desc=f"recording {args.name}")

    def progress(done: int, total: int) -> None:
        bar.n = done
        bar.refresh()

    try:
        paths = record_games(out_dir=logs, config=config, progress=progress)
    except KeyboardInterrupt:
        bar.close()
        played = sum(1 for _ in logs.glob("game-*.jsonl")) - before
        print(f"interrupted: {played} finished game(s) kept in {logs}; re-run the same command "
              "to play the rest and ingest them", file=sys.stderr)
        raise
    finally:
        bar.close()
    summary = ingest(paths, name=directory)
    reused = len(paths) - (sum(1 for _ in logs.glob("game-*.jsonl")) - before)
    print(f"recorded {len(paths) - reused} new games into {logs}"
          + (f" ({reused} were already recorded)" if reused else ""))
    print(f"corpus {args.name}: {summary.total_games} games, {summary.total_decisions} decisions "
          f"({summary.new_games} games new)")
    return 0


def _ingest(args) -> int:
    from corpus.store import ingest

    summary = ingest(args.paths, name=args.name, on_error=args.on_error)
    for problem in summary.problems:
        print(f"skipped {problem}")
    for path in summary.already_ingested:
        print(f"already ingested: {path}")
    print(f"corpus {args.name} ({summary.directory}): +{summary.new_games} games, "
          f"+{summary.new_decisions} decisions; now {summary.total_games} games, "
          f"{summary.total_decisions} decisions")
    if summary.problems:
        print(f"{len(summary.problems)} problem(s) skipped; see above")
    return 0


def _list(args) -> int:
    from corpus.meta import check_stored
    from corpus.shipped import shipped_corpora
    from nlmcs.paths import corpora_dir

    stored = corpora_dir()
    found = [("stored", p) for p in sorted(stored.iterdir())
             if not p.name.startswith(".") and (p / "meta.json").is_file()] \
        if stored.is_dir() else []
    found += [("shipped", p) for p in shipped_corpora().values()]
    print(f"corpora in {stored} (and shipped with nlmcs):")
    for where, path in found:
        meta, problem = check_stored(path)  # every file checked against its sha256
        if problem is not None:
            print(f"  {path.name:<24} {where:<8} damaged: {problem}; ingest any of its logs "
                  "again to rebuild it")
            continue
        print(f"  {path.name:<24} {where:<8} {meta['counts']['games']:>6} games "
              f"{meta['counts']['decisions']:>9} decisions  ruleset {meta['ruleset']}")
    if not found:
        print("  (none)")
    return 0


def _export(args) -> int:
    from corpus.shipped import export_corpus

    out = export_corpus(args.name, args.out)
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"exported {args.name} to {out} ({size / 1e6:.1f} MB)")
    return 0


def _stats(args) -> int:
    from corpus.shipped import find_corpus_dir
    from corpus.store import load_corpus

    corpus = load_corpus(find_corpus_dir(args.name))
    meta = corpus.meta
    counts = meta["counts"]
    print(f"corpus {corpus.name}: game {meta['game']}, ruleset {meta['ruleset']}, "
          f"{len(meta['feature_names'])} state features")
    print(f"games {counts['games']}  decisions {counts['decisions']}  "
          f"applied {counts['applied']}  sources {len(meta['sources'])}")
    _table("decisions per action type", counts["action_types"], counts["decisions"])
    _table("decisions per player kind", counts["decisions_per_player_kind"], counts["decisions"])
    _table("players per kind", counts["players_per_kind"], None)
    _table("decisions per agent", counts["agents"], counts["decisions"])
    games = corpus.games
    wins = (games["winner"] >= 0).sum()
    print(f"\ngames decided {wins} of {len(games)}; mean turns {games['turns'].mean():.1f}")
    if args.naive_bayes:
        from corpus.naive_bayes import train_and_evaluate

        try:
            _, report = train_and_evaluate(corpus)
        except ValueError as err:
            raise UserInputError(f"corpus {corpus.name}: {err}") from None
        print("\nnaive-Bayes action model, held-out games "
              f"({report['heldout_games']} games, {report['decisions']} decisions, "
              f"{report['classes']} action classes):")
        print(f"  accuracy        {report['accuracy']:.3f}  "
              f"(per-agent frequency baseline {report['baseline_accuracy']:.3f})")
        print(f"  log-likelihood  {report['log_likelihood']:.3f}  "
              f"(baseline {report['baseline_log_likelihood']:.3f}) nats per decision")
    return 0


def _table(title: str, counts: dict, total: int | None) -> None:
    print(f"\n{title}:")
    for key, value in counts.items():
        share = f"  {100 * value / total:5.1f}%" if total else ""
        print(f"  {key:<28} {value:>9}{share}")


def _query(args) -> int:
    from corpus.live import query
    from corpus.shipped import find_corpus_dir
    from corpus.similarity import SimilarityConfig
    from corpus.store import load_corpus
    from nlmcs.files import read_document
    from nlmcs.games import game_entry

    data = read_document(args.state, what="state file", max_bytes=STATE_MAX_BYTES)
    corpus = load_corpus(find_corpus_dir(args.name))
    first = json.loads(corpus.games["config"].iloc[0] or "{}")
    game = game_entry(corpus.meta["game"]).rebuild(first)
    state = game.state_from_json(data)
    config = SimilarityConfig(pool_size=args.pool, utility=args.utility,
                              type_weight=args.type_weight)
    rows = query(corpus, state, args.agent, k=args.k, config=config)
    if args.json:
        print(json.dumps([{"action": list(r.action), "action_type": r.action_type,
                           "prior": None if r.prior != r.prior else r.prior, "pairs": r.pairs,
                           "top": r.top} for r in rows], indent=1))
        return 0
    print(f"agent {args.agent}: {len(rows)} candidate actions, corpus {corpus.name} "
          f"({len(corpus.decisions)} decisions)")
    for r in sorted(rows, key=lambda r: -(r.prior if r.prior == r.prior else -1)):
        prior = "   -  " if r.prior != r.prior else f"{r.prior:.3f}"
        print(f"\n{r.action.kind} {'' if r.action.arg is None else r.action.arg}: prior {prior} "
              f"from {r.pairs} pairs")
        for t in r.top:
            print(f"  R={t['relevance']:.3f}  {t['game_id']} turn {t['turn']} player "
                  f"{t['player']} ({t['player_kind']}) {t['agent']} {t['action']} "
                  f"result {t['result']:g}")
    return 0


def _bench(args) -> int:
    from corpus.similarity import SimilarityConfig
    from nlmcs.experiments.bench_priors import bench_priors

    sizes = tuple(csv_ints(args.sizes, "sizes"))
    indexes = tuple(s.strip() for s in args.index.split(","))
    if not set(indexes) <= {"exact", "ivf"}:
        raise UserInputError(f"--index takes exact and/or ivf, not {args.index!r}")
    rows = bench_priors(sizes=sizes, features=args.features, queries=args.queries,
                        indexes=indexes, config=SimilarityConfig(pool_size=args.pool),
                        seed=args.seed)
    print(f"{'decisions':>10} {'index':>6} {'build s':>8} {'ms/decision':>12} {'p95 ms':>8} "
          f"{'RSS MB':>7}")
    for r in rows:
        print(f"{r['decisions']:>10} {r['index']:>6} {r['build_s']:>8.2f} "
              f"{r['ms_per_decision']:>12.3f} {r['p95_ms']:>8.3f} {r['rss_mb']:>7}")
    print(f"(synthetic decisions, {args.features} features, 8 candidates per decision, pool "
          f"{args.pool}, pool restricted by agent word)")
    return 0
