"""Feature templates x, phi, psi and f of Branavan, Silver & Barzilay (2011), hashed to table slots.

Every feature is a tuple of words and template names; instead of strings we combine stable 64-bit
ids of its parts with an integer mixer (`mix`) and keep the top `table_bits` bits as the slot in a
weight table. The ids depend only on the text, so every process computes the same slots, and they
are vectorised: one numpy call builds a template for all words of all candidate sentences.

Names follow the paper: phi (sentence relevance, weights u), psi (predicate labels, weights v),
f (output, weights w). The manual side is precomputed once (`ManualIndex`); the game side comes
from `Signature`, the label words of one (state, agent, action) triple, which is all the features
ever look at, so everything derived from a signature can be cached.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from manual_pipeline.words import stem

LABELS = ("action", "state", "background")
A, S, B = 0, 1, 2
ROOT = 3
"""Parent-label value of a word whose parent is the sentence root."""

def digest(text: str, size: int = 8) -> bytes:
    """A stable hash of a string, `size` bytes (the same in every process and run; Python's
    str hash is not)."""
    return hashlib.blake2b(text.encode(), digest_size=size).digest()


@functools.lru_cache(maxsize=262144)
def sid(text: str) -> int:
    """A stable 64-bit id of a string."""
    return int.from_bytes(digest(text), "little")


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_SEED = np.uint64(0x243F6A8885A308D3)


def mix(*parts) -> np.ndarray:
    """Order-sensitive 64-bit combination of ids; arrays broadcast (splitmix64 finaliser)."""
    with np.errstate(over="ignore"):
        h = np.full((), _SEED, dtype=np.uint64)
        for part in parts:
            h = h ^ (np.asarray(part, dtype=np.uint64) + _M1)
            h = h ^ (h >> np.uint64(30))
            h = h * _M2
            h = h ^ (h >> np.uint64(27))
            h = h * _M3
            h = h ^ (h >> np.uint64(31))
    return h


def slots(h: np.ndarray, bits: int) -> np.ndarray:
    """Table slots (int64) from mixed ids: the top `bits` bits."""
    return (np.asarray(h, dtype=np.uint64) >> np.uint64(64 - bits)).astype(np.int64)


class T:
    """Template ids, one per feature family."""

    GAME = sid("tpl:game:action*agent*state")
    GAME_BIAS = sid("tpl:game:action*agent")
    BOW = sid("tpl:phi:word")
    OVERLAP = sid("tpl:phi:overlap")
    OVERLAP_STATE = sid("tpl:phi:overlap-state")
    MEANING = sid("tpl:phi:meaning")
    MEANING_STATE = sid("tpl:phi:meaning-state")
    WORD_UNIT = sid("tpl:phi:word*unit")
    WORD_ATYPE = sid("tpl:phi:word*atype")
    NULL = sid("tpl:phi:null")
    PSI_WORD = sid("tpl:psi:word")
    PSI_POS = sid("tpl:psi:pos")
    PSI_DEP = sid("tpl:psi:dep")
    PSI_PWORD = sid("tpl:psi:parent-word")
    PSI_PPOS = sid("tpl:psi:parent-pos")
    PSI_LEAF = sid("tpl:psi:leaf")
    PSI_RULE = sid("tpl:psi:rule")
    PSI_PLABEL = sid("tpl:psi:parent-label")
    PSI_FLAG = sid("tpl:psi:flag")
    LANG_ATYPE = sid("tpl:f:word*atype")
    LANG_UA = sid("tpl:f:word*unit*action")
    LANG_STATE = sid("tpl:f:word*state")
    PRED_ATYPE = sid("tpl:f:label*word*atype")
    PRED_UA = sid("tpl:f:label*word*unit*action")
    PRED_STATE = sid("tpl:f:label*word*state")
    MATCH = sid("tpl:f:match")
    LATENT_PHI = sid("tpl:phi:latent")
    LATENT_F = sid("tpl:f:latent")


def _sentence_vectors(manual) -> np.ndarray:
    from manual_pipeline.meaning import sentence_vectors

    return sentence_vectors(manual).astype(np.float64)


class Signature(NamedTuple):
    """The label words of one candidate: all any feature template looks at."""

    agent: tuple[str, ...]
    action: tuple[str, ...]
    atype: str
    state: tuple[str, ...]

    @property
    def unit(self) -> str:
        return " ".join(self.agent)

    @property
    def action_key(self) -> str:
        return " ".join(self.action)


def signature(state, agent: str, action) -> Signature:
    """Read a candidate's words through the game interface (`nlmcs.games.base.State`)."""
    return Signature(
        tuple(state.agent_labels(agent)),
        tuple(state.action_labels(agent, action)),
        state.action_type(action),
        tuple(state.state_labels(agent)),
    )


