"""The civ game as a PettingZoo environment: `civ_v0.env()` (AEC) and `civ_v0.parallel_env()`.

Agents are the players ("player_0", "player_1"), each choosing one joint action for all its
units, cities and its civilization per turn. The engine's own agents come and go every turn
(units are built and die), while PettingZoo's `possible_agents` must stay fixed; and a civ turn
is simultaneous, so the parallel API is the natural one (the AEC one is its conversion).

A player's action is a `MultiDiscrete([max_actions] * max_agents)`: slot i is the player's i-th
agent this turn (`State.agents` order), value j its j-th legal move. The observation is a `Dict`
in one of three forms (`observation=`, `OBSERVATIONS`) of the same words and numbers:

- "structured" (PettingZoo's default, PettingZoo's action-mask convention), nested:
  - `observation.state`: the player's state vector (float32, the corpus's features);
  - `observation.agents`: per slot, a multi-hot of the agent's words (its kind, its situation),
    (max_agents, words) int8;
  - `observation.actions`: per slot and move, a multi-hot of the move's kind and words,
    (max_agents, max_actions, words) int8;
  - `action_mask`: a tuple of one (max_actions,) int8 row per slot, 1 where the slot has an agent
    and j is one of its legal moves (the form `MultiDiscrete.sample(mask=...)` takes;
    `np.stack` makes it a matrix).
- "flat" (`nlmcs/Civ-v0`'s default): one level of 1-D boxes, which Stable-Baselines3's
  `MultiInputPolicy` takes as it is: `state` (as above), `agents` (max_agents x
  `Observer.agent_words`, the agent and situation columns of the words) and `actions`
  (max_agents x max_actions x `Observer.action_words`, the kind and move columns), row-major.
- "spatial": "flat" plus `map`, a (height, width, channels) int8 0/1 picture of the board, one
  channel per `Observer.channels` name: the terrain (one-hot), river, special resource, the
  three tile improvements, and the player's and its enemies' cities and units. int8, not uint8,
  so Stable-Baselines3 flattens it rather than sending it to its image network, which needs
  36x36 pixels at least.

In every form `info["action_mask"]` holds the mask as the tuple of rows (PettingZoo's test
samples from it where the observation has none). `parallel_env().state()` is the global state:
every player's state vector, concatenated (`state_space`).

The words are the game's label vocabulary (`info["tokens"]` after reset names each column). An
unmasked choice (a slot with no agent, a move index past the agent's legal moves) lets that agent
wait, as the engine does for an agent without an action; agents or moves past the slots are not
offered and wait too (`info["dropped_agents"]`, `info["dropped_moves"]` count them). Rewards are
each turn's score change, plus 1 for a win and -1 for a loss when the game ends. A game that
reaches its turn limit is truncated (its winner by score is in `info["winner"]`); one decided
earlier (a player eliminated) is terminated.
"""

from __future__ import annotations

import functools

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils import parallel_to_aec

from nlmcs.games import make_game
from nlmcs.games.civ.tables import IMPROVEMENT_BITS
from nlmcs.net.features import PAD, Encoder, layout_for
from nlmcs.seeds import chance_rng

MAX_AGENTS = 48
MAX_ACTIONS = 24
OBSERVATIONS = ("flat", "spatial", "structured")
"""The observation forms (`observation=`); the module docstring describes each."""


