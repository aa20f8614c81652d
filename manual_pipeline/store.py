"""The stored manual artifact: what an ingest writes and what the search reads back.

A stored manual is a directory holding `sentences.parquet` (one row per sentence), `tokens.parquet`
(one row per token with its parse) and `meta.json` (source, hash, counts, parser versions, and
each data file's sha256, size and row count). Readers use `load_manual`, which checks all of it
(files against meta.json, sentence and token ids, head indices) before handing the tables on;
nothing here needs spaCy, so loading never re-parses. Writing is `manual_pipeline.writer`: a
temporary directory swapped into place under the store lock, so a failed or killed ingest leaves
the previous artifact as it was. `manual_pipeline.artifact` describes the files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from manual_pipeline.artifact import (
    FORMAT,
    META_FILE,
    SENTENCE_COLUMNS,
    SENTENCES_FILE,
    TOKEN_COLUMNS,
    TOKENS_FILE,
    manual_dir,
    read_meta,
    repair_hint,
    validate_name,
    verify_files,
)
from manual_pipeline.errors import ManualError
from manual_pipeline.words import STOP_WORDS, stem
from manual_pipeline.writer import ArtifactWriter, restore_if_vanished, tidy
from nlmcs import paths

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMAT",
    "META_FILE",
    "SENTENCE_COLUMNS",
    "STOP_WORDS",
    "TOKEN_COLUMNS",
    "ArtifactWriter",
    "StoredManual",
    "list_manuals",
    "load_manual",
    "manual_dir",
    "read_meta",
    "stem",
    "validate_name",
    "vocabulary",
]


@dataclass(frozen=True)
class StoredManual:
    """A parsed manual as stored on disk.

    Fields:
        name: the manual's name (its directory name under the manuals root).
        directory: where the artifact lives.
        meta: the contents of meta.json (source, sha256, counts, parser, created, random).
        sentences: columns sentence_id (0..n-1), section, text.
        tokens: one row per token ordered by (sentence_id, token_index); columns as TOKEN_COLUMNS;
            `head` is the token_index of the syntactic head within the same sentence (the root
            points to itself).
    """

    name: str
    directory: Path
    meta: dict
    sentences: pd.DataFrame
    tokens: pd.DataFrame


def _resolve(name_or_dir: str | Path, root: Path | None) -> Path:
    if isinstance(name_or_dir, Path) or os.sep in name_or_dir or "/" in name_or_dir:
        return Path(name_or_dir)
    return manual_dir(name_or_dir, root=root)


def load_manual(name_or_dir: str | Path, *, root: Path | None = None) -> StoredManual:
    """Load a stored manual by name (under `root`, default the manuals directory) or by directory.

    Raises ManualError (a UserInputError) when the artifact is missing or corrupt.
    """
    import pandas as pd
    import pyarrow as pa

    directory = _resolve(name_or_dir, root)
    restore_if_vanished(directory)
    meta = read_meta(directory)
    problem = verify_files(directory, meta)
    if problem is not None:
        raise ManualError(f"{problem}; {repair_hint(meta)}")
    frames = {}
    for file, columns in ((SENTENCES_FILE, SENTENCE_COLUMNS), (TOKENS_FILE, TOKEN_COLUMNS)):
        path = directory / file
        try:
            frame = pd.read_parquet(path)
        except FileNotFoundError:
            raise ManualError(f"{path}: missing; re-ingest the manual") from None
        except (OSError, pa.ArrowException, ValueError) as err:
            raise ManualError(f"{path}: corrupt ({err})") from None
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ManualError(f"{path}: corrupt (missing columns {', '.join(missing)})")
        frames[file] = frame
    sentences, tokens = frames[SENTENCES_FILE], frames[TOKENS_FILE]
    counts = meta.get("counts", {})
    for label, frame, key in (("sentences", sentences, "sentences"), ("tokens", tokens, "tokens")):
        if counts.get(key) != len(frame):
            raise ManualError(
                f"{directory}: corrupt ({len(frame)} {label} stored, "
                f"meta.json says {counts.get(key)})"
            )
    problem = parse_problem(sentences, tokens)
    if problem is not None:
        raise ManualError(f"{directory / TOKENS_FILE}: corrupt ({problem}); {repair_hint(meta)}")
    name = meta.get("name") or directory.name
    return StoredManual(
        name=name, directory=directory, meta=meta, sentences=sentences, tokens=tokens
    )


def parse_problem(sentences: pd.DataFrame, tokens: pd.DataFrame) -> str | None:
    """Why the tables do not form a parse the model can read (ids out of order, a head index
    outside its sentence), or None."""
    for frame, columns in ((sentences, ("sentence_id",)),
                           (tokens, ("sentence_id", "token_index", "head"))):
        for column in columns:
            if frame[column].dtype.kind not in "iu":
                return f"column {column} holds {frame[column].dtype}, not integers"
    n = len(sentences)
    if not np.array_equal(sentences["sentence_id"].to_numpy(), np.arange(n)):
        return f"sentence ids are not 0..{n - 1} in order"
    sid = tokens["sentence_id"].to_numpy()
    if len(sid) and (sid.min() < 0 or sid.max() >= n or np.any(np.diff(sid) < 0)):
        return "token sentence ids are out of order or name no sentence"
    lengths = np.bincount(sid, minlength=n)
    starts = np.cumsum(lengths) - lengths
    if not np.array_equal(tokens["token_index"].to_numpy(), np.arange(len(sid)) - starts[sid]):
        return "token indices do not count 0, 1, ... within each sentence"
    head = tokens["head"].to_numpy()
    bad = np.flatnonzero((head < 0) | (head >= lengths[sid]))
    if len(bad):
        i = int(bad[0])
        return (f"token {int(tokens['token_index'].iloc[i])} of sentence {int(sid[i])} has head "
                f"{int(head[i])}, outside its sentence")
    return None


def vocabulary(manual: StoredManual, *, min_count: int = 5) -> dict[str, int]:
    """Stem -> count over the document, stop words and punctuation dropped, rare stems dropped.

    Ordered by count (highest first), then stem.
    """
    tokens = manual.tokens
    content = tokens.loc[~tokens["is_punct"].astype(bool) & ~tokens["is_stop"].astype(bool), "stem"]
    counts = content.value_counts()
    counts = counts[counts >= min_count]
    pairs = sorted(((str(s), int(c)) for s, c in counts.items()), key=lambda p: (-p[1], p[0]))
    return dict(pairs)


READABLE_STEMS = 100
"""A manual whose model vocabulary is smaller than this gives the text model too few words to
read much (a 14-sentence file kept 2 stems): ingest and `ablation run` say so."""


def vocabulary_warning(manual: StoredManual, *, min_count: int) -> str | None:
    """One line saying the manual is too small to read at `min_count`, and what lower
    `--min-count` values would keep; None when it keeps `READABLE_STEMS` or more."""
    kept = len(vocabulary(manual, min_count=min_count))
    if kept >= READABLE_STEMS:
        return None
    lower = ", ".join(f"--min-count {m} would keep {len(vocabulary(manual, min_count=m))}"
                      for m in range(min_count - 1, 0, -1) if m in (1, 2, 3))
    return (f"warning: {manual.name}: the text model keeps only {kept} stems at --min-count "
            f"{min_count} (fewer than {READABLE_STEMS}: too few words to read much)"
            + (f"; {lower}" if lower else ""))


def list_manuals(*, root: Path | None = None) -> list[tuple[str, dict | None, str | None]]:
    """(name, meta, problem) for each directory under the manuals root, sorted by name.

    `meta` is None and `problem` says why when a directory is not a readable artifact.
    """
    base = Path(root if root is not None else paths.manuals_dir())
    if not base.is_dir():
        return []
    tidy(base)
    found = []
    for entry in sorted(base.iterdir()):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        try:
            meta = read_meta(entry)
        except ManualError as err:
            found.append((entry.name, None, str(err)))
            continue
        problem = verify_files(entry, meta)
        if problem is None:
            found.append((entry.name, meta, None))
        else:
            found.append((entry.name, None, f"{problem}; {repair_hint(meta)}"))
    return found
