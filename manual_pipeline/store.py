"""The stored manual artifact: what an ingest writes and what the search reads back.

A stored manual is a directory holding `sentences.parquet` (one row per sentence), `tokens.parquet`
(one row per token with its parse) and `meta.json` (source, hash, counts, parser versions). Readers
use `load_manual`; nothing here needs spaCy, so loading never re-parses. Writes go to a hidden
temporary directory beside the target that replaces it only once complete, so a failed ingest
leaves the previous artifact as it was.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manual_pipeline.errors import ManualError
from manual_pipeline.words import STOP_WORDS, stem
from nlmcs import paths

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMAT",
    "STOP_WORDS",
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

FORMAT = "nlmcs-manual/1"
META_FILE = "meta.json"
SENTENCES_FILE = "sentences.parquet"
TOKENS_FILE = "tokens.parquet"

SENTENCE_COLUMNS = ("sentence_id", "section", "text")
TOKEN_COLUMNS = (
    "sentence_id", "token_index", "text", "lower", "lemma", "stem",
    "pos", "tag", "dep", "head", "is_punct", "is_stop",
)  # fmt: skip
_INT_COLUMNS = ("sentence_id", "token_index", "head")
_BOOL_COLUMNS = ("is_punct", "is_stop")

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


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


def validate_name(name: str) -> str:
    """Return `name` if it can name a manual directory; refuse separators and odd characters."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ManualError(
            f"bad manual name {name!r}: use 1-100 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit (no path separators)"
        )
    return name


def manual_dir(name: str, *, root: Path | None = None) -> Path:
    """The directory that holds the stored manual `name`."""
    return Path(root if root is not None else paths.manuals_dir()) / validate_name(name)


def _resolve(name_or_dir: str | Path, root: Path | None) -> Path:
    if isinstance(name_or_dir, Path) or os.sep in name_or_dir or "/" in name_or_dir:
        return Path(name_or_dir)
    return manual_dir(name_or_dir, root=root)


def read_meta(directory: Path) -> dict:
    """Read and check a stored manual's meta.json (cheap: no parquet is opened)."""
    meta_path = Path(directory) / META_FILE
    if not Path(directory).is_dir():
        raise ManualError(f"{directory}: no stored manual there (see `nlmcs manual ingest`)")
    try:
        with open(meta_path, encoding="utf-8") as fh:
            meta = json.load(fh)
    except FileNotFoundError:
        raise ManualError(f"{directory}: not a stored manual (no {META_FILE})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ManualError(f"{meta_path}: corrupt metadata ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ManualError(f"{meta_path}: not a {FORMAT} artifact (format {found!r})")
    return meta


def load_manual(name_or_dir: str | Path, *, root: Path | None = None) -> StoredManual:
    """Load a stored manual by name (under `root`, default the manuals directory) or by directory.

    Raises ManualError (a UserInputError) when the artifact is missing or corrupt.
    """
    import pandas as pd
    import pyarrow as pa

    directory = _resolve(name_or_dir, root)
    meta = read_meta(directory)
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
    name = meta.get("name") or directory.name
    return StoredManual(
        name=name, directory=directory, meta=meta, sentences=sentences, tokens=tokens
    )


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


def list_manuals(*, root: Path | None = None) -> list[tuple[str, dict | None, str | None]]:
    """(name, meta, problem) for each directory under the manuals root, sorted by name.

    `meta` is None and `problem` says why when a directory is not a readable artifact.
    """
    base = Path(root if root is not None else paths.manuals_dir())
    if not base.is_dir():
        return []
    found = []
    for entry in sorted(base.iterdir()):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        try:
            found.append((entry.name, read_meta(entry), None))
        except ManualError as err:
            found.append((entry.name, None, str(err)))
    return found


class ArtifactWriter:
    """Write one stored manual into a temporary directory and swap it into place at the end.

    Use as a context manager: on an exception the temporary directory is removed and whatever
    was stored at `target` before stays untouched. Parquet files are written in row groups, so
    memory stays bounded however long the manual is.
    """

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        _check_replaceable(self.target)
        parent = self.target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.tmp = parent / f".{self.target.name}.tmp-{uuid.uuid4().hex[:8]}"
            self.tmp.mkdir()
        except OSError as err:
            raise ManualError(f"cannot write under {parent}: {err.strerror or err}") from None
        self._writers: dict[str, Any] = {}

    def __enter__(self) -> ArtifactWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def append(self, sentences: Mapping[str, Sequence], tokens: Mapping[str, Sequence]) -> None:
        """Append a batch: column name -> values, for sentences and for their tokens."""
        self._append(SENTENCES_FILE, SENTENCE_COLUMNS, sentences)
        self._append(TOKENS_FILE, TOKEN_COLUMNS, tokens)

    def _append(self, file: str, columns: Sequence[str], batch: Mapping[str, Sequence]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = _schema(columns)
        table = pa.Table.from_pydict({c: batch[c] for c in columns}, schema=schema)
        if file not in self._writers:
            self._writers[file] = pq.ParquetWriter(self.tmp / file, schema, compression="zstd")
        self._writers[file].write_table(table)

    def commit(self, meta: Mapping[str, Any]) -> Path:
        """Write meta.json, close the parquet files and move the artifact into place."""
        for file, columns in ((SENTENCES_FILE, SENTENCE_COLUMNS), (TOKENS_FILE, TOKEN_COLUMNS)):
            if file not in self._writers:
                self._append(file, columns, {c: [] for c in columns})
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        with open(self.tmp / META_FILE, "w", encoding="utf-8") as fh:
            json.dump({"format": FORMAT, **meta}, fh, indent=2, sort_keys=False)
            fh.write("\n")
        _swap_into_place(self.tmp, self.target)
        return self.target


def _schema(columns: Sequence[str]):
    import pyarrow as pa

    def kind(column: str):
        if column in _INT_COLUMNS:
            return pa.int64()
        if column in _BOOL_COLUMNS:
            return pa.bool_()
        return pa.string()

    return pa.schema([(c, kind(c)) for c in columns])


def _check_replaceable(target: Path) -> None:
    """Refuse to replace a directory that holds something other than a stored manual."""
    if target.exists() and not target.is_dir():
        raise ManualError(f"{target}: exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not (target / META_FILE).is_file():
        raise ManualError(f"{target}: exists and is not a stored manual; choose another directory")


def _swap_into_place(tmp: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(target, old)
    try:
        os.replace(tmp, target)
    except OSError:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
