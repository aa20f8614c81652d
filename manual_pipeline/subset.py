"""A stored manual made of some of another's sentences, in their order: a cut of a manual by a
property of its sentences (what makes a manual readable is asked by reading each part).

The part keeps each kept sentence's parse as stored (tokens, heads, sections) and renumbers the
sentences 0..k-1; its meta.json says which manual it was cut from and by what rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from manual_pipeline.errors import ManualError
from manual_pipeline.store import (
    SENTENCE_COLUMNS,
    TOKEN_COLUMNS,
    StoredManual,
    load_manual,
    manual_dir,
    read_meta,
    validate_name,
)
from manual_pipeline.writer import ArtifactWriter, writing


def subset_tables(manual: StoredManual, ids: Sequence[int]):
    """(sentences, tokens) of sentences `ids` (sorted, within the manual) of `manual`,
    renumbered 0..k-1, parse as stored."""
    new_id = {int(old): new for new, old in enumerate(ids)}
    sentences = manual.sentences[manual.sentences["sentence_id"].isin(new_id)].copy()
    tokens = manual.tokens[manual.tokens["sentence_id"].isin(new_id)].copy()
    sentences["sentence_id"] = sentences["sentence_id"].map(new_id)
    tokens["sentence_id"] = tokens["sentence_id"].map(new_id)
    return sentences.reset_index(drop=True), tokens.reset_index(drop=True)


def check_part(manual: StoredManual, keep: Sequence[int], *, name: str, rule: str,
               root: Path | None = None) -> list[int]:
    """The sorted ids of a part to store as `name`, refused (ManualError, nothing written) when
    it is empty, names a sentence the manual lacks, or would replace a manual that is not a
    part cut before."""
    name = validate_name(name)
    ids = sorted({int(i) for i in keep})
    if not ids:
        raise ManualError(f"{manual.name}: no sentence is left for {name} ({rule}); nothing "
                          "stored")
    n = len(manual.sentences)
    if ids[0] < 0 or ids[-1] >= n:
        raise ManualError(f"{manual.name}: has sentences 0..{n - 1}, not {ids[-1]}")
    target = manual_dir(name, root=root)
    if (target / "meta.json").is_file():
        try:
            stored = read_meta(target)
        except ManualError:
            stored = {"subset": "unreadable"}
        if stored.get("subset") is None:
            raise ManualError(f"{target}: holds a manual that is not a cut part; nothing stored "
                              "(cut a copy stored under another name)")
    return ids


def write_subset(manual: StoredManual, keep: Sequence[int], *, name: str, rule: str,
                 root: Path | None = None) -> StoredManual:
    """Store sentences `keep` of `manual` as manual `name` and return it (`check_part` says
    what is refused)."""
    from manual_pipeline.ingest import table_counts

    ids = check_part(manual, keep, name=name, rule=rule, root=root)
    sentences, tokens = subset_tables(manual, ids)
    meta = {k: v for k, v in manual.meta.items() if k not in ("name", "created", "timing")}
    meta.update(name=name, created=datetime.now(UTC).isoformat(timespec="seconds"),
                counts=table_counts(sentences, tokens),
                subset={"of": manual.name, "rule": rule, "sentences": len(ids),
                        "of_sentences": len(manual.sentences),
                        "of_sha256": (manual.meta.get("source") or {}).get("sha256")})
    target = manual_dir(name, root=root)
    with writing(target):
        check_part(manual, keep, name=name, rule=rule, root=root)  # under the lock
        with ArtifactWriter(target) as writer:
            writer.append({c: sentences[c].tolist() for c in SENTENCE_COLUMNS},
                          {c: tokens[c].tolist() for c in TOKEN_COLUMNS})
            writer.commit(meta)
    return load_manual(target)
