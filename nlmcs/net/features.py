"""What the policy/value network sees of a position: the player's state vector and, per agent,
its words and the words of each legal action.

A *position* is one player's decision at the start of a turn: every agent of the player with
its legal actions. It is laid out ragged, not padded: a candidate row exists for each legal
action and for nothing else, so the network can only ever put probability on legal moves (the
mask is the layout itself). Words come from the game (`State.agent_labels`, `state_labels`,
`action_labels` and the action's kind) and are looked up in a vocabulary the game lists
(`Game.label_vocabulary`); the vocabulary, the state features and their order make up the
`Layout` a checkpoint records, so a network never reads a game laid out another way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, AgentId, Game, State

PAD = 0
"""Token 0 is padding: its embedding is zero and it never names a word."""


@dataclass(frozen=True)
class Layout:
    """Token vocabulary and state features of one game, in the order the network was built for."""

    game: str
    ruleset: str | None
    ruleset_sha256: str | None
    state_features: tuple[str, ...]
    tokens: tuple[str, ...]
    """Token names, index 0 the padding: "agent:settlers", "state:river", "kind:move",
    "action:north", and one "NAMESPACE:?" per namespace for a word the game did not list."""
    agent_width: int = 16
    """Most tokens kept per agent (agent words, then situation words)."""
    action_width: int = 8
    """Most tokens kept per candidate action (its kind, then its words)."""
    goal_words: bool = False
    """Whether a candidate's words end with its goal words (`State.goal_labels`), which the
    action vocabulary then lists too."""

    def to_dict(self) -> dict:
        out = {**asdict(self), "state_features": list(self.state_features),
               "tokens": list(self.tokens)}
        if not self.goal_words:
            del out["goal_words"]  # a layout without goals is written as before they existed
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Layout:
        return cls(**{**data, "state_features": tuple(data["state_features"]),
                      "tokens": tuple(data["tokens"])})

    def mismatch(self, other: Layout) -> str | None:
        """What differs between two layouts (the first field), or None when they match."""
        for key in ("game", "ruleset", "ruleset_sha256", "goal_words", "state_features",
                    "tokens", "agent_width", "action_width"):
            if getattr(self, key) != getattr(other, key):
                return key
        return None


def game_identity(game: Game) -> tuple[str, str | None, str | None]:
    ruleset = getattr(game, "ruleset", None)
    sha = getattr(ruleset, "sha256", None)
    return game.name, getattr(ruleset, "name", None), sha[:16] if sha else None


def layout_for(game: Game, goal_words: bool = False) -> Layout:
    """The layout of `game`, with its goal words (`Game.goal_words`) when `goal_words`; a game
    that does not list its words cannot be read by the net."""
    vocabulary = game.label_vocabulary()
    if not vocabulary:
        raise UserInputError(f"game {game.name!r} does not list its label vocabulary, which "
                             "the policy/value network needs")
    if goal_words:
        goals = game.goal_words()
        if not goals:
            raise UserInputError(f"game {game.name!r} gives no goal words (--goal-words)")
        vocabulary = {**vocabulary, "action": frozenset((*vocabulary.get("action", ()), *goals))}
    from nlmcs.games.registry import action_kinds

    kinds = action_kinds(game.name) or ()
    tokens = ["<pad>"]
    for space, words in (("agent", vocabulary.get("agent", ())),
                         ("state", vocabulary.get("state", ())),
                         ("kind", kinds), ("action", vocabulary.get("action", ()))):
        tokens += [f"{space}:?", *(f"{space}:{w}" for w in sorted(words))]
    name, ruleset, sha = game_identity(game)
    return Layout(game=name, ruleset=ruleset, ruleset_sha256=sha,
                  state_features=tuple(game.state_feature_names()), tokens=tuple(tokens),
                  goal_words=goal_words)


@dataclass
class Position:
    """One player's decision, ragged. Candidates are listed agent by agent in legal order."""

    glob: np.ndarray  # (F,) float32, the player's state vector
    agent_tok: np.ndarray  # (A, Ka) int32
    cand_agent: np.ndarray  # (C,) int32: which agent row each candidate belongs to
    cand_tok: np.ndarray  # (C, Kc) int32
    agents: list[AgentId]
    actions: list[Sequence[Action]]


