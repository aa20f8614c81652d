"""Plain-text views of stored manuals: the ingest summary, parse tables, and the list of manuals.

These return strings; the CLI prints them. The counts are the figures Branavan et al. give for
the Civilization II manual (2,083 sentences, 16.7 words per sentence, vocabulary 3,638), so the
two can be compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from manual_pipeline.store import StoredManual
from manual_pipeline.words import stem


def summary_rows(meta: dict, *, seconds: float | None = None) -> list[tuple[str, str]]:
    """(label, value) pairs describing one stored manual."""
    counts = meta.get("counts", {})
    source = meta.get("source", {})
    rows = [
        ("manual", str(meta.get("name", "?"))),
        ("source", f"{source.get('path', '?')} ({source.get('format', '?')})"),
        ("sections", f"{counts.get('sections', 0):,}"),
        ("sentences", f"{counts.get('sentences', 0):,}"),
        ("words per sentence", f"{counts.get('words_per_sentence', 0):.1f}"),
        ("vocabulary", f"{counts.get('vocabulary', 0):,} words, {counts.get('stems', 0):,} stems"),
        (
            "model vocabulary",
            f"{counts.get('model_vocabulary', 0):,} stems seen >= "
            f"{counts.get('min_stem_count', 5)} times, stop words dropped",
        ),
        ("tokens", f"{counts.get('tokens', 0):,}"),
    ]
    random = meta.get("random")
    if random:
        rows.append(("random twin of", f"{random.get('source')} (seed {random.get('seed')})"))
    parser = meta.get("parser", {})
    rows.append(("parser", f"spaCy {parser.get('spacy_version')}, {parser.get('model')} "
                           f"{parser.get('model_version')}"))  # fmt: skip
    if seconds is not None:
        rows.append(("seconds", f"{seconds:.2f}"))
    return rows


def format_summary(meta: dict, *, seconds: float | None = None, note: str | None = None) -> str:
    """The summary printed after an ingest or shuffle."""
    rows = summary_rows(meta, seconds=seconds)
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    if note:
        lines.insert(0, note)
    return "\n".join(lines)


def format_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned."""
    rows = [[str(c) for c in row] for row in rows]
    numeric = [
        bool(rows) and all(r[i].lstrip("-").replace(",", "").isdigit() for r in rows)
        for i in range(len(header))
    ]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        cols = zip(cells, widths, numeric, strict=True)
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in cols).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def select_sentences(
    manual: StoredManual, *, sentence: int | None = None, grep: str | None = None, limit: int = 5
) -> list[int]:
    """Sentence ids to show: one by id, those containing a word (by form or stem), or the first."""
    n = len(manual.sentences)
    if sentence is not None:
        return [sentence] if 0 <= sentence < n else []
    if grep:
        word = grep.lower()
        tokens = manual.tokens
        hits = tokens.loc[(tokens["lower"] == word) | (tokens["stem"] == stem(word)), "sentence_id"]
        return sorted({int(i) for i in hits})[:limit]
    return list(range(min(limit, n)))


def format_sentence(manual: StoredManual, sentence_id: int) -> str:
    """One sentence and its parse: a row per token with lemma, stem, tags and its head word."""
    row = manual.sentences.iloc[sentence_id]
    tokens = manual.tokens[manual.tokens["sentence_id"] == sentence_id]
    words = tokens["text"].tolist()
    table_rows = []
    for tok in tokens.itertuples(index=False):
        head = "ROOT" if tok.head == tok.token_index else f"{tok.head} {words[tok.head]}"
        flags = ("punct " if tok.is_punct else "") + ("stop" if tok.is_stop else "")
        table_rows.append(
            [tok.token_index, tok.text, tok.lemma, tok.stem, tok.pos, tok.tag, tok.dep, head, flags]
        )
    header = ("i", "token", "lemma", "stem", "pos", "tag", "dep", "head", "flags")
    section = f"  [{row['section']}]" if row["section"] else ""
    return f"#{sentence_id}{section}\n{row['text']}\n{format_table(header, table_rows)}"


def format_manual_list(entries: list[tuple[str, dict | None, str | None]]) -> str:
    """The table `nlmcs manual list` prints."""
    rows = []
    for name, meta, problem in entries:
        if meta is None:
            rows.append([name, "-", "-", "-", "-", f"unreadable: {problem}"])
            continue
        counts = meta.get("counts", {})
        random = meta.get("random")
        origin = (
            f"random twin of {random.get('source')} (seed {random.get('seed')})"
            if random
            else f"{meta.get('source', {}).get('path', '?')}"
        )
        rows.append([
            name,
            counts.get("sentences", 0),
            f"{counts.get('words_per_sentence', 0):.1f}",
            counts.get("vocabulary", 0),
            counts.get("tokens", 0),
            origin,
        ])  # fmt: skip
    return format_table(("name", "sentences", "words/sent", "vocabulary", "tokens", "source"), rows)
