"""Decoy sentences for relevance accuracy: an unrelated text parsed by the manual pipeline and
appended to a manual in memory.

Branavan, Silver & Barzilay (2011) measured whether the model prefers the manual's sentences by
mixing in sentences of an unrelated text. Here the decoy file is ingested as its own stored
manual (`manual_pipeline.ingest`, a no-op when unchanged) and `combine` puts its sentences after
the manual's, renumbered, in one `StoredManual`; a decoy sentence that holds an agent's word then
becomes one of that agent's candidates by the model's own rule, exactly like a manual sentence.
The shipped decoy text (`data/decoys/unrelated.txt`, the project's own writing: a town
newspaper, sports, cooking, museum notes) uses the agents' words in other senses.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from manual_pipeline.store import StoredManual
from nlmcs.errors import UserInputError
from nlmcs.paths import shipped_dir

DECOY_PREFIX = "decoys-"


def shipped_decoys() -> Path:
    """The shipped decoy text."""
    path = shipped_dir() / "decoys" / "unrelated.txt"
    if not path.is_file():
        raise UserInputError(f"{path}: shipped decoy text missing (is the installation "
                             "complete?)")
    return path


def load_decoys(path: str | Path, *, name: str | None = None) -> StoredManual:
    """The decoy text at `path`, parsed and stored as manual `name` (default "decoys-<file
    stem>") on first use, then read back."""
    from manual_pipeline.ingest import default_name, ingest
    from manual_pipeline.store import load_manual

    path = Path(path)
    name = name or DECOY_PREFIX + default_name(path)
    result = ingest(path, name=name)
    return load_manual(result.directory)


def combine(*, manual: StoredManual, decoys: StoredManual) -> StoredManual:
    """One manual in memory: `manual`'s sentences (ids 0..n-1), then `decoys`' (ids n..);
    `meta["decoys"]` says where the decoys start."""
    import pandas as pd

    n = len(manual.sentences)
    if sorted(manual.sentences["sentence_id"]) != list(range(n)):
        raise UserInputError(f"manual {manual.name!r}: sentence ids are not 0..{n - 1}")
    extra_s = decoys.sentences.copy()
    extra_s["sentence_id"] = extra_s["sentence_id"] + n
    extra_s["section"] = "decoy: " + extra_s["section"].astype(str)
    extra_t = decoys.tokens.copy()
    extra_t["sentence_id"] = extra_t["sentence_id"] + n
    sentences = pd.concat([manual.sentences, extra_s], ignore_index=True)
    tokens = pd.concat([manual.tokens, extra_t], ignore_index=True)
    name = f"{manual.name}-with-{decoys.name}"
    meta = {**manual.meta, "name": name,
            "counts": {**manual.meta.get("counts", {}), "sentences": len(sentences),
                       "tokens": len(tokens)},
            "decoys": {"manual": manual.name, "decoys": decoys.name, "first_decoy": n,
                       "decoy_sentences": len(extra_s)}}  # fmt: skip
    return dataclasses.replace(manual, name=name, meta=meta, sentences=sentences, tokens=tokens)


def first_decoy(manual: StoredManual) -> int:
    """Id of the first decoy sentence of a combined manual."""
    info = manual.meta.get("decoys")
    if not info:
        raise UserInputError(f"manual {manual.name!r} holds no decoys")
    return int(info["first_decoy"])