class Observer:
    """Fixed-size observations and masks of a player's ragged decision, and back to moves."""

    def __init__(self, game, max_agents: int = MAX_AGENTS, max_actions: int = MAX_ACTIONS,
                 observation: str = "structured"):
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation {observation!r}: use one of {', '.join(OBSERVATIONS)}")
        self.form = observation
        self.layout = layout_for(game)
        self.encoder = Encoder(self.layout)
        self.k, self.a, self.v = max_agents, max_actions, len(self.layout.tokens)
        self.f = len(self.layout.state_features)
        tokens = self.layout.tokens
        # Agent rows only ever hold agent and situation words, move rows kind and move words
        # (`Encoder`): the flat forms keep those columns alone, about half of each row.
        self._agent_cols = np.array([i for i, t in enumerate(tokens)
                                     if t.startswith(("agent:", "state:"))])
        self._action_cols = np.array([i for i, t in enumerate(tokens)
                                      if t.startswith(("kind:", "action:"))])
        self.agent_words = tuple(tokens[i] for i in self._agent_cols)
        self.action_words = tuple(tokens[i] for i in self._action_cols)
        tables = game.tables
        self.channels = (*(f"terrain:{t}" for t in tables.terrain_names), "river", "resource",
                         *(name for name, _ in IMPROVEMENT_BITS), "own_city", "enemy_city",
                         "own_units", "enemy_units")
        self.height, self.width = game.config.height, game.config.width
        self._static: tuple = (None, None)  # (map, its terrain planes): maps never change

    @functools.cached_property
    def observation_space(self) -> spaces.Dict:
        k, a, v = self.k, self.a, self.v
        state = spaces.Box(-np.inf, np.inf, (self.f,), np.float32)
        if self.form == "structured":
            return spaces.Dict({
                "observation": spaces.Dict({
                    "state": state,
                    "agents": spaces.Box(0, 1, (k, v), np.int8),
                    "actions": spaces.Box(0, 1, (k, a, v), np.int8),
                }),
                # one mask per slot: what `MultiDiscrete.sample(mask=...)` takes
                "action_mask": spaces.Tuple([spaces.Box(0, 1, (a,), np.int8)] * k),
            })  # fmt: skip
        parts = {"state": state,
                 "agents": spaces.Box(0, 1, (k * len(self.agent_words),), np.int8),
                 "actions": spaces.Box(0, 1, (k * a * len(self.action_words),), np.int8)}
        if self.form == "spatial":
            parts["map"] = spaces.Box(0, 1, (self.height, self.width, len(self.channels)),
                                      np.int8)
        return spaces.Dict(parts)

    @functools.cached_property
    def action_space(self) -> spaces.MultiDiscrete:
        return spaces.MultiDiscrete(np.full(self.k, self.a, dtype=np.int64))

    def observe(self, state, player: int) -> tuple[dict, dict]:
        """(observation, info): info keeps the slots' agents and moves for `moves`."""
        position = self.encoder.encode(state, player)
        agents_x = np.zeros((self.k, self.v), np.int8)
        actions_x = np.zeros((self.k, self.a, self.v), np.int8)
        mask = np.zeros((self.k, self.a), np.int8)
        kept = min(len(position.agents), self.k)
        rows = np.arange(kept)
        agents_x[rows[:, None], position.agent_tok[:kept]] = 1
        start = 0
        dropped_moves = 0
        for i, legal in enumerate(position.actions):
            n = len(legal)
            if i < kept:
                m = min(n, self.a)
                actions_x[i, np.arange(m)[:, None], position.cand_tok[start:start + m]] = 1
                mask[i, :m] = 1
                dropped_moves += n - m
            start += n
        agents_x[:, PAD] = 0
        actions_x[:, :, PAD] = 0
        glob = position.glob.astype(np.float32)
        if self.form == "structured":
            obs = {"observation": {"state": glob, "agents": agents_x, "actions": actions_x},
                   "action_mask": tuple(mask)}
        else:
            obs = {"state": glob, "agents": agents_x[:, self._agent_cols].reshape(-1),
                   "actions": actions_x[:, :, self._action_cols].reshape(-1)}
            if self.form == "spatial":
                obs["map"] = self.tiles(state, player)
        info = {"turn": int(state.turn), "agents": position.agents[:kept],
                "moves": [list(m[:self.a]) for m in position.actions[:kept]],
                "dropped_agents": len(position.agents) - kept, "dropped_moves": dropped_moves,
                "action_mask": tuple(mask)}
        return obs, info

    def tiles(self, state, player: int) -> np.ndarray:
        """The board seen by `player` as (height, width, channels) 0/1 planes (`channels`)."""
        m = state.map
        if self._static[0] is not m:
            n_terrain = len(state.tables.terrain_names)
            static = np.zeros((m.n, n_terrain + 2), np.int8)
            static[np.arange(m.n), np.asarray(m.terrain, np.int64)] = 1
            static[:, n_terrain] = np.asarray(m.river, bool)
            static[:, n_terrain + 1] = np.asarray(m.resource) >= 0
            self._static = (m, static)
        static = self._static[1]
        planes = np.zeros((m.n, len(self.channels)), np.int8)
        planes[:, :static.shape[1]] = static
        c = static.shape[1]
        improvements = np.frombuffer(bytes(state.improvements), np.uint8)
        for i, (_, bit) in enumerate(IMPROVEMENT_BITS):
            planes[:, c + i] = (improvements & bit) != 0
        c += len(IMPROVEMENT_BITS)
        for city in state.cities.values():
            planes[city.tile, c if city.owner == player else c + 1] = 1
        occupant = np.frombuffer(bytes(state.occupant), np.uint8)  # owner + 1, 0 for none
        planes[:, c + 2] = occupant == player + 1
        planes[:, c + 3] = (occupant != 0) & (occupant != player + 1)
        return planes.reshape(m.height, m.width, -1)

    def moves(self, action, info: dict, who: str = "player_0") -> dict:
        """The joint action of a `MultiDiscrete` choice; a choice the mask rules out is left out
        (that agent waits), as an unmasked policy's samples must be. An action outside the
        action space (shape, type or range) is a `ValueError` naming `who` and the action."""
        try:
            chosen = np.asarray(action)
            ok = (chosen.shape == (self.k,) and np.issubdtype(chosen.dtype, np.integer)
                  and bool(np.all((chosen >= 0) & (chosen < self.a))))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            text = repr(action.tolist() if isinstance(action, np.ndarray) else action)
            text = text if len(text) <= 80 else text[:77] + "..."  # never a huge value whole
            raise ValueError(f"{who}: action {text} is not in the action space ({self.k} "
                             f"integers, each 0 to {self.a - 1}: a move index per agent slot)")
        chosen = chosen.astype(np.int64)
        joint = {}
        for i, (agent, legal) in enumerate(zip(info["agents"], info["moves"], strict=True)):
            if i < len(chosen) and 0 <= chosen[i] < len(legal):
                joint[agent] = legal[int(chosen[i])]
        return joint


