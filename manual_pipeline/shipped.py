"""Manuals that ship with the project, parsed and stored the first time they are asked for.

A shipped manual (a file in the shipped data's `manuals/` folder, named by its stem: today the
project's guide, `civ-guide`) and its random-text twin (`civ-guide-random`, seed 0) are built on
first use with a one-line notice, so a fresh installation plays `text` and `random-text` without
manual steps. A twin of another seed, `NAME-random-SEED`, is rebuilt in memory from its word
order in the store (`manual_pipeline.twins`). The store lock (`nlmcs.locking`, shared with
ingest) keeps two processes from building one manual at once.
"""

from __future__ import annotations

import logging
from pathlib import Path

from manual_pipeline.errors import ManualError
from manual_pipeline.shuffle import RANDOM_SUFFIX
from manual_pipeline.store import StoredManual, load_manual, manual_dir, read_meta
from manual_pipeline.twins import parse_seeded, seeded_twin
from manual_pipeline.writer import writing
from nlmcs.paths import shipped_dir

notice = logging.getLogger("nlmcs.notice")

TWIN_SEED = 0
"""Seed of the random-text twin built on first use (`nlmcs manual shuffle --seed` for another)."""


def shipped_manuals() -> dict[str, Path]:
    """Shipped manual files by name, and the unrelated control's text
    (`manual_pipeline.unrelated`)."""
    from manual_pipeline.unrelated import UNRELATED_FILE, UNRELATED_NAME

    folder = shipped_dir() / "manuals"
    found = {p.stem: p for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() \
        else {}
    unrelated = shipped_dir().joinpath(*UNRELATED_FILE)
    if unrelated.is_file():
        found[UNRELATED_NAME] = unrelated
    return found


def load_or_build(name_or_dir: str | Path, *, root: Path | None = None) -> StoredManual:
    """`load_manual`, except that a shipped manual (or the twin of a stored or shipped one)
    that is not stored yet is built first."""
    text = str(name_or_dir)
    if isinstance(name_or_dir, str) and "/" not in text:
        seeded = parse_seeded(text)
        if seeded is not None and not manual_dir(text, root=root).exists():
            base, seed = seeded
            return seeded_twin(load_or_build(base, root=root), seed, root=root)
        _build_if_missing(text, root)
        if text.endswith(RANDOM_SUFFIX):
            return _current_twin(load_manual(text, root=root),
                                 text.removesuffix(RANDOM_SUFFIX), root)
    return load_manual(name_or_dir, root=root)


def _current_twin(twin: StoredManual, base: str, root: Path | None) -> StoredManual:
    """The stored twin `NAME-random`, if it is the twin of the stored manual NAME as it is now:
    a manual re-ingested since its twin was shuffled gets its twin shuffled again (same seed),
    and a manual merely named like a twin is refused."""
    made = twin.meta.get("random")
    if made is None or made.get("source") != base:
        raise ManualError(f"{base}{RANDOM_SUFFIX}: holds an ingested manual, not the "
                          f"random-text twin of {base}; names ending in {RANDOM_SUFFIX} are the "
                          "twins' names (ingest it under another name)")
    base_dir = manual_dir(base, root=root)
    try:
        current = read_meta(base_dir)
    except ManualError:
        return twin  # its manual is gone or damaged: the twin stands on its own
    if (made.get("source_sha256") == current.get("source", {}).get("sha256")
            and made.get("source_created") == current.get("created")):
        return twin
    from manual_pipeline.shuffle import make_random_twin

    notice.info("%s was shuffled from %s as ingested %s; %s was ingested again (%s): shuffling "
                "its twin again (seed %d)", twin.name, base, made.get("source_created"), base,
                current.get("created"), int(made.get("seed", TWIN_SEED)))
    return make_random_twin(base, seed=int(made.get("seed", TWIN_SEED)), root=root)


def _build_if_missing(name: str, root: Path | None) -> None:
    target = manual_dir(name, root=root)
    if target.exists():
        return
    shipped = shipped_manuals()
    base = name.removesuffix(RANDOM_SUFFIX) if name.endswith(RANDOM_SUFFIX) else None
    buildable = name in shipped or (
        base is not None and (base in shipped or manual_dir(base, root=root).exists()))
    if not buildable:
        return
    with writing(target):
        if target.exists():  # another process built it while we waited, or it was restored
            return
        if name in shipped:
            from manual_pipeline.ingest import ingest

            notice.info("parsing the shipped manual %s into %s (first use)", name, target)
            ingest(shipped[name], name=name, root=root)
        else:
            from manual_pipeline.shuffle import make_random_twin

            _build_if_missing(base, root)
            notice.info("writing %s, the random-text twin of %s (seed %d, first use)", name,
                        base, TWIN_SEED)
            make_random_twin(base, seed=TWIN_SEED, root=root)
