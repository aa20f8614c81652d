"""The random-text twin of a manual, the control of Branavan, Silver & Barzilay (2011).

Their "random text" baseline gives the full model a manual whose words were permuted across the
whole document: it has the same words, sentence lengths and parse shape, but no advice. Here the
words (every token that is not punctuation) of all sentences are permuted together with one seed;
each word carries its own text, lower-case form, lemma, stem and stop flag to its new slot, while
the slot keeps the original's POS, tag, dependency label and head, and punctuation stays put. So
every sentence keeps its length and the document keeps its multiset of words.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from manual_pipeline.errors import ManualError
from manual_pipeline.store import (
    SENTENCE_COLUMNS,
    TOKEN_COLUMNS,
    ArtifactWriter,
    StoredManual,
    load_manual,
    manual_dir,
    read_meta,
    validate_name,
)
from manual_pipeline.writer import writing

RANDOM_SUFFIX = "-random"
MOVING_COLUMNS = ("text", "lower", "lemma", "stem", "is_stop")
"""Token columns that travel with a word; the others describe the slot and stay."""

_NO_SPACE_BEFORE = frozenset(".,;:!?%)]}'\"”’")
_NO_SPACE_AFTER = frozenset("([{\"“‘$")


def twin_name(name: str) -> str:
    """The name of the random-text twin of manual `name`."""
    return validate_name(f"{name}{RANDOM_SUFFIX}")


def word_order(tokens, seed: int) -> np.ndarray:
    """The permutation of a document's words that `seed` draws: entry k is the token row whose
    word goes to the k-th word slot (a token that is not punctuation)."""
    rng = np.random.default_rng(seed)
    slots = np.flatnonzero(~tokens["is_punct"].to_numpy(dtype=bool))
    return slots[rng.permutation(len(slots))]


def shuffle_tokens(tokens, *, seed: int | None = None, order: np.ndarray | None = None):
    """A copy of `tokens` with its non-punctuation words permuted over the whole document, by
    `seed` or by a `word_order` kept from before."""
    if order is None:
        order = word_order(tokens, seed)
    shuffled = tokens.copy()
    slots = np.flatnonzero(~tokens["is_punct"].to_numpy(dtype=bool))
    if len(order) != len(slots):
        raise ManualError(f"a word order of {len(order)} words for a document of {len(slots)}")
    for column in MOVING_COLUMNS:
        values = tokens[column].to_numpy(copy=True)
        values[slots] = values[order]
        shuffled[column] = values
    return shuffled


def twin_tables(manual: StoredManual, tokens):
    """(sentences, tokens) of a twin whose shuffled `tokens` are given: the sentence texts
    rebuilt from their new words."""
    grouped = tokens.groupby("sentence_id", sort=True)["text"]
    texts = [join_tokens(list(words)) for _, words in grouped]
    sentences = manual.sentences.copy()
    if len(texts) != len(sentences):
        raise ManualError(f"{manual.directory}: corrupt (sentences without tokens)")
    sentences["text"] = texts
    return sentences, tokens


def twin_meta(manual: StoredManual, *, name: str, seed: int, seconds: float) -> dict:
    """A twin's meta.json: the manual's, renamed, with where its words came from."""
    meta = {
        key: value
        for key, value in manual.meta.items()
        if key not in ("format", "name", "created", "random", "timing")
    }
    meta.update(
        name=name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        random={
            "seed": int(seed),
            "source": manual.name,
            "source_directory": str(Path(manual.directory).resolve()),
            "source_created": manual.meta.get("created"),
            "source_sha256": manual.meta.get("source", {}).get("sha256"),
            "moved_columns": list(MOVING_COLUMNS),
        },
        timing={"shuffle_seconds": round(seconds, 3)},
    )
    return meta


def join_tokens(words: list[str]) -> str:
    """Readable sentence text from tokens: a space between them except around punctuation."""
    out = ""
    for word in words:
        if out and not (word[:1] in _NO_SPACE_BEFORE or out[-1] in _NO_SPACE_AFTER):
            out += " "
        out += word
    return out


def make_random_twin(
    source: str | Path,
    *,
    seed: int = 0,
    root: Path | None = None,
    out: Path | None = None,
) -> StoredManual:
    """Write the random-text twin `<name>-random` of a stored manual and return it."""
    started = time.perf_counter()
    manual = load_manual(source, root=root)
    if manual.meta.get("random") is not None:
        raise ManualError(f"{manual.name}: is already a random-text twin; shuffle the original")
    name = twin_name(manual.name)
    target = Path(out) if out is not None else manual_dir(name, root=root)
    sentences, tokens = twin_tables(manual, shuffle_tokens(manual.tokens, seed=seed))
    meta = twin_meta(manual, name=name, seed=seed, seconds=time.perf_counter() - started)
    with writing(target):
        _check_twin_target(target)
        with ArtifactWriter(target) as writer:
            writer.append(
                {c: sentences[c].tolist() for c in SENTENCE_COLUMNS},
                {c: tokens[c].tolist() for c in TOKEN_COLUMNS},
            )
            writer.commit(meta)
    return load_manual(target)


def _check_twin_target(target: Path) -> None:
    """A twin replaces an older twin, never a manual that was ingested under that name."""
    if not (target / "meta.json").is_file():
        return
    try:
        stored = read_meta(target)
    except ManualError:
        return  # unreadable: rebuilt
    if stored.get("random") is None:
        raise ManualError(f"{target}: holds an ingested manual, not a random-text twin; the "
                          "twin would replace it (ingest that manual under another name first)")
