"""The civ game as a single-agent Gymnasium environment: player 0 against a scripted player.

`gymnasium.make("nlmcs/Civ-v0", map="small", opponent="builtin")` after `import nlmcs.envs`.
Observations, actions, rewards and the end of a game are those of `civ_v0` for player 0; the
opponent is the game's scripted player (`builtin[:easy|normal|hard]`, `random`, `greedy`) and
moves in the same turn. `action_masks()` gives the flat mask `sb3_contrib`'s `MaskablePPO` asks
for.
"""

from __future__ import annotations

import gymnasium
import numpy as np

from nlmcs.envs.civ_v0 import MAX_ACTIONS, MAX_AGENTS, Observer, outcome, render_frame
from nlmcs.games import make_game


class CivEnv(gymnasium.Env):
    metadata = {"render_modes": ["rgb_array", "ansi"]}

    def __init__(self, map: str = "small", max_turns: int = 20, opponent: str = "builtin",
                 max_agents: int = MAX_AGENTS, max_actions: int = MAX_ACTIONS,
                 render_mode: str | None = None):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}: use one of "
                             f"{self.metadata['render_modes']}")
        self.game = make_game("civ", preset=map, max_turns=max_turns)
        self.max_turns = max_turns
        self.opponent = self.game.policy(opponent)
        self.observer = Observer(self.game, max_agents, max_actions)
        self.observation_space = self.observer.observation_space
        self.action_space = self.observer.action_space
        self.render_mode = render_mode
        self.state = None
        self._info: dict = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**31)) if seed is None else int(seed)
        self.state = self.game.new_initial_state(game_seed)
        self.rng = np.random.default_rng(np.random.SeedSequence([game_seed, 1]))
        self.score = float(self.state.score(0))
        obs, self._info = self.observer.observe(self.state, 0)
        return obs, {**self._info, "tokens": self.observer.layout.tokens}

    def step(self, action):
        joint = {0: self.observer.moves(action, self._info),
                 **{p: self.opponent.joint_action(self.state, p, self.rng)
                    for p in range(1, self.game.num_players)}}
        self.state.apply_joint_actions(joint, self.rng)
        obs, self._info = self.observer.observe(self.state, 0)
        score = float(self.state.score(0))
        bonus, terminated, truncated = outcome(self.state, 0, self.max_turns)
        reward = score - self.score + bonus
        self.score = score
        info = dict(self._info)
        if terminated or truncated:
            info["winner"] = self.state.winner()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The action mask flattened, as `MaskablePPO` takes it for a MultiDiscrete space."""
        return np.concatenate(self.observer.observe(self.state, 0)[0]["action_mask"]).astype(bool)

    def render(self):
        return render_frame(self.state, self.render_mode)
