"""A small game behind `nlmcs.games.base` and a hand-parsed toy manual, for model and search tests.

Each player has a few settlers standing on a terrain and a civilization agent. Irrigating
grassland or mining hills scores 3 points; moving changes a settler's terrain; everything else
scores nothing. After `max_turns` the higher score wins. The built-in player knows the rule, so a
good search should learn it from roll-outs, and the manual sentence "settlers irrigate grassland"
truly predicts the reward.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from manual_pipeline.store import StoredManual
from manual_pipeline.words import STOP_WORDS, stem
from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.model.features import Signature

TERRAINS = ("grassland", "hills", "desert")
GOOD = {("irrigate", "grassland"), ("mine", "hills")}
TOY_ACTION_KINDS = ("wait", "research", "irrigate", "mine", "move")
"""Every action kind an agent of the toy game may choose."""


class ToyState(State):
    def __init__(self, terrain: list[list[int]], scores: list[float], turn: int, max_turns: int):
        self.terrain = terrain  # terrain[player][unit]
        self.scores = scores
        self.turn = turn
        self.max_turns = max_turns

    def clone(self) -> ToyState:
        terrain = [list(t) for t in self.terrain]
        return ToyState(terrain, list(self.scores), self.turn, self.max_turns)

    @property
    def num_players(self) -> int:
        return len(self.terrain)

    def agents(self, player: int) -> list[AgentId]:
        return [f"civ:{player}"] + [f"unit:{player}:{i}" for i in range(len(self.terrain[player]))]

    def _unit(self, agent: AgentId) -> tuple[int, int]:
        _, p, i = agent.split(":")
        return int(p), int(i)

    def legal_actions(self, agent: AgentId) -> list[Action]:
        if agent.startswith("civ:"):
            return [Action("wait"), Action("research", "bronze working")]
        return [Action("irrigate"), Action("mine"), Action("wait"), Action("move", "north")]

    def apply_action(self, agent: AgentId, action: Action, rng: np.random.Generator) -> bool:
        if action not in self.legal_actions(agent):
            return False
        if agent.startswith("civ:"):
            return True
        p, i = self._unit(agent)
        t = TERRAINS[self.terrain[p][i]]
        if (action.kind, t) in GOOD:
            self.scores[p] += 3.0
        elif action.kind == "move":
            self.terrain[p][i] = (self.terrain[p][i] + 1) % len(TERRAINS)
        return True

    def end_turn(self, rng: np.random.Generator) -> None:
        self.turn += 1

    def is_terminal(self) -> bool:
        return self.turn >= self.max_turns

    def winner(self) -> int | None:
        if not self.is_terminal() or self.scores[0] == self.scores[1]:
            return None
        return int(np.argmax(self.scores))

    def score(self, player: int) -> float:
        return self.scores[player]

    def stats(self, player: int) -> dict[str, float]:
        return {"score": self.scores[player], "units": float(len(self.terrain[player]))}

    def agent_labels(self, agent: AgentId) -> tuple[str, ...]:
        return ("civilization",) if agent.startswith("civ:") else ("settlers",)

    def state_labels(self, agent: AgentId) -> tuple[str, ...]:
        if agent.startswith("civ:"):
            return ()
        p, i = self._unit(agent)
        return (TERRAINS[self.terrain[p][i]],)

    def action_labels(self, agent: AgentId, action: Action) -> tuple[str, ...]:
        if action.kind == "move":
            return ("move", str(action.arg))
        if action.kind == "research":
            return ("research " + str(action.arg),)
        return (action.kind,)

    def state_vector(self, player: int) -> np.ndarray:
        return np.array([self.scores[player], self.turn], dtype=np.float32)

    def to_json(self) -> dict:
        return {
            "terrain": self.terrain,
            "scores": self.scores,
            "turn": self.turn,
            "max_turns": self.max_turns,
        }


class ToyPolicy:
    """builtin: the right action where there is one, else move; random: uniform."""

    def __init__(self, kind: str):
        self.kind = kind

    def joint_action(self, state: ToyState, player: int, rng: np.random.Generator):
        out = {}
        for agent in state.agents(player):
            actions = state.legal_actions(agent)
            if self.kind == "random":
                out[agent] = actions[int(rng.integers(len(actions)))]
            elif agent.startswith("civ:"):
                out[agent] = Action("wait")
            else:
                t = state.state_labels(agent)[0]
                good = [a for a in actions if (a.kind, t) in GOOD]
                out[agent] = good[0] if good else Action("move", "north")
        return out


class ToyGame(Game):
    name = "toy"
    num_players = 2

    def __init__(self, units: int = 2, max_turns: int = 10):
        self.units = units
        self.max_turns = max_turns

    def new_initial_state(self, seed: int) -> ToyState:
        rng = np.random.default_rng(seed)
        terrain = [[int(t) for t in rng.integers(len(TERRAINS), size=self.units)] for _ in range(2)]
        return ToyState(terrain, [0.0, 0.0], 0, self.max_turns)

    def state_from_json(self, data: dict) -> ToyState:
        return ToyState(data["terrain"], data["scores"], data["turn"], data["max_turns"])

    def state_feature_names(self) -> list[str]:
        return ["score", "turn"]

    def policy(self, spec: str) -> ToyPolicy:
        kind = spec.split(":")[0]
        if kind not in ("builtin", "random"):
            raise ValueError(spec)
        return ToyPolicy(kind)


VERBS = {"irrigate", "mine", "like", "sing", "build", "research", "move", "eat", "paint"}

TOY_SENTENCES = (
    "Settlers irrigate grassland quickly.",
    "Settlers mine hills quickly.",
    "Settlers sing songs loudly.",
    "Settlers paint houses blue.",
    "Settlers eat cheese often.",
    "Civilization research bronze working early.",
    "Warriors like cheese.",
)


def make_manual(texts=TOY_SENTENCES, name: str = "toy") -> StoredManual:
    """A StoredManual built in memory with a simple hand parse: the verb is the root, words
    before it are its subjects, words after it its objects, the full stop is punctuation."""
    sent_rows, tok_rows = [], []
    for sid, text in enumerate(texts):
        sent_rows.append({"sentence_id": sid, "section": "toy", "text": text})
        words = text.rstrip(".").split() + ["."]
        verb = next((i for i, w in enumerate(words) if w.lower() in VERBS), 0)
        for i, w in enumerate(words):
            punct = w == "."
            is_verb = i == verb
            tok_rows.append(
                {
                    "sentence_id": sid,
                    "token_index": i,
                    "text": w,
                    "lower": w.lower(),
                    "lemma": w.lower(),
                    "stem": stem(w),
                    "pos": "PUNCT" if punct else ("VERB" if is_verb else "NOUN"),
                    "tag": "",
                    "dep": "punct" if punct else ("ROOT" if is_verb else (
                        "nsubj" if i < verb else "dobj")),
                    "head": verb,
                    "is_punct": punct,
                    "is_stop": w.lower() in STOP_WORDS,
                }
            )
    from pathlib import Path

    return StoredManual(
        name=name,
        directory=Path("."),
        meta={"name": name},
        sentences=pd.DataFrame(sent_rows),
        tokens=pd.DataFrame(tok_rows),
    )


def same_random_weights(nets: list, seed: int = 0) -> None:
    """Give value networks the same random weights (u, v, w drawn once for all)."""
    rng = np.random.default_rng(seed)
    for table in ("u", "v", "w"):
        values = rng.normal(0, 0.5, size=getattr(nets[0], table).shape)
        for net in nets:
            getattr(net, table)[:] = values
            net.weights_changed()


TOY_SIGNATURES = [  # candidates of the toy manual's words, for the model's tests
    Signature(("settlers",), ("irrigate",), "irrigate", ("grassland",)),
    Signature(("settlers",), ("mine",), "mine", ("hills", "river")),
    Signature(("settlers",), ("move", "north"), "move", ()),
    Signature(("civilization",), ("research bronze working",), "research", ()),
    Signature(("warriors",), ("wait",), "wait", ("grassland",)),
]
