"""Corpora that ship with the project, found by name, and how a stored corpus is made shippable.

A shipped corpus is a stored corpus (meta.json and its parquet parts) in the shipped data's
`corpora/` folder. It is read where it lies, never written: a name is looked up in the user's
store first and in the shipped folder second, so a user's own corpus of the same name wins.
`export_corpus` copies a stored corpus's committed files without its logs and with its source
paths cut to file names, which is how `data/corpora/civ-sample` was made (docs/corpus.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from corpus.meta import check_stored
from corpus.store import corpus_dir
from nlmcs.errors import UserInputError
from nlmcs.files import atomic_output, file_record, parquet_rows, write_atomic
from nlmcs.paths import shipped_dir

SAMPLE_CORPUS = "civ-sample"
"""The shipped sample: 200 games of the built-in AI against itself on the small map."""


def shipped_corpora() -> dict[str, Path]:
    """Shipped corpus directories by name."""
    folder = shipped_dir() / "corpora"
    if not folder.is_dir():
        return {}
    return {p.name: p for p in sorted(folder.iterdir()) if (p / "meta.json").is_file()}


def find_corpus_dir(name_or_dir: str | Path) -> Path:
    """The directory of a corpus to read: a path as is; a name in the user's store, else among
    the shipped corpora, else the (missing) store directory, for the caller's error."""
    directory = corpus_dir(name_or_dir)
    given_as_path = directory == Path(str(name_or_dir))  # e.g. ./x or /data/x: any folder name
    if given_as_path or (directory / "meta.json").exists():
        return directory
    return shipped_corpora().get(directory.name, directory)


def export_corpus(name_or_dir: str | Path, out: Path) -> Path:
    """Copy the committed files of a stored corpus into the new folder `out` (no logs; source
    paths reduced to their file names; files checked first, and recorded with their sha256 in
    the copy's meta.json, which is written last). Returns `out`."""
    source = find_corpus_dir(name_or_dir)
    meta, problem = check_stored(source)
    if meta is None:
        raise UserInputError(problem or f"no corpus at {source}")
    if problem is not None:
        raise UserInputError(f"{problem}; not exported")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserInputError(f"{out} exists and is not a folder")
    if out.exists() and any(out.iterdir()):
        raise UserInputError(f"{out} exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in meta["parts"]:
        shutil.copyfile(source / name, out / name)
        files[name] = file_record(out / name, parquet_rows(out / name) or 0)
    games = pd.read_parquet(source / meta["games_file"])
    games["source"] = [Path(p).name for p in games["source"]]
    with atomic_output(out / meta["games_file"], binary=True) as fh:
        games.to_parquet(fh, index=False)
    files[meta["games_file"]] = file_record(out / meta["games_file"], len(games))
    meta["sources"] = [{**s, "path": Path(s["path"]).name} for s in meta["sources"]]
    meta["name"] = out.name
    meta["files"] = files
    write_atomic(out / "meta.json", json.dumps(meta, indent=1, sort_keys=True, allow_nan=False))
    return out
