"""The civ game as a single-agent Gymnasium environment: player 0 against a scripted player.

`gymnasium.make("nlmcs/Civ-v0", map="small", opponent="builtin")` after `import nlmcs.envs`.
Actions, rewards and the end of a game are those of `civ_v0` for player 0; the opponent is the
game's scripted player (`builtin[:easy|normal|hard]`, `random`, `greedy`) and moves in the same
turn. The observation is `civ_v0`'s "flat" form by default (a one-level `Dict` of 1-D boxes,
which Stable-Baselines3's `MultiInputPolicy` takes), or `observation="spatial"` (plus a map) or
`"structured"` (the nested PettingZoo form). `action_masks()` gives the flat mask
`sb3_contrib`'s `MaskablePPO` asks for. Gymnasium's wrappers forward no methods, so
`gymnasium.make` puts `ActionMasks` outermost to pass it on; under wrappers of one's own it is
`env.get_wrapper_attr("action_masks")()` (what `sb3_contrib`'s `get_action_masks` calls), and
`info["action_mask"]` holds the same mask as one row per slot.
"""

from __future__ import annotations

import gymnasium
import numpy as np

from nlmcs.envs.civ_v0 import MAX_ACTIONS, MAX_AGENTS, Observer, outcome, render_frame
from nlmcs.games import make_game
from nlmcs.methods import opponent_policy
from nlmcs.seeds import chance_rng


class CivEnv(gymnasium.Env):
    metadata = {"render_modes": ["rgb_array", "ansi"]}

    def __init__(self, map: str = "small", max_turns: int = 20, opponent: str = "builtin",
                 max_agents: int = MAX_AGENTS, max_actions: int = MAX_ACTIONS,
                 render_mode: str | None = None, observation: str = "flat"):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}: use one of "
                             f"{self.metadata['render_modes']}")
        self.game = make_game("civ", preset=map, max_turns=max_turns)
        self.max_turns = max_turns
        self.opponent = opponent_policy(self.game, opponent)  # a network too (net[:FILE])
        self.observer = Observer(self.game, max_agents, max_actions, observation)
        self.observation_space = self.observer.observation_space
        self.action_space = self.observer.action_space
        self.render_mode = render_mode
        self.game_state = None
        self._ended = False  # stepping on after the end would pay the end reward again
        self._info: dict = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**31)) if seed is None else int(seed)
        self.game_state = self.game.new_initial_state(game_seed)
        self.rng = chance_rng(game_seed)
        self.score = float(self.game_state.score(0))
        self._ended = False
        obs, self._info = self.observer.observe(self.game_state, 0)
        return obs, {**self._info, "tokens": self.observer.layout.tokens}

    def step(self, action):
        state = self.game_state
        if state is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if self._ended:
            raise RuntimeError("step() after the episode ended: call reset() to start another")
        joint = {0: self.observer.moves(action, self._info),
                 **{p: self.opponent.joint_action(state, p, self.rng)
                    for p in range(1, self.game.num_players)}}
        state.apply_joint_actions(joint, self.rng)
        obs, self._info = self.observer.observe(state, 0)
        score = float(state.score(0))
        bonus, terminated, truncated = outcome(state, 0, self.max_turns)
        reward = score - self.score + bonus
        self.score = score
        info = dict(self._info)
        if terminated or truncated:
            info["winner"] = state.winner()
            self._ended = True
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The action mask flattened, as `MaskablePPO` takes it for a MultiDiscrete space."""
        if self.game_state is None:
            raise RuntimeError("action_masks() before reset(): call reset() first")
        return np.concatenate(self._info["action_mask"]).astype(bool)

    def render(self):
        return render_frame(self.game_state, self.render_mode)


class ActionMasks(gymnasium.Wrapper, gymnasium.utils.RecordConstructorArgs):
    """Passes `action_masks()` through the wrappers `gymnasium.make` adds (order enforcing, the
    passive checker, a time limit), which forward no methods; `nlmcs/Civ-v0` ends with it."""

    def __init__(self, env: gymnasium.Env):
        gymnasium.utils.RecordConstructorArgs.__init__(self)
        gymnasium.Wrapper.__init__(self, env)

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()
