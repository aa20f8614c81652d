"""Corpora that ship with the project, found by name, and how a stored corpus is made shippable.

A shipped corpus is a stored corpus (meta.json and its parquet parts) in the shipped data's
`corpora/` folder. It is read where it lies, never written: a name is looked up in the user's
store first and in the shipped folder second, so a user's own corpus of the same name wins.
`export_corpus` copies a stored corpus's committed files without its logs and with its source
paths cut to file names, which is how `data/corpora/civ-sample` was made (README, "Corpus").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from corpus.store import corpus_dir
from nlmcs.errors import UserInputError
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
    if (directory / "meta.json").exists() or directory != corpus_dir(directory.name):
        return directory
    return shipped_corpora().get(directory.name, directory)


def export_corpus(name_or_dir: str | Path, out: Path) -> Path:
    """Copy the committed files of a stored corpus into the new folder `out` (no logs; source
    paths reduced to their file names). Returns `out`."""
    source = find_corpus_dir(name_or_dir)
    meta_path = source / "meta.json"
    if not meta_path.is_file():
        raise UserInputError(f"no corpus at {source}")
    if out.exists() and any(out.iterdir()):
        raise UserInputError(f"{out} exists and is not empty")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    for name in meta["parts"]:
        shutil.copyfile(source / name, out / name)
    games = pd.read_parquet(source / meta["games_file"])
    games["source"] = [Path(p).name for p in games["source"]]
    games.to_parquet(out / meta["games_file"], index=False)
    meta["sources"] = [{**s, "path": Path(s["path"]).name} for s in meta["sources"]]
    meta["name"] = out.name
    (out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return out
