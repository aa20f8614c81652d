"""Who plays against the human: a scripted policy of the engine, or a search agent.

A search agent is a planner (`nlmcs.methods.make_planner`) seated as a policy, with a
small budget, since the player waits for it at every turn. The recorded name of a player
("builtin:normal", "search:uct") is enough to seat it again when a game resumes from its log.
"""

from __future__ import annotations

from nlmcs.errors import UserInputError
from nlmcs.games.base import SCRIPTED_PLAYERS, Game, Policy


def check_opponent(spec: str) -> None:
    """Refuse an opponent that is neither a scripted policy nor a search method, naming both."""
    from nlmcs.methods import METHODS

    head = str(spec).split(":", 1)[0]
    if head in SCRIPTED_PLAYERS:
        from nlmcs.games import make_game
        from nlmcs.serve.config import GAME

        make_game(GAME).policy(spec)  # the engine names a bad level
        return
    if spec in METHODS:
        return
    raise UserInputError(f"unknown opponent {spec!r}: use builtin[:easy|normal|hard], howto, "
                         f"random, greedy or a search method ({', '.join(METHODS)})")


def make_opponent(game: Game, spec: str, *, seed: int, rollouts: int, depth: int,
                  manual: str | None = None) -> Policy:
    """The opponent `spec` names (also a recorded name such as "search:uct") for `game`."""
    if spec.startswith("search:"):
        spec = spec.removeprefix("search:")
    check_opponent(spec)
    if spec.split(":", 1)[0] in SCRIPTED_PLAYERS:
        return game.policy(spec)
    from nlmcs.methods import make_planner
    from nlmcs.search.config import SearchConfig
    from nlmcs.search.planner import PlannerPolicy

    # Inside its roll-outs the agent models the human as the built-in AI.
    planner = make_planner(spec, game=game, manual=manual, seed=seed, search_config=SearchConfig(
        rollouts=rollouts, depth=depth, opponent="builtin"))
    return PlannerPolicy(planner, f"search:{spec}")


def close_opponent(policy: Policy) -> None:
    """Release what a search opponent holds (worker processes); scripted ones hold nothing."""
    planner = getattr(policy, "planner", None)
    if planner is not None:
        planner.close()
