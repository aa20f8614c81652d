"""Environments for reinforcement-learning libraries (the `rl` extra: `pip install nlmcs[rl]`).

`nlmcs.envs.civ_v0` is a PettingZoo environment (`civ_v0.env()`, `civ_v0.parallel_env()`), laid
out as PettingZoo's own; importing this package registers the single-agent Gymnasium environment
`nlmcs/Civ-v0` (`nlmcs.envs.civ_gym.CivEnv`, player 0 against a scripted player), made with
`civ_gym.ActionMasks` outermost so that `action_masks()` reaches `MaskablePPO`.
"""

try:
    import gymnasium
    import pettingzoo  # noqa: F401
except ImportError as err:  # pragma: no cover - the rl extra is installed by `make setup`
    raise ImportError("nlmcs.envs needs gymnasium and pettingzoo: pip install 'nlmcs[rl]'"
                      ) from err

if "nlmcs/Civ-v0" not in gymnasium.registry:
    gymnasium.register(id="nlmcs/Civ-v0", entry_point="nlmcs.envs.civ_gym:CivEnv",
                       additional_wrappers=(gymnasium.envs.registration.WrapperSpec(
                           "ActionMasks", "nlmcs.envs.civ_gym:ActionMasks", {}),))
