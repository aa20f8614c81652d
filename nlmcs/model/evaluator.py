"""The value network as the search loop's evaluator (`nlmcs.search.evaluator.Evaluator`).

Q of every candidate comes from `ValueNetwork` through its label-word `Signature`; a datapoint is
a `Decision` (signature + sampled hidden units), or from the compiled turns a `DrawnRun` of them
(signature ids); a roll-out's datapoints are prepared into rows once and learned from with
`nlmcs.model.learner`.
`explain` gives the decision log its text side: candidate sentences with probabilities, the
sampled sentence, its word labels and their strongest learned weights.
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.base import Action, AgentId, Picks, State
from nlmcs.model import shared_scores
from nlmcs.model.associations import word_associations
from nlmcs.model.batch import Batch
from nlmcs.model.compiled import candidates
from nlmcs.model.features import LABELS, Signature, signature
from nlmcs.model.learner import Decisions, learn, prepare
from nlmcs.model.network import Decision, DrawnRun, ValueNetwork


def normalised_entropy(p: np.ndarray) -> float:
    """Entropy of a distribution over n values divided by log n: 1 uniform, 0 certain."""
    if len(p) < 2:
        return 0.0
    q = p[p > 0]
    return float(-(q * np.log(q)).sum() / np.log(len(p)))


UNIFORM_ENTROPY, UNIFORM_TOP = 0.99, 1.25
"""A decision's relevance is *uniform* when its normalised entropy is at least UNIFORM_ENTROPY
and its top sentence at most UNIFORM_TOP times the uniform probability (one meaning for every
report: docs/reading.md)."""


def is_uniform(entropy: float, top_lift: float) -> bool:
    """The rule above, on a decision's normalised entropy and its top sentence over uniform
    (what a decision log keeps)."""
    return entropy >= UNIFORM_ENTROPY and top_lift <= UNIFORM_TOP


def relevance_is_uniform(p: np.ndarray) -> bool:
    """Whether relevance `p` (two or more values) is uniform in the sense above."""
    return len(p) >= 2 and is_uniform(normalised_entropy(p), float(np.max(p)) * len(p))


def _signatures(state, agent, actions) -> list[Signature]:
    """The candidates' signatures of one agent (`State.candidate_labels`)."""
    make = tuple.__new__
    return [make(Signature, words) for words in state.candidate_labels(agent, actions)]