def stem_ids(phrases: Iterable[str]) -> np.ndarray:
    """Ids of the stems of every word of the given label phrases (unique, sorted)."""
    ids = {sid(stem(word)) for phrase in phrases for word in phrase.split()}
    return np.array(sorted(ids), dtype=np.uint64)


def game_ids(sig: Signature, bits: int) -> np.ndarray:
    """x (and the game part of f): action x agent x each state label, plus action x agent."""
    act, unit = sig.action_key, sig.unit
    out = [_game_slot(act, unit, None, bits)]
    out += [_game_slot(act, unit, s, bits) for s in sig.state]
    return np.array(out, dtype=np.int64)


@functools.lru_cache(maxsize=65536)
def _game_slot(action: str, unit: str, label: str | None, bits: int) -> int:
    """One game feature's slot (None: the action x agent bias), kept: the signatures a search
    registers share their actions, agents and state labels many times over."""
    if label is None:
        return mix_int(T.GAME_BIAS, sid(action), sid(unit)) >> (64 - bits)
    return mix_int(T.GAME, sid(action), sid(unit), sid(label)) >> (64 - bits)


_MASK = (1 << 64) - 1


def mix_int(*parts: int) -> int:
    """`mix` of scalar ids in Python integers: one signature's few game features are built
    many times faster than through numpy's per-call cost (the same bits; tested)."""
    h = int(_SEED)
    m1, m2, m3 = int(_M1), int(_M2), int(_M3)
    for part in parts:
        h ^= (part + m1) & _MASK
        h ^= h >> 30
        h = (h * m2) & _MASK
        h ^= h >> 27
        h = (h * m3) & _MASK
        h ^= h >> 31
    return h


