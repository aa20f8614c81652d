"""What a stored manual is on disk: its files, its meta.json, and how both are checked.

A stored manual is a directory with `sentences.parquet`, `tokens.parquet` and `meta.json`. The
meta.json lists each parquet file with its sha256, size and row count, so a file that was
truncated, replaced or deleted after the ingest is found before it is read (`verify_files`), and
a meta.json of the wrong shape is refused by field (`check_meta`) rather than failing somewhere
downstream. Artifacts written before the checksums existed are checked by row counts alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from manual_pipeline.errors import ManualError
from nlmcs import paths
from nlmcs.errors import UserInputError
from nlmcs.files import parquet_rows, recorded_file_problem

FORMAT = "nlmcs-manual/1"
META_FILE = "meta.json"
SENTENCES_FILE = "sentences.parquet"
TOKENS_FILE = "tokens.parquet"
DATA_FILES = (SENTENCES_FILE, TOKENS_FILE)
ROWS_OF = {SENTENCES_FILE: "sentences", TOKENS_FILE: "tokens"}
"""The meta.json count that gives each file's row count."""

SENTENCE_COLUMNS = ("sentence_id", "section", "text")
TOKEN_COLUMNS = (
    "sentence_id", "token_index", "text", "lower", "lemma", "stem",
    "pos", "tag", "dep", "head", "is_punct", "is_stop",
)  # fmt: skip
INT_COLUMNS = ("sentence_id", "token_index", "head")
BOOL_COLUMNS = ("is_punct", "is_stop")

_INT_COUNTS = ("sections", "sentences", "tokens", "words", "vocabulary", "stems",
               "model_vocabulary", "min_stem_count")
_DICT_FIELDS = ("source", "parser", "timing", "random")


def validate_name(name: str) -> str:
    """Return `name` if it can name a manual directory; refuse separators and odd characters."""
    try:
        return paths.validate_store_name(name, kind="manual")
    except UserInputError as err:
        raise ManualError(str(err)) from None


def manual_dir(name: str, *, root: Path | None = None) -> Path:
    """The directory that holds the stored manual `name`."""
    return Path(root if root is not None else paths.manuals_dir()) / validate_name(name)


def read_meta(directory: Path) -> dict:
    """Read and check a stored manual's meta.json (cheap: no parquet is opened)."""
    directory = Path(directory)
    meta_path = directory / META_FILE
    if not directory.is_dir():
        raise ManualError(f"{directory}: no stored manual there (see `nlmcs manual ingest`)")
    try:
        with open(meta_path, encoding="utf-8") as fh:
            meta = json.load(fh)
    except FileNotFoundError:
        raise ManualError(f"{directory}: not a stored manual (no {META_FILE})") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise ManualError(f"{meta_path}: corrupt metadata ({err})") from None
    except OSError as err:
        raise ManualError(f"{meta_path}: cannot read ({err.strerror or err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ManualError(f"{meta_path}: not a {FORMAT} artifact (format {found!r})")
    problem = check_meta(meta)
    if problem is not None:
        raise ManualError(f"{meta_path}: corrupt metadata ({problem})")
    return meta


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_meta(meta: dict) -> str | None:
    """Why a parsed meta.json has the wrong shape, or None. Fields absent from older artifacts
    may be missing; a field that is there must have its type."""
    if "name" in meta and not isinstance(meta["name"], str):
        return "'name' must be a string"
    for key in _DICT_FIELDS:
        if meta.get(key) is not None and not isinstance(meta[key], dict):
            return f"{key!r} must be an object"
    counts = meta.get("counts", {})
    if not isinstance(counts, dict):
        return "'counts' must be an object"
    for key in _INT_COUNTS:
        if key in counts and not _is_count(counts[key]):
            return f"counts.{key} must be a non-negative integer, not {counts[key]!r}"
    wps = counts.get("words_per_sentence", 0)
    if isinstance(wps, bool) or not isinstance(wps, int | float):
        return f"counts.words_per_sentence must be a number, not {wps!r}"
    source = meta.get("source") or {}
    for key in ("path", "sha256", "format"):
        if key in source and not isinstance(source[key], str):
            return f"source.{key} must be a string"
    files = meta.get("files")
    if files is None:
        return None
    if not isinstance(files, dict) or set(files) != set(DATA_FILES):
        return f"'files' must list {' and '.join(DATA_FILES)}"
    for file, record in files.items():
        if not (isinstance(record, dict) and isinstance(record.get("sha256"), str)
                and _is_count(record.get("bytes")) and _is_count(record.get("rows"))):
            return f"files.{file} must hold sha256, bytes and rows"
    return None


def verify_files(directory: Path, meta: dict, *, hashes: bool = True) -> str | None:
    """Why the data files do not match meta.json (missing, truncated, replaced), or None.

    With the checksums of meta.json (`hashes=False` compares sizes only, for a quick look);
    an artifact from before the checksums is checked by its parquet row counts."""
    directory = Path(directory)
    files = meta.get("files")
    for file in DATA_FILES:
        path = directory / file
        problem = recorded_file_problem(path, None if files is None else files[file],
                                        hashes=hashes)
        if problem is not None:
            return problem
        if files is not None:
            continue
        rows = parquet_rows(path)
        if rows is None:
            return f"{path}: corrupt (not a readable parquet file)"
        expected = meta.get("counts", {}).get(ROWS_OF[file])
        if rows != expected:  # a missing count is as wrong as a different one
            return f"{path}: corrupt ({rows} rows stored, meta.json says {expected})"
    return None


def repair_hint(meta: dict) -> str:
    """How the user gets a good copy back."""
    random = meta.get("random")
    if random:
        return f"write it again with `nlmcs manual shuffle {random.get('source')}`"
    source = (meta.get("source") or {}).get("path")
    name = meta.get("name")
    if source and name:
        return f"re-ingest it: `nlmcs manual ingest {source} --name {name}`"
    return "re-ingest the manual"
