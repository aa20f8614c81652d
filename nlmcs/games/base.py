"""The game interface the search, the corpus miner and the experiments use.

Modelled on OpenSpiel's Game/State split: a `Game` holds the fixed description (rules, map size,
players, turn limit) and makes states; a `State` holds what changes. Planners clone states and go
through these methods only, so a new game (Catan, microRTS, an OpenSpiel game) plugs in by
implementing them.

A turn is simultaneous in the FreeCiv sense: every agent of every player (each unit, each city and
the civilization itself) picks one action, and `apply_joint_actions` plays them all and advances the
turn. An action that an earlier action of the same turn made illegal (its unit died, its target
tile filled) is dropped, never an error.
"""

from __future__ import annotations

import abc
from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple, Protocol

import numpy as np

AgentId = str
"""Stable name of an agent while it lives: e.g. "civ:0", "city:3", "unit:17"."""


class Action(NamedTuple):
    """One agent's choice for one turn. `kind` is the action type used by typed roll-outs."""

    kind: str
    arg: int | str | None = None


JointAction = Mapping[AgentId, Action]


class Picks(NamedTuple):
    """A joint move given as each agent's index into `agent_actions(player)` (every agent, in
    that order): what a compiled choice gives; only a board state plays it (`BoardState`)."""

    index: np.ndarray


class State(abc.ABC):
    """What changes during a game. All methods are cheap enough to call inside roll-outs."""

    turn: int

    @abc.abstractmethod
    def clone(self) -> State:
        """An independent copy: changes to either never show in the other."""

    @property
    @abc.abstractmethod
    def num_players(self) -> int: ...

    @abc.abstractmethod
    def agents(self, player: int) -> list[AgentId]:
        """The player's agents that act this turn, in a fixed order."""

    @abc.abstractmethod
    def legal_actions(self, agent: AgentId) -> list[Action]:
        """Never empty for a live agent: there is always a 'wait'-like action."""

    def agent_actions(self, player: int) -> list[tuple[AgentId, Sequence[Action]]]:
        """`(agent, legal_actions(agent))` for each of `agents(player)`, in that order; a game
        may list them in one pass (roll-outs ask this of every simulated step)."""
        return [(agent, self.legal_actions(agent)) for agent in self.agents(player)]

    @abc.abstractmethod
    def apply_action(self, agent: AgentId, action: Action, rng: np.random.Generator) -> bool:
        """Play one agent's action inside the current turn; False (and no change) if it is no
        longer legal. The state after it is the *afterstate* used by corpus mining."""

    @abc.abstractmethod
    def end_turn(self, rng: np.random.Generator) -> None:
        """Close the turn: cities grow and build, research advances, the turn counter moves on."""

    def player_order(self) -> list[int]:
        """Who moves when in this turn: the order rotates with the turn so that neither side
        always strikes first. Every loop that plays a turn (here, the game runner, the browser
        server) follows it."""
        n = self.num_players
        return [(self.turn + k) % n for k in range(n)]

    def apply_joint_actions(
        self, actions: Mapping[int, JointAction], rng: np.random.Generator
    ) -> None:
        """Play one turn: `actions[player][agent]` for every player in `player_order`, then
        `end_turn`. Agents missing from the mapping wait. Chance (combat rounds, ...) draws
        from `rng` only.
        """
        for player in self.player_order():
            for agent, action in actions.get(player, {}).items():
                self.apply_action(agent, action, rng)
        self.end_turn(rng)

    @abc.abstractmethod
    def is_terminal(self) -> bool: ...

    @abc.abstractmethod
    def winner(self) -> int | None:
        """The winning player, or None while the game goes on or when it ended undecided."""

    @abc.abstractmethod
    def score(self, player: int) -> float:
        """A game score (FreeCiv style) that exists at every turn."""

    @abc.abstractmethod
    def stats(self, player: int) -> dict[str, float]:
        """Named totals for reward shaping (score, units, cities, techs, food, shields, ...)."""

    # --- words: the bridge between game and manual -------------------------------------------
    @abc.abstractmethod
    def agent_labels(self, agent: AgentId) -> tuple[str, ...]:
        """Words naming the agent, e.g. ("settlers",), ("city",), ("civilization",)."""

    @abc.abstractmethod
    def state_labels(self, agent: AgentId) -> tuple[str, ...]:
        """Words for the agent's situation, e.g. ("grassland", "river", "coal", "enemy")."""

    @abc.abstractmethod
    def action_labels(self, agent: AgentId, action: Action) -> tuple[str, ...]:
        """Words for a candidate action, e.g. ("build", "city") or ("irrigate",)."""

    def actions_labels(self, agent: AgentId, actions: Sequence[Action]
                       ) -> list[tuple[str, ...]]:
        """`action_labels` of every candidate of one agent (a game may resolve the agent
        once for all of them)."""
        return [tuple(self.action_labels(agent, a)) for a in actions]

    def goal_labels(self, agent: AgentId, actions: Sequence[Action]) -> list[tuple[str, ...]]:
        """Per candidate of one agent, the words of the goal it steps towards (`Game.goal_words`
        lists them), () for none; a game without goals gives () for every candidate."""
        return [()] * len(actions)

    def action_type(self, action: Action) -> str:
        return action.kind

    def candidate_labels(self, agent: AgentId, actions: Sequence[Action]
                         ) -> list[tuple[tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]]:
        """(agent words, action words, action type, state words) of each candidate of one
        agent, the agent's own words read once (what a text model reads of a candidate)."""
        who = tuple(self.agent_labels(agent))
        where = tuple(self.state_labels(agent))
        atype = self.action_type
        return [(who, words, atype(a), where)
                for words, a in zip(self.actions_labels(agent, actions), actions, strict=True)]

    def candidates_key(self, agent: AgentId, actions: Sequence[Action]) -> Hashable | None:
        """A key that fixes `candidate_labels(agent, actions)` among states of this game and
        map (equal keys, equal words), which a model may score once per set of weights; None
        where the state has no such key cheaper than the words themselves."""
        return None

    # --- numbers: for corpus similarity -------------------------------------------------------
    @abc.abstractmethod
    def state_vector(self, player: int) -> np.ndarray:
        """Float32 features from `player`'s side; names in `Game.state_feature_names`."""

    # --- serialisation ------------------------------------------------------------------------
    @abc.abstractmethod
    def to_json(self) -> dict:
        """A JSON-ready dict; `Game.state_from_json(state.to_json())` rebuilds an equal state."""


