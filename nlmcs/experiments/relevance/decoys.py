"""Decoy sentences for relevance accuracy: an unrelated text parsed by the manual pipeline and
mixed into a manual in memory.

Branavan, Silver & Barzilay (2011) measured whether the model prefers the manual's sentences by
mixing in sentences of an unrelated text. Here the decoy file is ingested as its own stored
manual (`manual_pipeline.ingest`, a no-op when unchanged) and `combine` puts its sentences at
random (seeded) positions among the manual's, renumbered, in one `StoredManual`; a decoy sentence
that holds an agent's word then becomes one of that agent's candidates by the model's own rule,
exactly like a manual sentence. Random positions matter: the model breaks ties in document order
(the first `max_sentences` candidates, or the earlier of equally ranked ones), so decoys placed
after the manual would lose every tie, and the accuracy would measure their position.
The shipped decoy text (`data/decoys/unrelated.txt`, the project's own writing: a town
newspaper, sports, cooking, museum notes) uses the agents' words in other senses.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from manual_pipeline.store import StoredManual
from nlmcs.errors import UserInputError
from nlmcs.paths import shipped_dir

DECOY_PREFIX = "decoys-"
_POSITIONS = 0xDEC0  # the stream of a seed that places the decoys (ties draw from another)


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


def combine(*, manual: StoredManual, decoys: StoredManual, seed: int = 0) -> StoredManual:
    """One manual in memory: `manual`'s and `decoys`' sentences, each in its own order, the
    decoys at positions drawn with `seed`, all renumbered 0..n+d-1; `meta["decoys"]` records
    the seed and which ids are decoys."""
    import pandas as pd

    n, d = len(manual.sentences), len(decoys.sentences)
    for part, size in ((manual, n), (decoys, d)):
        if sorted(part.sentences["sentence_id"]) != list(range(size)):
            raise UserInputError(f"manual {part.name!r}: sentence ids are not 0..{size - 1}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), _POSITIONS]))
    is_decoy = np.zeros(n + d, dtype=bool)
    is_decoy[rng.choice(n + d, size=d, replace=False)] = True
    new_id = {"manual": np.flatnonzero(~is_decoy), "decoy": np.flatnonzero(is_decoy)}

    def renumbered(frame, kind: str):
        out = frame.copy()
        out["sentence_id"] = new_id[kind][out["sentence_id"].to_numpy(dtype=np.int64)]
        return out

    extra_s = renumbered(decoys.sentences, "decoy")
    extra_s["section"] = "decoy: " + extra_s["section"].astype(str)
    sentences = pd.concat([renumbered(manual.sentences, "manual"), extra_s], ignore_index=True)
    sentences = sentences.sort_values("sentence_id", kind="stable", ignore_index=True)
    tokens = pd.concat([renumbered(manual.tokens, "manual"), renumbered(decoys.tokens, "decoy")],
                       ignore_index=True)
    tokens = tokens.sort_values(["sentence_id", "token_index"], kind="stable", ignore_index=True)
    name = f"{manual.name}-with-{decoys.name}"
    meta = {**manual.meta, "name": name,
            "counts": {**manual.meta.get("counts", {}), "sentences": len(sentences),
                       "tokens": len(tokens)},
            "decoys": {"manual": manual.name, "decoys": decoys.name, "seed": int(seed),
                       "manual_sentences": n, "decoy_sentences": d,
                       "ids": new_id["decoy"].tolist()}}  # fmt: skip
    return dataclasses.replace(manual, name=name, meta=meta, sentences=sentences, tokens=tokens)


def decoy_ids(manual: StoredManual) -> frozenset[int]:
    """Ids of the decoy sentences of a combined manual."""
    info = manual.meta.get("decoys")
    if not info or "ids" not in info:
        raise UserInputError(f"manual {manual.name!r} holds no decoys")
    return frozenset(int(i) for i in info["ids"])
