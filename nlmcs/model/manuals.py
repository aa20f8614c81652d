"""Which manual a text model reads: a stored manual by name or directory, or one in memory.

`random-text` reads the word-permuted twin of the manual (`<name>-random`, or with a seed
`<name>-random-SEED`, as an ablation draws one per game); shipped manuals and their twins are
built on first use (`manual_pipeline.shipped`, `manual_pipeline.twins`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from manual_pipeline.store import StoredManual
from nlmcs.model.features import ManualIndex

DEFAULT_MANUAL = "civ-guide"

ManualRef = str | Path | StoredManual | None
"""A stored manual's name or directory, a `StoredManual`, or None for `DEFAULT_MANUAL`."""


def resolve_manual(manual: ManualRef) -> StoredManual:
    if isinstance(manual, StoredManual):
        return manual
    from manual_pipeline.shipped import load_or_build

    return load_or_build(manual if manual is not None else DEFAULT_MANUAL)


def random_twin(manual: ManualRef, *, seed: int | None = None) -> ManualRef:
    """The word-permuted twin of a manual given by name, directory or `StoredManual`.

    Without `seed`: a name or directory maps to the stored twin (built on first use for a
    shipped or stored manual named by name); a `StoredManual` whose twin is not stored beside
    it is shuffled in memory with seed 0. With `seed`: the twin shuffled with it, by name
    (`NAME-random-SEED`) for a name, else in memory (`manual_pipeline.twins`). A twin is its
    own twin.
    """
    if seed is not None:
        from manual_pipeline.twins import seeded_name, seeded_twin

        if manual is None or (isinstance(manual, str) and "/" not in manual):
            return seeded_name(manual or DEFAULT_MANUAL, seed)
        manual = resolve_manual(manual if isinstance(manual, StoredManual) else Path(manual))
        return manual if _is_twin(manual) else seeded_twin(manual, seed)
    if manual is None or isinstance(manual, str):
        return f"{manual or DEFAULT_MANUAL}-random"
    if not isinstance(manual, StoredManual):
        directory = Path(manual)
        return directory.with_name(directory.name + "-random")
    if _is_twin(manual):
        return manual
    stored = Path(manual.directory).parent / f"{manual.name}-random"
    if (stored / "meta.json").is_file():
        return stored
    from manual_pipeline.shuffle import shuffle_tokens

    return dataclasses.replace(
        manual, name=manual.name + "-random", tokens=shuffle_tokens(manual.tokens, seed=0)
    )


def _is_twin(manual: StoredManual) -> bool:
    return manual.name.endswith("-random") or manual.meta.get("random") is not None


def load_index(manual: ManualRef, *, min_count: int) -> ManualIndex:
    """The model's view of a manual (kept words, parse tree, candidate lookup)."""
    return ManualIndex.build(resolve_manual(manual), min_count=min_count)