SCRIPTED_PLAYERS = ("builtin", "howto", "random", "greedy")
"""The heads of the player names `Game.policy` seats (a level after a colon): scripted players,
so a recorded game of them plays again move for move."""

UNIFORM_ROLLOUT = "uniform-rollout"
"""Stands for a search's uniform roll-out policy among the players given to
`Game.compiled_players`: one `rng.integers(len(actions))` draw per agent, agents in order."""


class Game(abc.ABC):
    """Fixed description of a game; makes states."""

    name: str
    num_players: int

    @abc.abstractmethod
    def new_initial_state(self, seed: int) -> State:
        """The start position; the map and everything random in it follow from `seed`."""

    @abc.abstractmethod
    def state_from_json(self, data: dict) -> State:
        """Rebuild a state; raise `UserInputError` naming the problem for an impossible one."""

    @abc.abstractmethod
    def state_feature_names(self) -> list[str]: ...

    @abc.abstractmethod
    def policy(self, spec: str) -> Policy:
        """A scripted player by name: "builtin[:level]", "howto", "random", "greedy"
        (`SCRIPTED_PLAYERS`)."""

    def label_vocabulary(self) -> dict[str, frozenset[str]] | None:
        """Every label the game's states can give, by kind ("agent", "state", "action"), or
        None when the game does not list them (the text reader then knows no vocabulary)."""
        return None

    def goal_words(self) -> tuple[str, ...]:
        """Every word `State.goal_labels` can give, in its order; () for a game without goals
        (a network that reads goals cannot play it)."""
        return ()

    def rules_of(self, ruleset: str | None, sha256: str | None) -> bool:
        """Whether this game plays the named ruleset (the file of content hash prefix `sha256`)
        under another government only: a network made for that one reads this one's states
        alike (real FreeCiv's game after a revolution)."""
        return False

    def compiled_players(self, state: State, policies: Sequence[Policy | str],
                         first: int = -1) -> CompiledPlayers | None:
        """An engine that plays these players from `state` in compiled code, the same games as
        the reference loop (`runner.play_game`), or None where the game has none for them; a
        player may be `UNIFORM_ROLLOUT`. `first`: the player who chooses first in a turn (the
        others in seat order after it), as in a search's roll-out; -1: seat order."""
        return None

    def compiled_states(self, state: State, policies: Sequence[Policy | None],
                        player: int) -> CompiledStates | None:
        """A maker of states held in compiled form, for roll-outs in which `player` gives its
        joint moves and every other player p is `policies[p]` (`player`'s entry is not read),
        or None where the game has none."""
        return None


class CompiledPlayers(Protocol):
    """What `Game.compiled_players` returns: whole turns of fixed players, in compiled code."""

    def play_in_place(self, state: State, turns: int | None, rng: np.random.Generator) -> int:
        """Play up to `turns` turns (None: to the end) on `state` itself, drawing from `rng` as
        the reference loop would; the turns played."""
        ...


class BoardState(Protocol):
    """A state held in compiled form: it answers what a search asks of a `State` (terminal,
    legal actions, labels, the reward's scores) and plays a whole turn."""

    def is_terminal(self) -> bool: ...

    def agent_keys(self, player: int) -> list[Hashable]:
        """`candidates_key` of each of `player`'s agents with its legal actions, in
        `agent_actions` order, without making the actions."""
        ...

    def play_turn(self, player: int, joint: JointAction | Picks,
                  rng: np.random.Generator) -> None:
        """`player`'s joint moves, then every other player's policy, then the turn's end (as
        `step`)."""
        ...


class CompiledStates(Protocol):
    """What `Game.compiled_states` returns: board states for one searching player's roll-outs."""

    def fits(self, state: State) -> bool:
        """A state of the same game and map (this maker may copy it)."""
        ...

    def state(self, state: State) -> BoardState:
        """A board copy of `state`."""
        ...

    def packed(self, state: State) -> object:
        """`state` packed once, for many copies (`copied`)."""
        ...

    def copied(self, packed: object) -> BoardState:
        """A board state from a packed one (about 30x cheaper than `state`)."""
        ...


class Policy(Protocol):
    """Anything that picks a joint action for one player (built-in AI, random, a planner)."""

    def joint_action(
        self, state: State, player: int, rng: np.random.Generator
    ) -> dict[AgentId, Action]: ...


def step(
    state: State,
    player: int,
    actions: JointAction,
    opponents: Mapping[int, Policy],
    rng: np.random.Generator,
) -> None:
    """Apply `player`'s joint action with every other player's policy moving in the same turn."""
    joint = {p: pol.joint_action(state, p, rng) for p, pol in opponents.items()}
    joint[player] = actions
    state.apply_joint_actions(joint, rng)
