"""`nlmcs manual ingest|shuffle|show|list|stats|cut|nearest`, `nlmcs bench manual|meaning`.

Thin wrappers over `manual_pipeline`; spaCy and pandas are imported inside the functions so that
`nlmcs --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from manual_pipeline.readers import FORMATS
from nlmcs.commands.options import (
    COUNT,
    SEED,
    add_command,
    add_group,
    float_option,
    int_option,
)
from nlmcs.errors import UserInputError


def register(sub) -> None:
    actions = add_group(sub, "manual", help="ingest, shuffle, show and list strategy manuals",
                        example="nlmcs manual ingest data/manuals/civ-guide.md",
                        dest="manual_command")

    ingest = add_command(
        actions,
        "ingest",
        help="parse a manual (text, one sentence a line, Markdown, HTML or FreeCiv help; "
             "gzip-compressed or not) and store it",
        example="nlmcs manual ingest /usr/share/games/freeciv/civ2 --name civ2-help",
        func=_ingest,
    )
    ingest.add_argument("path", type=Path, help="manual file, or a FreeCiv data/ruleset directory")
    ingest.add_argument("--name", help="name to store it under (default: the file's stem)")
    ingest.add_argument("--format", choices=FORMATS, default="auto",
                        help="reader (default: auto, by the file's name; a text file whose "
                             "lines each end a sentence is read as lines)")
    ingest.add_argument("--out", type=Path, help="artifact directory (default: the store's "
                        "manuals/NAME, under $NLMCS_DATA or ~/.local/share/nlmcs)")
    ingest.add_argument(
        "--ruleset", help="with a FreeCiv data directory: also read this ruleset's helptext"
    )
    ingest.add_argument("--force", action="store_true", help="parse again even if unchanged")
    ingest.add_argument(
        "--max-mb", type=float_option(above=0, high=1e6), default=64.0,
        help="refuse sources larger than this (default 64)",
    )

    shuffle = add_command(
        actions,
        "shuffle",
        help="write the random-text twin NAME-random (words permuted over the document)",
        example="nlmcs manual shuffle civ-guide --seed 1",
        func=_shuffle,
    )
    shuffle.add_argument("name", help="stored manual name (or artifact directory)")
    shuffle.add_argument("--seed", type=SEED, default=0, help="permutation seed (default 0)")

    show = add_command(
        actions,
        "show",
        help="print sentences of a stored manual with their parse",
        example="nlmcs manual show civ-guide --grep settlers --limit 3",
        func=_show,
    )
    show.add_argument("name", nargs="?", default="civ-guide",
                      help="stored manual name (or artifact directory; default civ-guide)")
    show.add_argument("--variant", help="print the rule sentence a game of this rule variant "
                      "adds to the manual (sacred-terrain, sacred-terrain-end) for --seed")
    show.add_argument("--seed", type=SEED, default=0, help="the variant game's seed (default 0)")
    show.add_argument("--map", default="default",
                      help="the variant game's map preset (default, small, tiny)")
    show.add_argument("--sentence", type=int_option(low=0), metavar="I",
                      help="show sentence number I")
    show.add_argument("--grep", metavar="WORD", help="show sentences containing WORD (or its stem)")
    show.add_argument("--limit", type=COUNT, default=5, help="most sentences to show (default 5)")

    add_command(
        actions,
        "list",
        help="list stored manuals with their counts",
        example="nlmcs manual list",
        func=_list,
    )

    stats = add_command(
        actions,
        "stats",
        help="what each manual offers a reader: game words per sentence, action and state words "
             "together, structure beyond its twin's word salad, and its advice's audited worth",
        example="nlmcs manual stats civ-guide freeciv-classic --csv results/advice/manuals.csv",
        func=_stats,
    )
    stats.add_argument("names", nargs="+", help="stored manual names (or artifact directories)")
    stats.add_argument("--audits", type=Path, default=Path("results/advice"),
                       help="folder of advice audits, one sub-folder per manual (default: "
                            "results/advice)")
    stats.add_argument("--csv", type=Path, help="also write the table as CSV")

    cut = add_command(
        actions,
        "cut",
        help="store the two parts of a manual cut by a property of its sentences, "
             "NAME-BY and NAME-not-BY (what makes a manual readable: read each part)",
        example="nlmcs manual cut civ2 --by action-state --same-size 1",
        func=_cut,
    )
    cut.add_argument("name", help="stored manual name (or artifact directory)")
    cut.add_argument("--by", default="action-state", choices=("action-state",),
                     help="action-state: sentences naming an action word and a state word of "
                          "the game together, against the rest (default)")
    cut.add_argument("--same-size", type=SEED, metavar="SEED",
                     help="draw the larger part down to the smaller's size, at random with this "
                          "seed (kept in document order), so length does not differ")

    near = add_command(
        actions,
        "nearest",
        help="the sentences of a manual nearest in meaning to a text (pretrained word vectors; "
             "the 'meaning' extra)",
        example='nlmcs manual nearest civ-guide "settlers on grassland by a river" --k 3',
        func=_nearest,
    )
    near.add_argument("name", help="stored manual name (or artifact directory)")
    near.add_argument("text", help="a situation or a move, in words")
    near.add_argument("--k", type=COUNT, default=5, help="sentences to show (default 5)")


def register_bench(bench_sub) -> None:
    bench = add_command(
        bench_sub,
        "manual",
        help="time ingest of a ~2,000-sentence manual: sentences per second, peak memory",
        example="nlmcs bench manual --sentences 2000\n  nlmcs bench manual --unpunctuated-mb 5",
        func=_bench,
    )
    bench.add_argument("--sentences", type=int_option(low=1, high=1_000_000), default=2000,
                       help="target size (default 2000)")
    bench.add_argument(
        "--source", type=Path, help="manual to build the text from (default: shipped civ-guide.md)"
    )
    meaning = add_command(
        bench_sub,
        "meaning",
        help="time the pretrained word vectors: loading them (digests checked) and embedding a "
             "manual's sentences, with sentences per second",
        example="nlmcs bench meaning --manual civ2",
        func=_bench_meaning,
    )
    meaning.add_argument("--manual", default="civ-guide",
                         help="stored manual to embed (default civ-guide)")
    meaning.add_argument("--repeat", type=COUNT, default=3, help="timed embeddings (default 3)")
    bench.add_argument("--unpunctuated-mb", type=int_option(low=1, high=64), metavar="MB",
                       help="instead: one line of MB megabytes of the source's words with no "
                            "punctuation (the parser's worst case; peak memory should stay "
                            "near that of a prose manual)")


def _ingest(args: argparse.Namespace) -> int:
    from manual_pipeline.ingest import ingest
    from manual_pipeline.report import format_summary

    result = ingest(
        args.path,
        name=args.name,
        fmt=args.format,
        out=args.out,
        ruleset=args.ruleset,
        force=args.force,
        max_bytes=int(args.max_mb * 1e6),
    )
    if result.reused:
        note = (
            f"{args.path}: unchanged since {result.meta.get('created')}; kept {result.directory} "
            "(--force parses again)"
        )
    else:
        note = f"stored {result.directory}"
    print(format_summary(result.meta, seconds=result.seconds, note=note))
    from manual_pipeline.ingest import MIN_STEM_COUNT
    from manual_pipeline.store import load_manual, vocabulary_warning

    warning = vocabulary_warning(load_manual(result.directory), min_count=MIN_STEM_COUNT)
    if warning is not None:
        print(warning, file=sys.stderr)
    return 0


def _shuffle(args: argparse.Namespace) -> int:
    from manual_pipeline.report import format_summary
    from manual_pipeline.shuffle import make_random_twin

    twin = make_random_twin(args.name, seed=args.seed)
    print(format_summary(twin.meta, note=f"stored {twin.directory}"))
    return 0


def _show(args: argparse.Namespace) -> int:
    from manual_pipeline.report import format_sentence, select_sentences
    from manual_pipeline.store import load_manual

    if args.variant:
        return _show_rule(args)

    manual = load_manual(args.name)
    ids = select_sentences(manual, sentence=args.sentence, grep=args.grep, limit=args.limit)
    if args.sentence is not None and not ids:
        raise UserInputError(
            f"{manual.name}: no sentence {args.sentence} (it has 0..{len(manual.sentences) - 1})"
        )
    if not ids:
        print(f"{manual.name}: no sentence contains {args.grep!r}")
        return 1
    print("\n\n".join(format_sentence(manual, i) for i in ids))
    return 0


def _show_rule(args: argparse.Namespace) -> int:
    """The sacred terrain of a variant game and the sentence its manual gains."""
    from nlmcs.games import game_entry, make_game
    from nlmcs.model.variant_manuals import game_rule

    game = make_game("civ", **game_entry("civ").options(map_preset=args.map, max_turns=None,
                                                        variant=args.variant))
    rule = game_rule(game, args.seed)
    wrong = game_rule(game, args.seed, mismatched=True)
    print(f"{args.variant}, seed {args.seed}, {args.map} map: sacred terrain {rule.sacred} "
          f"(paraphrase {rule.paraphrase}); the mismatched manual names {wrong.terrain}")
    print(f"{args.name} + sentence: {rule.sentence}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from manual_pipeline.report import format_manual_list
    from manual_pipeline.store import list_manuals
    from nlmcs.paths import manuals_dir

    entries = list_manuals()
    if not entries:
        print(f"no stored manuals in {manuals_dir()} (see `nlmcs manual ingest --help`)")
        return 0
    print(format_manual_list(entries))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from manual_pipeline.report import format_table
    from nlmcs.experiments.bench_manual import bench_manual

    result = bench_manual(source=args.source, sentences=args.sentences,
                          unpunctuated_mb=args.unpunctuated_mb)
    print(format_table(("measure", "value"), result.rows()))
    return 0


def _cut(args: argparse.Namespace) -> int:
    from manual_pipeline.report import format_summary
    from manual_pipeline.subset import check_part, write_subset
    from nlmcs.advice.readability import CUTS, cut_sentences
    from nlmcs.games import make_game
    from nlmcs.games.civ.labels import vocabulary
    from nlmcs.model.manuals import resolve_manual

    manual = resolve_manual(args.name)
    part, rest = cut_sentences(manual, vocabulary(make_game("civ").tables), args.by)
    rule, other = CUTS[args.by], f"not: {CUTS[args.by]}"
    if args.same_size is not None:
        import numpy as np

        rng = np.random.default_rng(args.same_size)
        size = min(len(part), len(rest))
        part, rest = (sorted(int(i) for i in rng.choice(ids, size, replace=False))
                      if len(ids) > size else ids for ids in (part, rest))
        rule, other = (f"{r}; {size} drawn with seed {args.same_size}" for r in (rule, other))
    parts = ((part, f"{manual.name}-{args.by}", rule),
             (rest, f"{manual.name}-not-{args.by}", other))
    for ids, name, why in parts:  # both parts checked before either is written
        check_part(manual, ids, name=name, rule=why)
    for ids, name, why in parts:
        stored = write_subset(manual, ids, name=name, rule=why)
        print(format_summary(stored.meta, note=f"stored {stored.directory} ({len(ids):,} of "
                                               f"{len(manual.sentences):,} sentences)"))
    return 0


def _nearest(args: argparse.Namespace) -> int:
    from manual_pipeline.meaning import nearest, text_vector
    from nlmcs.model.manuals import resolve_manual

    manual = resolve_manual(args.name)
    if not text_vector(args.text).any():
        raise UserInputError(f"{args.text!r}: no word of it has a pretrained vector (all stop "
                             "words or unknown)")
    texts = manual.sentences["text"].tolist()
    for i, cosine in nearest(manual, args.text, args.k):
        print(f"{cosine:6.3f}  [{i}] {texts[i]}")
    return 0


def _bench_meaning(args: argparse.Namespace) -> int:
    import time

    from manual_pipeline import meaning
    from manual_pipeline.report import format_table
    from nlmcs.model.manuals import resolve_manual

    manual = resolve_manual(args.manual)
    t0 = time.perf_counter()
    meaning.load_vectors()
    load = time.perf_counter() - t0
    times = []
    for _ in range(args.repeat):
        t1 = time.perf_counter()
        meaning.sentence_vectors(manual)
        times.append(time.perf_counter() - t1)
    best = min(times)
    n = len(manual.sentences)
    print(format_table(("measure", "value"), [
        ("encoder", f"{meaning.ENCODER} ({meaning.PACKAGE} {meaning.VERSION})"),
        ("load seconds (digests checked)", f"{load:.3f}"),
        ("manual", f"{manual.name} ({n:,} sentences)"),
        (f"embed seconds (best of {args.repeat})", f"{best:.3f}"),
        ("sentences per second", f"{n / max(best, 1e-9):,.0f}"),
    ]))
    return 0


def _stats(args: argparse.Namespace) -> int:
    from manual_pipeline.report import format_table
    from manual_pipeline.twins import seeded_twin
    from nlmcs.advice.readability import gloss, readability_rows
    from nlmcs.files import check_output, write_csv_rows
    from nlmcs.games import make_game
    from nlmcs.games.civ.labels import vocabulary
    from nlmcs.model.manuals import resolve_manual

    if args.csv is not None:
        check_output(args.csv, what="CSV file", make_parent=True)
    manuals = [resolve_manual(name) for name in args.names]
    twins = [seeded_twin(m, 0) for m in manuals]
    audits = [args.audits / m.name for m in manuals]
    rows = readability_rows(manuals, twins, vocabulary(make_game("civ").tables), audits)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    print(format_table(("measure", *(r["manual"] for r in rows), "what it measures (unit)"),
                       [(k, *(str(r.get(k, "-")) for r in rows), gloss(k))
                        for k in keys[1:]]))
    if args.csv is not None:
        print(f"written: {write_csv_rows(args.csv, rows)}")
    return 0
