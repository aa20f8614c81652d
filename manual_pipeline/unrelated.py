"""The unrelated-text control: English prose from another domain, as long as the manual.

A text model that profits from a manual may profit from *any* text of its length: more rows to
choose from, more words to weigh. The control for that reads shipped English prose that says
nothing of the game (the first chapters of Jane Austen's *Pride and Prejudice*, 1813, public
domain), cut to the manual's number of sentences, so it is the same on every machine and needs
no set-up: the text is parsed into the store on first use like a shipped manual
(`manual_pipeline.shipped`). The control of manual NAME is `NAME-unrelated`, built in memory.
"""

from __future__ import annotations

import dataclasses

from manual_pipeline.errors import ManualError
from manual_pipeline.store import StoredManual

UNRELATED_NAME = "unrelated-english"
"""The stored name of the shipped unrelated text."""
UNRELATED_FILE = ("unrelated", "pride-and-prejudice.md")
"""Its file under the shipped data."""
UNRELATED_SUFFIX = "-unrelated"


def is_unrelated(manual: StoredManual) -> bool:
    """Is `manual` an unrelated-text control already (so it is its own control)?"""
    return manual.meta.get("unrelated") is not None


def unrelated_control(manual: StoredManual, text: StoredManual) -> StoredManual:
    """The first sentences of `text`, as many as `manual` has, named `NAME-unrelated`.

    Raises ManualError when `text` is shorter than the manual: a shorter control would confound
    length with meaning."""
    if is_unrelated(manual):
        return manual
    n = len(manual.sentences)
    have = len(text.sentences)
    if n > have:
        raise ManualError(f"unrelated-text: manual {manual.name!r} has {n:,} sentences and the "
                          f"unrelated text {text.name!r} only {have:,}; the control must be as "
                          "long as the manual")
    from manual_pipeline.ingest import table_counts
    from manual_pipeline.subset import subset_tables

    sentences, tokens = subset_tables(text, range(n))
    meta = {**text.meta, "name": manual.name + UNRELATED_SUFFIX,
            "counts": table_counts(sentences, tokens),
            "unrelated": {"of": manual.name, "text": text.name, "sentences": n,
                          "text_sha256": (text.meta.get("source") or {}).get("sha256"),
                          "of_sha256": (manual.meta.get("source") or {}).get("sha256")}}
    return dataclasses.replace(text, name=manual.name + UNRELATED_SUFFIX, meta=meta,
                               sentences=sentences, tokens=tokens)