class Encoder:
    """Turns positions into token arrays; the word -> token lookups are built once."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.index = {name: i for i, name in enumerate(layout.tokens)}
        self._cache: dict[tuple, np.ndarray] = {}

    def _ids(self, space: str, words: Sequence[str]) -> list[int]:
        unknown = self.index.get(f"{space}:?", PAD)
        return [self.index.get(f"{space}:{w}", unknown) for w in words]

    def _row(self, ids: list[int], width: int) -> np.ndarray:
        row = np.zeros(width, np.int32)
        ids = ids[:width]
        row[:len(ids)] = ids
        return row

    def agent_row(self, agent_words: Sequence[str], state_words: Sequence[str]) -> np.ndarray:
        key = ("a", tuple(agent_words), tuple(state_words))
        row = self._cache.get(key)
        if row is None:
            ids = self._ids("agent", agent_words) + self._ids("state", sorted(set(state_words)))
            row = self._cache[key] = self._row(ids, self.layout.agent_width)
        return row

    def action_row(self, kind: str, words: Sequence[str]) -> np.ndarray:
        key = ("c", kind, tuple(words))
        row = self._cache.get(key)
        if row is None:
            ids = self._ids("kind", [kind]) + self._ids("action", words)
            row = self._cache[key] = self._row(ids, self.layout.action_width)
        return row

    def encode(self, state: State, player: int,
               agent_actions: list[tuple[AgentId, Sequence[Action]]] | None = None) -> Position:
        """The position of `player` in `state` (every agent that acts, with its legal moves)."""
        if agent_actions is None:
            agent_actions = state.agent_actions(player)
        glob = np.asarray(state.state_vector(player), np.float32)
        if glob.shape != (len(self.layout.state_features),):
            raise UserInputError(f"the state has {glob.size} features; the network's layout "
                                 f"has {len(self.layout.state_features)}")
        agent_rows, cand_rows, cand_agent = [], [], []
        for i, (agent, actions) in enumerate(agent_actions):
            agent_rows.append(self.agent_row(state.agent_labels(agent),
                                             state.state_labels(agent)))
            words_of = state.actions_labels(agent, actions)
            if self.layout.goal_words:
                words_of = [(*words, *goals) for words, goals
                            in zip(words_of, state.goal_labels(agent, actions), strict=True)]
            for action, words in zip(actions, words_of, strict=True):
                cand_rows.append(self.action_row(state.action_type(action), words))
                cand_agent.append(i)
        width_a, width_c = self.layout.agent_width, self.layout.action_width
        return Position(
            glob=glob,
            agent_tok=np.stack(agent_rows) if agent_rows else np.zeros((0, width_a), np.int32),
            cand_agent=np.asarray(cand_agent, np.int32),
            cand_tok=np.stack(cand_rows) if cand_rows else np.zeros((0, width_c), np.int32),
            agents=[a for a, _ in agent_actions],
            actions=[list(acts) for _, acts in agent_actions])


@dataclass
class Batch:
    """Positions stacked: row indices tie candidates to agents and agents to positions."""

    glob: np.ndarray  # (S, F)
    agent_pos: np.ndarray  # (A,) position of each agent row
    agent_tok: np.ndarray  # (A, Ka)
    cand_agent: np.ndarray  # (C,) agent row of each candidate (global over the batch)
    cand_tok: np.ndarray  # (C, Kc)


def stack(positions: Sequence[Position]) -> Batch:
    """One batch of several positions (e.g. both players of a state, or a training batch)."""
    agent_pos, cand_agent = [], []
    offset = 0
    for s, p in enumerate(positions):
        agent_pos.append(np.full(len(p.agent_tok), s, np.int32))
        cand_agent.append(p.cand_agent + offset)
        offset += len(p.agent_tok)
    return Batch(glob=np.stack([p.glob for p in positions]),
                 agent_pos=np.concatenate(agent_pos),
                 agent_tok=np.concatenate([p.agent_tok for p in positions]),
                 cand_agent=np.concatenate(cand_agent),
                 cand_tok=np.concatenate([p.cand_tok for p in positions]))