@dataclass
class ManualIndex:
    """The kept words of a parsed manual as flat arrays (W words over all sentences).

    Words are lower-cased stems; stop words, punctuation and stems seen fewer than `min_count`
    times are dropped (as in the release). Each word keeps its nearest kept ancestor as parent so
    predicate labels can be sampled parent before child.
    """

    name: str
    texts: list[str]  # sentence text by sentence id
    stems: list[str]  # (W,) stem strings, for logs
    stem_id: np.ndarray  # (W,) uint64
    sent: np.ndarray  # (W,) sentence id of each word
    parent: np.ndarray  # (W,) global index of the parent word, -1 under the root
    depth: np.ndarray  # (W,) depth in the kept-word tree (0 under the root)
    psi_static: np.ndarray  # (W, 3 labels, 7) uint64 psi ids crossed with each label
    start: np.ndarray  # (n_sentences,) first word of each sentence
    end: np.ndarray  # (n_sentences,) one past the last word
    by_stem: dict[str, np.ndarray]  # stem -> sentence ids containing it
    pos: list[str] = field(default_factory=list)
    """(W,) part of speech of each word's slot, for logs (a twin's slot keeps the original's)."""
    vectors: np.ndarray | None = None
    """(n_sentences, dim) pretrained sentence vectors (`manual_pipeline.meaning`), built only
    for a model with `ModelConfig.meaning`."""

    @property
    def num_sentences(self) -> int:
        return len(self.texts)

    @classmethod
    def build(cls, manual, *, min_count: int = 5, meaning: bool = False) -> ManualIndex:
        """From a stored manual (`manual_pipeline.store.StoredManual`); with `meaning`, its
        sentences' pretrained vectors too."""
        from manual_pipeline.store import vocabulary

        tok = manual.tokens.sort_values(["sentence_id", "token_index"], kind="stable")
        texts = [str(t) for t in manual.sentences.sort_values("sentence_id")["text"]]
        stems_all = tok["stem"].astype(str).to_numpy()
        vocab = vocabulary(manual, min_count=min_count)
        keep = (
            ~tok["is_punct"].to_numpy(dtype=bool)
            & ~tok["is_stop"].to_numpy(dtype=bool)
            & np.isin(stems_all, list(vocab))
        )
        sent_all = tok["sentence_id"].to_numpy(dtype=np.int64)
        index_all = tok["token_index"].to_numpy(dtype=np.int64)
        head_all = tok["head"].to_numpy(dtype=np.int64)
        pos_all = tok["pos"].astype(str).to_numpy()
        dep_all = tok["dep"].astype(str).to_numpy()
        # Row of each (sentence, token_index), to walk heads.
        pairs = zip(sent_all, index_all, strict=True)
        row_of = {(int(s), int(i)): r for r, (s, i) in enumerate(pairs)}
        has_child = np.zeros(len(tok), dtype=bool)
        head_row = np.empty(len(tok), dtype=np.int64)
        for r, (s, h) in enumerate(zip(sent_all, head_all, strict=True)):
            head_row[r] = row_of.get((int(s), int(h)), r)
            if head_row[r] != r:
                has_child[head_row[r]] = True

        kept_rows = np.flatnonzero(keep)
        global_of = {int(r): g for g, r in enumerate(kept_rows)}
        W = len(kept_rows)
        parent = np.full(W, -1, dtype=np.int64)
        for g, r in enumerate(kept_rows):
            a, seen = int(r), 0
            while head_row[a] != a and seen < 200:
                a, seen = int(head_row[a]), seen + 1
                if a in global_of:
                    parent[g] = global_of[a]
                    break
        depth = np.zeros(W, dtype=np.int64)
        for g in range(W):  # depth by walking up: parents may come after their children
            d, p = 0, parent[g]
            while p >= 0 and d < 200:
                d, p = d + 1, parent[p]
            depth[g] = d

        stems = [str(stems_all[r]) for r in kept_rows]
        stem_id = np.array([sid(s) for s in stems], dtype=np.uint64)
        hr = head_row[kept_rows]
        is_root = hr == kept_rows
        # build uint64 arrays first: np.where on Python ints >= 2**63 would go through float64
        pword = np.array([sid(str(stems_all[h])) for h in hr], dtype=np.uint64)
        ppos = np.array([sid("pos:" + pos_all[h]) for h in hr], dtype=np.uint64)
        pword[is_root] = ppos[is_root] = np.uint64(sid("<root>"))
        pos_k, dep_k = pos_all[kept_rows], dep_all[kept_rows]
        rule = np.full(W, B, dtype=np.int64)
        rule[pos_k == "VERB"] = A
        subj = np.isin(dep_k, ["nsubj", "nsubjpass", "advcl"]) & (pos_all[hr] == "VERB") & ~is_root
        rule[subj] = S
        base = [
            mix(T.PSI_WORD, stem_id),
            mix(T.PSI_POS, [sid("pos:" + p) for p in pos_k]),
            mix(T.PSI_DEP, [sid("dep:" + d) for d in dep_k]),
            mix(T.PSI_PWORD, pword.astype(np.uint64)),
            mix(T.PSI_PPOS, ppos.astype(np.uint64)),
            mix(T.PSI_LEAF, (~has_child[kept_rows]).astype(np.uint64)),
            mix(T.PSI_RULE, rule.astype(np.uint64)),
        ]
        base_arr = np.stack([np.broadcast_to(b, (W,)) for b in base], axis=1)  # (W, 7)
        labels = np.arange(3, dtype=np.uint64)[None, :, None]
        psi_static = mix(base_arr[:, None, :], labels)  # (W, 3, 7)

        sent = sent_all[kept_rows]
        n = len(texts)
        start = np.searchsorted(sent, np.arange(n), side="left")
        end = np.searchsorted(sent, np.arange(n), side="right")
        by_stem: dict[str, list[int]] = {}
        for g, s in enumerate(stems):
            lst = by_stem.setdefault(s, [])
            if not lst or lst[-1] != sent[g]:
                lst.append(int(sent[g]))
        return cls(
            name=str(manual.name),
            texts=texts,
            stems=stems,
            stem_id=stem_id,
            sent=sent,
            parent=parent,
            depth=depth,
            psi_static=psi_static,
            start=start,
            end=end,
            by_stem={k: np.array(v, dtype=np.int64) for k, v in by_stem.items()},
            pos=[str(p) for p in pos_k],
            vectors=_sentence_vectors(manual) if meaning else None,
        )

    def candidates(self, agent_words: tuple[str, ...], cap: int | None) -> np.ndarray:
        """Sentences holding a stem of any of the agent's words (sorted), at most `cap`."""
        found = [self.by_stem.get(stem(w)) for p in agent_words for w in p.split()]
        found = [f for f in found if f is not None]
        if not found:
            return np.zeros(0, dtype=np.int64)
        out = np.unique(np.concatenate(found))
        return out[:cap] if cap is not None else out

    def words_of(self, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Global word indices of the given sentences and each word's row in `sentences`."""
        if len(sentences) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        lengths = self.end[sentences] - self.start[sentences]
        rows = np.repeat(np.arange(len(sentences)), lengths)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        words = self.start[sentences][rows] + (np.arange(lengths.sum()) - offsets[rows])
        return words.astype(np.int64), rows
