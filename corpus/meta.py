"""A stored corpus's meta.json: its shape, and the check of its parts against it.

meta.json commits a corpus: it lists the decision parts and the games file, and (since format
checks were added) each of those files with its sha256, size and row count. `read_meta` refuses a
meta.json of the wrong shape by field, so no later step trips over a missing key; `verify_files`
finds a part that was truncated, rewritten or deleted after it was committed. A corpus written
before the checksums is checked by the row counts in the parquet footers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.files import parquet_rows, recorded_file_problem

STORE_FORMAT = "nlmcs-corpus-store/1"
PART_RE = re.compile(r"decisions-\d{4,}\.parquet")
GAMES_RE = re.compile(r"games-\d{4,}\.parquet")

_TYPES: dict[str, type | tuple[type, ...]] = {
    "name": str, "game": str, "ruleset": str, "feature_names": list, "parts": list,
    "games_file": str, "sources": list, "counts": dict,
}  # fmt: skip


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_meta(meta: object) -> str | None:
    """Why a parsed meta.json is not a corpus's, or None."""
    if not isinstance(meta, dict):
        return f"expected a JSON object, got {type(meta).__name__}"
    if meta.get("format") != STORE_FORMAT:
        return f"format {meta.get('format')!r}, expected {STORE_FORMAT!r}"
    for key, kind in _TYPES.items():
        if not isinstance(meta.get(key), kind):
            return f"field {key!r} is missing or not a {kind.__name__}"
    if not meta["feature_names"] or not all(isinstance(f, str) for f in meta["feature_names"]):
        return "feature_names must be a non-empty list of names"
    if not all(isinstance(p, str) and PART_RE.fullmatch(p) for p in meta["parts"]):
        return "parts must be names like decisions-0001.parquet"
    if len(set(meta["parts"])) != len(meta["parts"]):
        return "parts repeat"
    if not GAMES_RE.fullmatch(meta["games_file"]):
        return "games_file must be a name like games-0001.parquet"
    for source in meta["sources"]:
        if not (isinstance(source, dict) and isinstance(source.get("sha256"), str)
                and isinstance(source.get("path"), str)):
            return "each source needs its path and sha256"
    for key in ("games", "decisions", "applied"):
        if not _is_count(meta["counts"].get(key)):
            return f"counts.{key} must be a non-negative integer"
    for key in ("action_types", "decisions_per_player_kind", "players_per_kind", "agents"):
        table = meta["counts"].get(key, {})
        if not isinstance(table, dict) or not all(_is_count(v) for v in table.values()):
            return f"counts.{key} must map names to counts"
    sha = meta.get("ruleset_sha256", "")
    if not isinstance(sha, str):
        return "ruleset_sha256 must be a string"
    return _check_files(meta)


def _check_files(meta: dict) -> str | None:
    files = meta.get("files")
    if files is None:
        return None
    listed = {*meta["parts"], meta["games_file"]}
    if not isinstance(files, dict) or set(files) != listed:
        return "files must describe exactly the parts and the games file"
    for name, record in files.items():
        if not (isinstance(record, dict) and isinstance(record.get("sha256"), str)
                and _is_count(record.get("bytes")) and _is_count(record.get("rows"))):
            return f"files.{name} must hold sha256, bytes and rows"
    return None


def read_meta(directory: Path) -> dict | None:
    """The checked meta.json of the corpus at `directory`; None when there is none."""
    path = Path(directory) / "meta.json"
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise UserInputError(f"{path}: corrupt corpus metadata ({err})") from None
    except OSError as err:
        raise UserInputError(f"{path}: cannot read ({err.strerror or err})") from None
    if isinstance(meta, dict) and meta.get("format") != STORE_FORMAT:
        raise UserInputError(f"{path}: not an nlmcs corpus (format {meta.get('format')!r})")
    problem = check_meta(meta)
    if problem is not None:
        raise UserInputError(f"{path}: corrupt corpus metadata ({problem})")
    return meta


def verify_files(directory: Path, meta: dict) -> str | None:
    """Why a committed file no longer matches meta.json (missing, truncated, rewritten), or
    None. The message names the file."""
    directory = Path(directory)
    files = meta.get("files")
    names = [*meta["parts"], meta["games_file"]]
    part_rows = 0
    for name in names:
        path = directory / name
        problem = recorded_file_problem(path, None if files is None else files[name])
        if problem is not None:
            return problem
        if files is not None:
            continue
        rows = parquet_rows(path)
        if rows is None:
            return f"{path}: damaged (not a readable parquet file)"
        if name == meta["games_file"] and rows != meta["counts"]["games"]:
            return f"{path}: damaged ({rows} games stored, meta.json says " \
                   f"{meta['counts']['games']})"
        if name != meta["games_file"]:
            part_rows += rows
    if files is None and part_rows != meta["counts"]["decisions"]:
        return f"{directory}: damaged ({part_rows} decisions stored, meta.json says " \
               f"{meta['counts']['decisions']})"
    return None


def check_stored(directory: Path) -> tuple[dict | None, str | None]:
    """(meta, None) for a sound corpus at `directory`; (meta or None, why) for one that is not:
    no meta.json, one of the wrong shape, or a file that no longer matches it."""
    try:
        meta = read_meta(directory)
    except UserInputError as err:
        return None, str(err)
    if meta is None:
        return None, f"{directory}: no corpus there (no meta.json)"
    return meta, verify_files(directory, meta)