def render_frame(state, mode: str | None):
    """A frame of `state` in render mode `mode` (None: no frame, or no game yet)."""
    if mode is None or state is None:
        return None
    if mode == "ansi":
        return state.render_ascii()
    from nlmcs.games.civ.render_png import render_rgb

    return render_rgb(state)


def outcome(state, player: int, max_turns: int | None) -> tuple[float, bool, bool]:
    """(end-of-game reward, terminated, truncated) of a player after a turn."""
    if not state.is_terminal():
        return 0.0, False, False
    winner = state.winner()
    bonus = 0.0 if winner is None else (1.0 if winner == player else -1.0)
    at_limit = max_turns is not None and state.turn >= max_turns
    return bonus, not at_limit, at_limit


class CivParallelEnv(ParallelEnv):
    metadata = {"name": "civ_v0", "render_modes": ["rgb_array", "ansi"],
                "is_parallelizable": True}

    def __init__(self, map: str = "small", max_turns: int = 20, max_agents: int = MAX_AGENTS,
                 max_actions: int = MAX_ACTIONS, render_mode: str | None = None,
                 observation: str = "structured"):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}: use one of "
                             f"{self.metadata['render_modes']}")
        self.game = make_game("civ", preset=map, max_turns=max_turns)
        self.max_turns = max_turns
        self.observer = Observer(self.game, max_agents, max_actions, observation)
        self.possible_agents = [f"player_{p}" for p in range(self.game.num_players)]
        self.state_space = spaces.Box(-np.inf, np.inf,
                                      (self.game.num_players * self.observer.f,), np.float32)
        self.render_mode = render_mode
        self.agents: list[str] = []
        self.game_state = None  # not `state`: that is PettingZoo's global-state method
        self._infos: dict = {}

    def observation_space(self, agent):
        return self.observer.observation_space

    def action_space(self, agent):
        return self.observer.action_space

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is None:
            seed = int(np.random.default_rng().integers(2**31))
        self.game_state = self.game.new_initial_state(int(seed))
        self.rng = chance_rng(seed)
        self.agents = list(self.possible_agents)
        self.scores = [float(self.game_state.score(p)) for p in range(self.game.num_players)]
        obs = self._observe()
        return obs, {a: self._infos[a] for a in self.agents}

    def _observe(self) -> dict:
        out = {}
        for p, agent in enumerate(self.possible_agents):
            out[agent], info = self.observer.observe(self.game_state, p)
            self._infos[agent] = {**info, "tokens": self.observer.layout.tokens}
        return out

    def step(self, actions: dict):
        if self.game_state is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if not self.agents:
            raise RuntimeError("step() after the game ended: call reset() to start another")
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            raise ValueError(f"{unknown[0]!r}: not a live agent of this game (live: "
                             f"{', '.join(self.agents)})")
        joint = {p: self.observer.moves(actions[agent], self._infos[agent], agent)
                 for p, agent in enumerate(self.possible_agents) if agent in actions}
        self.game_state.apply_joint_actions(joint, self.rng)
        obs = self._observe()
        rewards, terminations, truncations = {}, {}, {}
        for p, agent in enumerate(self.possible_agents):
            score = float(self.game_state.score(p))
            bonus, ended, cut = outcome(self.game_state, p, self.max_turns)
            rewards[agent] = score - self.scores[p] + bonus
            self.scores[p] = score
            terminations[agent], truncations[agent] = ended, cut
        infos = {a: self._infos[a] for a in self.agents}
        if self.game_state.is_terminal():
            for info in infos.values():
                info["winner"] = self.game_state.winner()
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """The global state (for centralised critics): every player's state vector in turn."""
        if self.game_state is None:
            raise RuntimeError("state() before reset(): call reset() first")
        return np.concatenate([self.game_state.state_vector(p)
                               for p in range(self.game.num_players)]).astype(np.float32)

    def render(self):
        return render_frame(self.game_state, self.render_mode)

    def close(self) -> None:
        pass


def parallel_env(**kwargs) -> CivParallelEnv:
    """The parallel API (`map`, `max_turns`, `max_agents`, `max_actions`, `render_mode`,
    `observation`)."""
    return CivParallelEnv(**kwargs)


def env(**kwargs):
    """The AEC API: the parallel environment, players acting in turn within each turn."""
    return parallel_to_aec(CivParallelEnv(**kwargs))


raw_env = env
