"""Random-text twins by seed (`NAME-random-SEED`): one per ablation game, so that the control
is many draws of word salad rather than one.

A twin is the manual with its words permuted (`manual_pipeline.shuffle`), so all it adds to the
manual is the permutation. The store keeps only that: `<manuals>/.twins/NAME/SEED.npz` holds the
word order (2 bytes a word: 21 KB for the shipped guide, against 144 KB for a stored twin, so a
300-game run adds about 6 MB) and a digest of the words it permutes. The twin is rebuilt in
memory from the manual and that order. The order is kept rather than drawn again from the seed,
so a game's twin stays the one it read even if numpy's permutation changes; a manual re-ingested
with other words no longer matches the digest and gets a new order. The folder is hidden, so
`nlmcs manual list` does not show it; an order is written once, under the store's lock.
"""

from __future__ import annotations

import hashlib
import io
import re
import time
import zipfile
from pathlib import Path

import numpy as np

from manual_pipeline.shuffle import (
    MOVING_COLUMNS,
    RANDOM_SUFFIX,
    shuffle_tokens,
    twin_meta,
    twin_tables,
    word_order,
)
from manual_pipeline.store import StoredManual, validate_name
from nlmcs import paths
from nlmcs.files import write_atomic
from nlmcs.locking import store_lock

TWINS_DIR = ".twins"
_SEEDED = re.compile(rf"(?P<base>.+){RANDOM_SUFFIX}-(?P<seed>\d+)")


def seeded_name(name: str, seed: int) -> str:
    """The name of the twin of manual `name` shuffled with `seed`."""
    return validate_name(f"{name}{RANDOM_SUFFIX}-{int(seed)}")


def parse_seeded(name: str) -> tuple[str, int] | None:
    """(manual name, seed) of a name `seeded_name` made, else None."""
    found = _SEEDED.fullmatch(name)
    return (found["base"], int(found["seed"])) if found else None


def order_path(name: str, seed: int, *, root: Path | None = None) -> Path:
    """Where the word order of manual `name`'s twin of `seed` is kept."""
    base = Path(root if root is not None else paths.manuals_dir())
    return base / TWINS_DIR / validate_name(name) / f"{int(seed)}.npz"


def seeded_twin(manual: StoredManual, seed: int, *, root: Path | None = None) -> StoredManual:
    """The twin of `manual` with its words permuted by `seed`, in memory; its word order is read
    from the store, or drawn and written there on first use."""
    started = time.perf_counter()
    path = order_path(manual.name, seed, root=root)
    digest = words_digest(manual.tokens)
    order = _read_order(path, digest)
    if order is None:
        with store_lock(path.parent, what=f"twins of manual {manual.name}"):
            order = _read_order(path, digest)  # another process may have written it
            if order is None:
                order = word_order(manual.tokens, seed)
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, _pack(order, digest))
    sentences, tokens = twin_tables(manual, shuffle_tokens(manual.tokens, order=order))
    name = seeded_name(manual.name, seed)
    meta = twin_meta(manual, name=name, seed=seed, seconds=time.perf_counter() - started)
    meta["random"]["word_order"] = str(path)
    meta.pop("files", None)  # the manual's files; the twin has none of its own
    meta["counts"] = {**manual.meta.get("counts", {}), "sentences": len(sentences),
                      "tokens": len(tokens)}
    return StoredManual(name, Path(manual.directory), meta, sentences, tokens)


def words_digest(tokens) -> str:
    """sha256 of the words a twin permutes (every moving column), in document order."""
    h = hashlib.sha256()
    for column in MOVING_COLUMNS:
        h.update("\x1f".join(map(str, tokens[column].tolist())).encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()


def _pack(order: np.ndarray, digest: str) -> bytes:
    small = order.astype(np.uint16 if len(order) and order.max() < 1 << 16 else np.uint32)
    buf = io.BytesIO()
    np.savez(buf, order=small, digest=np.array(digest))
    return buf.getvalue()


def _read_order(path: Path, digest: str) -> np.ndarray | None:
    """The stored order if it is there, readable and of these words; else None (rebuilt)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["digest"]) != digest:
                return None
            return data["order"].astype(np.int64)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        return None
