"""A manual's words as the reader sees them: parse features, never the word itself.

Each kept word (not punctuation, not a stop word) has a handful of label features: its part of
speech, dependency, its head's part of speech, and which of the game's vocabularies (agent, state,
action words) its stem belongs to. None of them names the word, so the reader's weights are the
same kind of thing for every manual, and a word-permuted twin (which keeps every slot's parse)
differs from its manual only in which stems sit in which sentences. The words matter through
matching alone: a stem of the agent, of the state or of a candidate action found in a sentence.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from manual_pipeline.words import stem

if TYPE_CHECKING:
    from manual_pipeline.store import StoredManual

NEGATIONS = frozenset(("not", "n't", "never", "no", "avoid", "nor"))
"""Words that turn a sentence's advice around (matched on the lower-cased word, so they travel
with the word in a twin)."""
VOCABULARIES = ("agent", "state", "action")
K = 6
"""Feature slots per word: pos, dep, head pos, and one per vocabulary (or none)."""


def stems_of(phrases) -> frozenset[str]:
    """The stems of every word of the given label phrases."""
    return frozenset(stem(w) for phrase in phrases for w in phrase.split())


def manual_identity(manual: StoredManual) -> dict:
    """What a reader's file records of the manual it read: its name, a hash of its parsed
    words, the hash of the source it came from, and whether it is a word-permuted twin."""
    tok = manual.tokens.sort_values(["sentence_id", "token_index"], kind="stable")
    h = hashlib.sha256()
    for column in ("sentence_id", "stem", "pos", "dep", "head"):
        h.update("\x1f".join(map(str, tok[column].tolist())).encode())
    random = manual.meta.get("random")
    twin = manual.name.endswith("-random") or random is not None
    if random is not None and random.get("source_sha256"):
        source = str(random["source_sha256"])
    else:
        source = str((manual.meta.get("source") or {}).get("sha256") or "")
    return {"name": str(manual.name), "content_sha256": h.hexdigest()[:16],
            "source_sha256": source[:16], "twin": bool(twin)}


@dataclass
class Candidates:
    """The candidate sentences of one set of agent stems, flattened to their words."""

    sentences: np.ndarray  # (C,) sentence ids
    word_row: np.ndarray  # (W,) candidate row of each word
    feats: np.ndarray  # (W, K) feature ids (-1: empty slot)
    stems: np.ndarray  # (W,) stem strings (object)
    state_vocab: np.ndarray  # (W,) the stem is one of the game's state words
    negated: np.ndarray  # (C,) the sentence holds a negation
    by_stem: dict[str, np.ndarray] = field(default_factory=dict)  # stem -> word positions


@dataclass
class ReaderIndex:
    """The kept words of a manual, sentence by sentence."""

    identity: dict
    texts: list[str]
    feature_names: list[str]  # feature id -> name
    stems: np.ndarray  # (W,) object
    feats: np.ndarray  # (W, K) int64, -1 empty
    sent: np.ndarray  # (W,) sentence id
    start: np.ndarray  # (n_sentences,)
    end: np.ndarray
    negated: np.ndarray  # (n_sentences,) bool
    by_stem: dict[str, np.ndarray]  # stem -> sentence ids holding it
    state_stems: frozenset[str]
    _candidates: dict = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, manual: StoredManual, vocabulary: dict[str, frozenset[str]]) -> ReaderIndex:
        """From a stored manual and the game's label vocabulary (`Game.label_vocabulary`)."""
        tok = manual.tokens.sort_values(["sentence_id", "token_index"], kind="stable")
        tok = tok.reset_index(drop=True)
        texts = [str(t) for t in manual.sentences.sort_values("sentence_id")["text"]]
        sent_all = tok["sentence_id"].to_numpy(dtype=np.int64)
        pos_all = tok["pos"].astype(str).to_numpy()
        row_of = {(int(s), int(i)): r for r, (s, i) in
                  enumerate(zip(sent_all, tok["token_index"].to_numpy(), strict=True))}
        head_pos = np.array([
            pos_all[row_of.get((int(s), int(h)), r)] if row_of.get((int(s), int(h)), r) != r
            else "ROOT"
            for r, (s, h) in enumerate(zip(sent_all, tok["head"].to_numpy(), strict=True))])
        lower = tok["lower"].astype(str).to_numpy()
        n = len(texts)
        negated = np.zeros(n, dtype=bool)
        negated[np.unique(sent_all[np.isin(lower, list(NEGATIONS))])] = True

        keep = ~tok["is_punct"].to_numpy(dtype=bool) & ~tok["is_stop"].to_numpy(dtype=bool)
        keep &= ~np.isin(lower, list(NEGATIONS))
        rows = np.flatnonzero(keep)
        stems = tok["stem"].astype(str).to_numpy()[rows].astype(object)
        vocab_stems = {kind: stems_of(vocabulary.get(kind, ())) for kind in VOCABULARIES}
        names: dict[str, int] = {}

        def fid(name: str) -> int:
            return names.setdefault(name, len(names))

        dep_all = tok["dep"].astype(str).to_numpy()
        feats = np.full((len(rows), K), -1, dtype=np.int64)
        for w, r in enumerate(rows):
            feats[w, 0] = fid("pos=" + pos_all[r])
            feats[w, 1] = fid("dep=" + dep_all[r])
            feats[w, 2] = fid("head=" + head_pos[r])
            for j, kind in enumerate(VOCABULARIES):
                if stems[w] in vocab_stems[kind]:
                    feats[w, 3 + j] = fid(kind + "-word")
        sent = sent_all[rows]
        by_stem: dict[str, list[int]] = {}
        for s_, st in zip(sent, stems, strict=True):
            lst = by_stem.setdefault(st, [])
            if not lst or lst[-1] != s_:
                lst.append(int(s_))
        return cls(
            identity=manual_identity(manual), texts=texts,
            feature_names=sorted(names, key=names.__getitem__), stems=stems, feats=feats,
            sent=sent, start=np.searchsorted(sent, np.arange(n), side="left"),
            end=np.searchsorted(sent, np.arange(n), side="right"), negated=negated,
            by_stem={k: np.array(v, dtype=np.int64) for k, v in by_stem.items()},
            state_stems=vocab_stems["state"],
        )  # fmt: skip

    def candidates(self, agent_stems: frozenset[str]) -> Candidates:
        """Sentences holding any of the agent's stems, with their words (cached)."""
        key = agent_stems
        found = self._candidates.get(key)
        if found is not None:
            return found
        hits = [self.by_stem[s] for s in sorted(agent_stems) if s in self.by_stem]
        sentences = np.unique(np.concatenate(hits)) if hits else np.zeros(0, dtype=np.int64)
        lengths = self.end[sentences] - self.start[sentences]
        word_row = np.repeat(np.arange(len(sentences)), lengths)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        words = (self.start[sentences][word_row] + np.arange(int(lengths.sum()))
                 - offsets[word_row]).astype(np.int64) if len(sentences) else np.zeros(0, int)
        stems = self.stems[words]
        by_stem: dict[str, list[int]] = {}
        for i, st in enumerate(stems):
            by_stem.setdefault(st, []).append(i)
        found = Candidates(
            sentences=sentences, word_row=word_row, feats=self.feats[words], stems=stems,
            state_vocab=np.array([s in self.state_stems for s in stems], dtype=bool),
            negated=self.negated[sentences],
            by_stem={k: np.array(v, dtype=np.int64) for k, v in by_stem.items()})
        self._candidates[key] = found
        return found
