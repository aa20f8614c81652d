"""The reader's network: relevance over candidate sentences, word labels, advice per action.

For one question (an agent, its state labels, its candidate actions' labels) and the candidate
sentences C of the agent's words:

- every word w gets a label distribution q(w) over (action, state, background) from its parse
  features (`index`), a softmax over summed weights `V` plus a bias;
- a sentence s gets relevance features: the state words it holds that describe this state
  (sum of q_state over words whose stem is one of the state's), state words that describe another
  state (a terrain the agent is not on), its best match to a candidate action, negation, the
  agent's word in a state role, and a bias; relevance r is a softmax over C and NULL (score 0):
  NULL is "no advice";
- sentence s advises action a by theta . (sum of q_action over s's words naming a, the same
  with q_state, the first under negation, the first times the state match);
- the prior's logits are the relevance-weighted advice, and its distribution a softmax over the
  agent's candidates. With no candidate sentence, or nothing matched, the prior is uniform.

Everything is batched over questions (segment softmaxes by index), so training evaluates
thousands of (agent, state, candidates) keys in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from nlmcs.reader.index import Candidates, K, ReaderIndex, stems_of

LABELS = ("action", "state", "background")
RELEVANCE = ("state-match", "state-other", "action-match", "negated", "agent-as-state", "bias")
ADVICE = ("action-words", "state-words", "negated-action-words", "action-words-x-state-match")


@dataclass
class Query:
    """One (agent, state, candidates) question laid out for the network."""

    candidates: Candidates
    n_actions: int
    words: np.ndarray  # (W,) positions in candidates' words that can matter (flagged)
    word_row: np.ndarray  # (W,) candidate row
    feats: np.ndarray  # (W, K)
    in_state: np.ndarray  # (W,) float
    other_state: np.ndarray  # (W,)
    is_agent: np.ndarray  # (W,)
    hit_word: np.ndarray  # (H,) index into words
    hit_action: np.ndarray  # (H,)

    @property
    def n_sentences(self) -> int:
        return len(self.candidates.sentences)


def build_query(index: ReaderIndex, agent_labels, state_labels, actions_labels) -> Query:
    """The question of one agent: its words, its state's words, its candidates' words."""
    cand = index.candidates(stems_of(agent_labels))
    n = len(cand.stems)
    in_state = np.zeros(n, dtype=bool)
    for st in stems_of(state_labels):
        pos = cand.by_stem.get(st)
        if pos is not None:
            in_state[pos] = True
    is_agent = np.zeros(n, dtype=bool)
    for st in stems_of(agent_labels):
        pos = cand.by_stem.get(st)
        if pos is not None:
            is_agent[pos] = True
    other = cand.state_vocab & ~in_state
    hit_w, hit_a = [], []
    for a, labels in enumerate(actions_labels):
        for st in stems_of(labels):
            pos = cand.by_stem.get(st)
            if pos is not None:
                hit_w.append(pos)
                hit_a.append(np.full(len(pos), a, dtype=np.int64))
    hit_w_all = np.concatenate(hit_w) if hit_w else np.zeros(0, dtype=np.int64)
    flagged = in_state | other | is_agent
    flagged[hit_w_all] = True
    words = np.flatnonzero(flagged)
    local = np.full(n, -1, dtype=np.int64)
    local[words] = np.arange(len(words))
    return Query(
        candidates=cand, n_actions=len(actions_labels), words=words,
        word_row=cand.word_row[words], feats=cand.feats[words],
        in_state=in_state[words].astype(np.float32), other_state=other[words].astype(np.float32),
        is_agent=is_agent[words].astype(np.float32), hit_word=local[hit_w_all],
        hit_action=np.concatenate(hit_a) if hit_a else np.zeros(0, dtype=np.int64))  # fmt: skip


@dataclass
class Batch:
    """Queries concatenated; `*_query` say which question a row belongs to."""

    n_queries: int
    feats: torch.Tensor  # (W, K), -1 -> the padding row
    word_sent: torch.Tensor  # (W,) global sentence row
    in_state: torch.Tensor
    other_state: torch.Tensor
    is_agent: torch.Tensor
    negated: torch.Tensor  # (S,)
    sent_query: torch.Tensor  # (S,)
    pair_of_hit: torch.Tensor  # (H,)
    hit_word: torch.Tensor  # (H,) global word row
    pair_sent: torch.Tensor  # (P,)
    pair_action: torch.Tensor  # (P,) global action row
    action_query: torch.Tensor  # (A,)
    sent_offsets: np.ndarray  # (Q + 1,)
    action_offsets: np.ndarray  # (Q + 1,)


def collate(queries: list[Query]) -> Batch:
    w_off = s_off = a_off = 0
    parts: dict[str, list] = {k: [] for k in (
        "feats", "word_sent", "in_state", "other_state", "is_agent", "negated", "sent_query",
        "hit_word", "hit_sent", "hit_action", "action_query")}
    sent_offsets, action_offsets = [0], [0]
    for qi, q in enumerate(queries):
        c = q.n_sentences
        parts["feats"].append(q.feats)
        parts["word_sent"].append(q.word_row + s_off)
        parts["in_state"].append(q.in_state)
        parts["other_state"].append(q.other_state)
        parts["is_agent"].append(q.is_agent)
        parts["negated"].append(q.candidates.negated.astype(np.float32))
        parts["sent_query"].append(np.full(c, qi, dtype=np.int64))
        parts["hit_word"].append(q.hit_word + w_off)
        parts["hit_sent"].append(q.word_row[q.hit_word] + s_off)
        parts["hit_action"].append(q.hit_action + a_off)
        parts["action_query"].append(np.full(q.n_actions, qi, dtype=np.int64))
        w_off += len(q.words)
        s_off += c
        a_off += q.n_actions
        sent_offsets.append(s_off)
        action_offsets.append(a_off)
    cat = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in parts.items()}
    # each (sentence, action) pair that some word links, as one key
    width = max(a_off, 1)
    keys, pair_of_hit = np.unique(cat["hit_sent"].astype(np.int64) * width
                                  + cat["hit_action"].astype(np.int64), return_inverse=True)
    t = torch.as_tensor
    return Batch(
        n_queries=len(queries),
        feats=t(cat["feats"].reshape(-1, K).astype(np.int64)),
        word_sent=t(cat["word_sent"].astype(np.int64)),
        in_state=t(cat["in_state"].astype(np.float32)),
        other_state=t(cat["other_state"].astype(np.float32)),
        is_agent=t(cat["is_agent"].astype(np.float32)),
        negated=t(cat["negated"].astype(np.float32)),
        sent_query=t(cat["sent_query"].astype(np.int64)),
        pair_of_hit=t(pair_of_hit.reshape(-1).astype(np.int64)),
        hit_word=t(cat["hit_word"].astype(np.int64)),
        pair_sent=t(keys // width),
        pair_action=t(keys % width),
        action_query=t(cat["action_query"].astype(np.int64)),
        sent_offsets=np.array(sent_offsets), action_offsets=np.array(action_offsets),
    )  # fmt: skip


def segment_log_softmax(x: torch.Tensor, group: torch.Tensor, n: int) -> torch.Tensor:
    """log softmax of `x` within each group (`group[i]` in [0, n))."""
    top = torch.full((n,), -torch.inf, dtype=x.dtype).scatter_reduce(
        0, group, x.detach(), "amax", include_self=True)
    shifted = x - top[group]
    z = torch.zeros(n, dtype=x.dtype).index_add(0, group, shifted.exp())
    return shifted - z.log()[group]


class ReaderNet(torch.nn.Module):
    """The reader's weights: `V` (features x labels), label bias, relevance `u`, advice
    `theta`. Feature rows follow one index's feature names."""

    def __init__(self, n_features: int):
        super().__init__()
        self.V = torch.nn.Parameter(torch.zeros(n_features, len(LABELS)))
        self.label_bias = torch.nn.Parameter(torch.zeros(len(LABELS)))
        self.u = torch.nn.Parameter(torch.zeros(len(RELEVANCE)))
        self.theta = torch.nn.Parameter(torch.zeros(len(ADVICE)))

    def forward(self, b: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(log prior of every candidate action (A,), relevance of every sentence and of each
        question's NULL (S + Q,), NULL last)."""
        V = torch.cat([self.V, torch.zeros(1, len(LABELS))])  # row -1: an empty slot
        q = torch.softmax(V[b.feats].sum(1) + self.label_bias, dim=-1)
        qa, qs = q[:, 0], q[:, 1]
        n_s = len(b.negated)

        def per_sentence(values: torch.Tensor) -> torch.Tensor:
            return torch.zeros(n_s).index_add(0, b.word_sent, values)

        state = per_sentence(qs * b.in_state)
        other = per_sentence(qs * b.other_state)
        agent = per_sentence(qs * b.is_agent)
        n_p = len(b.pair_sent)
        match = torch.zeros(n_p).index_add(0, b.pair_of_hit, qa[b.hit_word])
        smatch = torch.zeros(n_p).index_add(0, b.pair_of_hit, qs[b.hit_word])
        best = torch.zeros(n_s).scatter_reduce(0, b.pair_sent, match, "amax", include_self=True)
        phi = torch.stack([state, other, best, b.negated, agent, torch.ones(n_s)], dim=1)
        scores = torch.cat([phi @ self.u, torch.zeros(b.n_queries)])
        group = torch.cat([b.sent_query, torch.arange(b.n_queries)])
        r = segment_log_softmax(scores, group, b.n_queries).exp()
        rs, neg, st = r[b.pair_sent], b.negated[b.pair_sent], state[b.pair_sent]
        advice = torch.stack([match, smatch, neg * match, st * match], dim=1) @ self.theta
        logits = torch.zeros(len(b.action_query)).index_add(0, b.pair_action, rs * advice)
        return segment_log_softmax(logits, b.action_query, b.n_queries), r