class NetworkEvaluator:
    """Q from a `ValueNetwork`; datapoints are `Decision`s (signature + sampled hidden units)
    and `DrawnRun`s."""

    def __init__(self, net: ValueNetwork):
        self.net = net

    def warm_up(self) -> None:
        """Load the compiled kernels before the first step is timed (once per process)."""
        if self.net.config.backend == "numba":
            from nlmcs.model.kernels import warm_up

            warm_up(expected=self.net.config.hidden_update == "expected")

    def shared_memory(self, ctx, workers: int):
        """Memory for the E[Q] that roll-out workers share (`nlmcs.model.shared_scores`), or
        None: where they cannot share, and for the kinds without text, whose E[Q] costs
        less to compute than to look up."""
        if not (self.net.text and shared_scores.available()):
            return None
        return shared_scores.allocate(ctx, workers)

    def share_scores(self, memory, worker: int, workers: int) -> None:
        """Look up and publish E[Q] in the table of `shared_memory`, as worker `worker`."""
        self.net.shared = shared_scores.SharedScores(memory, worker, workers)

    def reset(self) -> None:
        self.net.reset()

    def q_values(self, state, candidates, *, sampled, rng):
        if not sampled:
            return [self._expected_q(state, agent, actions) for agent, actions in candidates], None
        sigs: list[Signature] = []
        sizes = []
        for agent, actions in candidates:
            sizes.append(len(actions))
            sigs.extend(_signatures(state, agent, actions))
        decisions = [self.net.sample(s, rng) for s in sigs]
        flat = np.array([d.q for d in decisions])
        bounds = np.cumsum([0, *sizes])
        qs = [flat[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
        return qs, [decisions[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]

    def _expected_q(self, state, agent, actions) -> np.ndarray:
        """E[Q] of one agent's candidates."""
        key = state.candidates_key(agent, actions)
        if key is None:
            return self.net.expected_q(_signatures(state, agent, actions))
        # The same candidates with the same words (a situation roll-outs meet again) under the
        # same weights: the same E[Q], kept until a weight changes (`ScoreCache`).
        known = self.net.cache.agents
        found = known.get(key)
        if found is None:
            tables = self.net.tables
            if tables is None:
                found = self.net.expected_q(_signatures(state, agent, actions))
            else:  # the candidates' ids, kept for the search, and one compiled call
                ids = tables.agents.get(key)
                if ids is None:
                    ids = tables.of(_signatures(state, agent, actions))
                    tables.agents[key] = ids
                found = self.net.agent_expected(ids)
            known[key] = found
            found.flags.writeable = False
        return found

    @property
    def compiled_turns(self) -> bool:
        """Whether `board_joint` may choose a roll-out's turns (the network has tables)."""
        return self.net.tables is not None

    def board_joint(self, state, player, eps, rng, *, learn: bool, datapoints: list):
        """One simulated turn's joint move of `player` on a board state in one compiled call
        (`candidates.choose_turn`: epsilon-greedy on E[Q], the uniform roll-out policy's move
        where an agent explores, the chosen candidates' datapoints appended to `datapoints`
        with `learn`), drawing what `RolloutCore.joint_move` draws: `Picks`, or None (nothing
        drawn) where this network or state has no compiled turn."""
        net = self.net
        tables = net.tables
        if tables is None or not hasattr(state, "agent_keys"):
            return None
        ids = self._agent_ids(state, player, tables)
        if ids is None:
            return None
        if not ids:
            return Picks(np.zeros(0, np.int64))
        sids = np.concatenate(ids)
        bounds = np.zeros(len(ids) + 1, np.int64)
        np.cumsum([len(x) for x in ids], out=bounds[1:])
        picks, sig, y, q, labels, at = candidates().choose_turn(
            tables.arrays(), net.table_weights(), sids, bounds, net.epoch, eps, learn, rng)
        if learn and len(sig):
            datapoints.append(DrawnRun(tables.sigs, sig, y, q, labels, at))
        return Picks(picks)

    def board_turns(self, state, player, eps, rng, *, depth: int, end: int, learn_until: int,
                    datapoints: list, root: list | None = None) -> int:
        """Play `player`'s simulated turns `depth`..`end` - 1 on a board state in compiled
        calls (`kernels.turns.learned_turns`: each turn what `board_joint` chooses, then
        played), coming back here only to register agents and grow the board; the turns'
        datapoints are appended to `datapoints`, and to `root` the picks of turn 0 (`Picks`)
        where it played it. Returns the depth reached: `end`, the game's end, or a turn this
        cannot choose (an agent without actions), which the caller plays turn by turn."""
        from nlmcs.model.compiled import turns

        net = self.net
        tables = net.tables
        if tables is None or not hasattr(state, "engine_arrays"):
            return depth
        kernel, stuck = turns(), -1
        while True:
            why, reached, sig, y, q, bounds, labels, picks = kernel.learned_turns(
                *state.engine_arrays(), player, tables.keys_of(state.ctx).arrays(),
                tables.arrays(), net.table_weights(), net.epoch, eps, depth, end, learn_until,
                rng)
            if reached > depth:
                state.turns_played()
            if len(sig):
                datapoints.append(DrawnRun(tables.sigs, sig, y, q, labels, bounds))
            if depth == 0 and reached > 0 and root is not None:
                root.append(Picks(picks))
            depth = reached
            if why in (kernel.DONE, kernel.PYTHON_TURN):
                return depth
            if why == kernel.NEEDS_ROOM:
                continue
            if depth == stuck:  # registered, and still not known: a defect
                raise RuntimeError(f"compiled turns: turn {depth}'s agents stay unknown")
            stuck = depth
            ids = self._agent_ids(state, player, tables)
            if ids is None:
                return depth
            keys = tables.keys_of(state.ctx)
            for key, got in zip(state.agent_keys(player), ids, strict=True):
                keys.add(key[1:], got)

    def _agent_ids(self, state, player, tables) -> list[np.ndarray] | None:
        """Each agent's candidates' ids in `tables` (registering new candidate sets), or None
        where an agent has no candidates. A registration that starts the tables again voids
        the ids handed out before it: the turn's ids are then taken again from the new tables,
        which may not start again within this turn."""
        first = tables.generation
        while True:
            generation, found = tables.generation, tables.agents
            ids = []
            for a, key in enumerate(state.agent_keys(player)):
                got = found.get(key)
                if got is None:
                    agent, actions = state.agent_actions(player)[a]
                    if not actions:
                        return None
                    got = tables.of(_signatures(state, agent, actions),
                                    start_again=generation == first)
                    if tables.generation != generation:  # every id before this one is void
                        break
                    found[key] = got
                ids.append(got)
            else:
                return ids

    def datapoint(self, state, agent, action, rng) -> Decision:
        return self.net.sample(signature(state, agent, action), rng)

    def prepare(self, datapoints) -> Batch | Decisions | None:
        return prepare(self.net, [d for d in datapoints if d is not None])

    def learn(self, prepared: Batch | Decisions | None, reward) -> None:
        """Learn from a roll-out's `prepare`d datapoints (the loop always prepares them)."""
        learn(self.net, prepared, reward)

    def learned(self) -> tuple:
        return self.net.learned()

    def load_learned(self, learned: tuple) -> None:
        self.net.load_learned(learned)

    def keep_changes(self) -> None:
        self.net.keep_changes()

    def changes(self) -> tuple:
        return self.net.changes()

    def load_changes(self, changes: tuple) -> None:
        self.net.load_changes(changes)

    def explain(self, state: State, agent: AgentId, action: Action, rng, *, top: int = 20) -> dict:
        """The text side of one decision: candidate sentences, the sampled one, word labels."""
        net = self.net
        sig = signature(state, agent, action)
        out: dict = {"agent_labels": list(sig.agent), "action_labels": list(sig.action),
                     "state_labels": list(sig.state)}  # fmt: skip
        if net.config.kind == "linear":
            return out
        ids, p = net.relevance(sig)
        order = np.argsort(-p, kind="stable")
        # The top `top`, and every sentence tied with the last of them, so a reader of the log
        # sees the whole tie (relevance accuracy breaks it at random, not in document order).
        cut = min(top, len(order))
        while 0 < cut < len(order) and p[order[cut]] == p[order[cut - 1]]:
            cut += 1
        order = order[:cut]
        out["num_candidates"] = int(len(p))
        out["relevance_entropy"] = round(normalised_entropy(p), 6)
        dec = net.sample(sig, rng)
        if net.text:
            texts = net.index.texts
            out["sentences"] = [
                {"id": int(ids[i]), "p": round(float(p[i]), 6),
                 "text": texts[ids[i]] if ids[i] >= 0 else None}  # fmt: skip
                for i in order
            ]
            if net.config.meaning:  # what pretrained meaning said of each listed sentence
                feats = net.features(sig)
                move, situation = feats.parts[1].meaning, net.rows.state_meaning(feats)
                for i, entry in zip(order, out["sentences"], strict=True):
                    if i < len(move):
                        entry["meaning_move"] = round(float(move[i]), 4)
                        entry["meaning_situation"] = round(float(situation[i]), 4)
            chosen = int(ids[dec.y])
            out["sampled_sentence"] = chosen
            out["sampled_text"] = texts[chosen] if chosen >= 0 else None
            if dec.z:
                uw = net.features(sig).unit
                lo, _ = uw.span(dec.y)
                words = [net.index.stems[uw.words[lo + k]] for k in range(len(dec.z))]
                out["word_labels"] = [[w, LABELS[z]] for w, z in zip(words, dec.z, strict=True)]
                if net.index.pos:
                    out["word_pos"] = [net.index.pos[uw.words[lo + k]] for k in range(len(dec.z))]
                out["associations"] = word_associations(net, sig, y=dec.y, z=dec.z)
        else:
            out["latent"] = [{"state": int(i), "p": round(float(p[i]), 6)} for i in order]
            out["sampled_latent"] = int(dec.y)
        return out
