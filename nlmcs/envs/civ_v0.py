"""The civ game as a PettingZoo environment: `civ_v0.env()` (AEC) and `civ_v0.parallel_env()`.

Agents are the players ("player_0", "player_1"), each choosing one joint action for all its
units, cities and its civilization per turn. The engine's own agents come and go every turn
(units are built and die), while PettingZoo's `possible_agents` must stay fixed; and a civ turn
is simultaneous, so the parallel API is the natural one (the AEC one is its conversion).

A player's action is a `MultiDiscrete([max_actions] * max_agents)`: slot i is the player's i-th
agent this turn (`State.agents` order), value j its j-th legal move. Observations are a dict:

- `observation.state`: the player's state vector (float32, the corpus's features);
- `observation.agents`: per slot, a multi-hot of the agent's words (its kind, its situation);
- `observation.actions`: per slot and move, a multi-hot of the move's kind and words;
- `action_mask`: a tuple of one (max_actions,) int8 row per slot, 1 where the slot has an agent
  and j is one of its legal moves (the form `MultiDiscrete.sample(mask=...)` takes;
  `np.stack` makes it a matrix).

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
from nlmcs.net.features import PAD, Encoder, layout_for

MAX_AGENTS = 48
MAX_ACTIONS = 24


class Observer:
    """Fixed-size observations and masks of a player's ragged decision, and back to moves."""

    def __init__(self, game, max_agents: int = MAX_AGENTS, max_actions: int = MAX_ACTIONS):
        self.layout = layout_for(game)
        self.encoder = Encoder(self.layout)
        self.k, self.a, self.v = max_agents, max_actions, len(self.layout.tokens)
        self.f = len(self.layout.state_features)

    @functools.cached_property
    def observation_space(self) -> spaces.Dict:
        k, a, v = self.k, self.a, self.v
        return spaces.Dict({
            "observation": spaces.Dict({
                "state": spaces.Box(-np.inf, np.inf, (self.f,), np.float32),
                "agents": spaces.Box(0, 1, (k, v), np.int8),
                "actions": spaces.Box(0, 1, (k, a, v), np.int8),
            }),
            # one mask per slot: what `MultiDiscrete.sample(mask=...)` takes
            "action_mask": spaces.Tuple([spaces.Box(0, 1, (a,), np.int8)] * k),
        })  # fmt: skip

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
        obs = {"observation": {"state": position.glob.astype(np.float32), "agents": agents_x,
                               "actions": actions_x}, "action_mask": tuple(mask)}
        info = {"turn": int(state.turn), "agents": position.agents[:kept],
                "moves": [list(m[:self.a]) for m in position.actions[:kept]],
                "dropped_agents": len(position.agents) - kept, "dropped_moves": dropped_moves}
        return obs, info

    def moves(self, action, info: dict) -> dict:
        """The joint action of a `MultiDiscrete` choice; unmasked choices are left out (wait)."""
        chosen = np.asarray(action, dtype=np.int64).reshape(-1)
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
                 max_actions: int = MAX_ACTIONS, render_mode: str | None = None):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}: use one of "
                             f"{self.metadata['render_modes']}")
        self.game = make_game("civ", preset=map, max_turns=max_turns)
        self.max_turns = max_turns
        self.observer = Observer(self.game, max_agents, max_actions)
        self.possible_agents = [f"player_{p}" for p in range(self.game.num_players)]
        self.render_mode = render_mode
        self.agents: list[str] = []
        self.state = None
        self._infos: dict = {}

    def observation_space(self, agent):
        return self.observer.observation_space

    def action_space(self, agent):
        return self.observer.action_space

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is None:
            seed = int(np.random.default_rng().integers(2**31))
        self.state = self.game.new_initial_state(int(seed))
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
        self.agents = list(self.possible_agents)
        self.scores = [float(self.state.score(p)) for p in range(self.game.num_players)]
        obs = self._observe()
        return obs, {a: self._infos[a] for a in self.agents}

    def _observe(self) -> dict:
        out = {}
        for p, agent in enumerate(self.possible_agents):
            out[agent], info = self.observer.observe(self.state, p)
            self._infos[agent] = {**info, "tokens": self.observer.layout.tokens}
        return out

    def step(self, actions: dict):
        joint = {p: self.observer.moves(actions[agent], self._infos[agent])
                 for p, agent in enumerate(self.possible_agents) if agent in actions}
        self.state.apply_joint_actions(joint, self.rng)
        obs = self._observe()
        rewards, terminations, truncations = {}, {}, {}
        for p, agent in enumerate(self.possible_agents):
            score = float(self.state.score(p))
            bonus, ended, cut = outcome(self.state, p, self.max_turns)
            rewards[agent] = score - self.scores[p] + bonus
            self.scores[p] = score
            terminations[agent], truncations[agent] = ended, cut
        infos = {a: self._infos[a] for a in self.agents}
        if self.state.is_terminal():
            for info in infos.values():
                info["winner"] = self.state.winner()
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self):
        return render_frame(self.state, self.render_mode)

    def close(self) -> None:
        pass


def parallel_env(**kwargs) -> CivParallelEnv:
    """The parallel API (`map`, `max_turns`, `max_agents`, `max_actions`, `render_mode`)."""
    return CivParallelEnv(**kwargs)


def env(**kwargs):
    """The AEC API: the parallel environment, players acting in turn within each turn."""
    return parallel_to_aec(CivParallelEnv(**kwargs))


raw_env = env
