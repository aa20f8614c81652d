"""The text agent's advice for one of the human's agents: its most relevant manual sentence and
the action it would play, from one small search.

The text agent is the full text model's Monte-Carlo search (`text`, Branavan et al. 2011) with a
small budget, run on a copy of the game's state; its decision record (`MCPlanner.explain`) holds
the candidate sentences with their relevance for the action it chose. One planner per game
configuration is built on the first request (reading the manual) and reused; requests take turns
with it, since a planner is not safe to share between threads.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from nlmcs.experiments.relevance.measures import relevance_verdict
from nlmcs.serve.views import action_text

ADVICE_SENTENCES = 5
"""Candidate sentences of the advice's text model per agent and action."""


def advice_model():
    """The text model of the advice: its candidates are the few sentences sharing most words
    with the agent's state and the action (`rank_sentences="state-action"`). At a budget of a
    few roll-outs the learned relevance has barely moved from uniform, so among all sentences
    the "most relevant" one would be a near-random pick; among these, it is one about the
    agent's words and situation."""
    from nlmcs.model.config import ModelConfig

    return ModelConfig(max_sentences=ADVICE_SENTENCES, rank_sentences="state-action")


class Advisor:
    """Answers "what would the text agent do here, and which sentence of the manual led it?"."""

    def __init__(self, *, rollouts: int, depth: int, manual: str | None, opponent: str):
        self.rollouts = rollouts
        self.depth = depth
        self.manual = manual
        # Inside its roll-outs the text agent models the opponent as this scripted policy.
        self.opponent = opponent if opponent.split(":", 1)[0] == "builtin" else "builtin"
        self._lock = threading.Lock()
        self._planners: dict = {}
        self._asked = 0

    def _planner(self, game):
        key = game.config
        if key not in self._planners:
            from nlmcs.methods import make_planner
            from nlmcs.search.config import SearchConfig

            self._planners[key] = make_planner(
                "text", game=game, manual=self.manual, seed=0, model_config=advice_model(),
                search_config=SearchConfig(rollouts=self.rollouts, depth=self.depth,
                                           opponent=self.opponent, log_decisions=True))
        return self._planners[key]

    def advise(self, state, player: int, agent: str) -> dict:
        """Search from `state` (a copy the caller no longer touches) and explain `agent`'s move."""
        t0 = time.perf_counter()
        with self._lock:
            planner = self._planner(state.game)
            self._asked += 1
            rng = np.random.default_rng(np.random.SeedSequence([state.turn, self._asked]))
            move = planner.choose(state, player, rng)
            record = next((r for r in planner.last_log if r["agent"] == agent), {})
        chosen = move.get(agent)
        sentences = [s for s in record.get("sentences", []) if s.get("text")]
        best = sentences[0] if sentences else None
        return {
            "agent": agent,
            "turn": state.turn,
            "action": None if chosen is None else {"kind": chosen.kind, "arg": chosen.arg,
                                                   "text": action_text(state, chosen)},
            "sentence": None if best is None else best["text"],
            "relevance": None if best is None else best["p"],
            "sampled_sentence": record.get("sampled_text"),
            "top_sentences": [{"text": s["text"], "p": s["p"]} for s in sentences[:3]],
            # the same words every view uses: "uniform" when no sentence is preferred
            "relevance_verdict": relevance_verdict(record) if record else None,
            "rollouts": self.rollouts,
            "depth": self.depth,
            "seconds": round(time.perf_counter() - t0, 3),
        }

    def close(self) -> None:
        with self._lock:
            for planner in self._planners.values():
                planner.close()
            self._planners.clear()
