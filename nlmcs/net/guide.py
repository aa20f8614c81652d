"""The network at play time: a policy prior for the trees and a value for their leaves.

The trees ask for a prior one agent at a time, but every agent of a player is expanded on the
same simulated state, so the first question on a state answers all of that player's agents in
one forward pass and the rest are read from the cache. The cache keeps the state object itself
(so its id cannot be reused by a new clone) and its turn (roll-outs move one clone on); it is
per thread, as a Dask worker may run several games in threads of one process.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from nlmcs.errors import UserInputError
from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.net.checkpoint import Checkpoint, load
from nlmcs.net.features import Encoder, Position, stack
from nlmcs.net.model import agent_log_softmax, tensors
from nlmcs.paths import shipped_dir
from nlmcs.search.config import SearchConfig
from nlmcs.search.rollout import reward


class NetGuide:
    def __init__(self, checkpoint: Checkpoint, device: str = "cpu"):
        torch.set_num_threads(1)  # small passes; parallelism is over processes
        self.net = checkpoint.net.to(device).eval()
        self.encoder = Encoder(checkpoint.layout)
        self.device = device
        self._cache = threading.local()
        self.forwards = 0

    @torch.no_grad()
    def evaluate(self, positions: Sequence[Position]) -> tuple[list[np.ndarray], np.ndarray]:
        """Per position, the (A,) list of each agent's probabilities over its candidates, and
        the (S,) win probabilities."""
        batch = stack(positions)
        t = tensors(batch, self.device)
        logits, value = self.net(**t)
        logp = agent_log_softmax(logits, t["cand_agent"], len(batch.agent_tok))
        probs = logp.exp().cpu().numpy().astype(np.float64)
        self.forwards += 1
        out, c = [], 0
        for p in positions:
            per_agent = []
            for i in range(len(p.agent_tok)):
                n = len(p.actions[i])
                per_agent.append(probs[c:c + n])
                c += n
            out.append(per_agent)
        return out, torch.sigmoid(value).cpu().numpy().astype(np.float64)

    def position_policy(self, state: State, player: int) -> dict[AgentId, np.ndarray]:
        position = self.encoder.encode(state, player)
        (per_agent,), _ = self.evaluate([position])
        return dict(zip(position.agents, per_agent, strict=True))

    def __call__(self, state: State, agent: AgentId, actions: list[Action]) -> np.ndarray:
        """The prior over `actions` of `agent` (tree planners' `Prior`)."""
        cache = self._cache
        if getattr(cache, "state", None) is not state or cache.turn != state.turn:
            cache.state, cache.turn, cache.policy = state, state.turn, {}
        if agent not in cache.policy:
            for player in range(state.num_players):
                if agent in state.agents(player):
                    cache.policy.update(self.position_policy(state, player))
                    break
        p = cache.policy.get(agent)
        if p is None or len(p) != len(actions):  # not an agent of this turn: no opinion
            return np.full(len(actions), np.nan)
        return p

    def value(self, state: State, player: int) -> float:
        """P(`player` wins) by the network (its candidates are not needed, so not encoded)."""
        position = self.encoder.encode(state, player, agent_actions=[
            (agent, ()) for agent in state.agents(player)])
        _, value = self.evaluate([position])
        return float(value[0])



@dataclass(frozen=True)
class MixedLeaf:
    """A leaf scorer (the trees' `Leaf`): `weight` x the network's value + (1 - weight) x the
    game's reward."""

    guide: NetGuide
    weight: float
    config: SearchConfig

    def __call__(self, state: State, player: int) -> float:
        weight, config = self.weight, self.config
        game = reward(state, player, config.reward, config.reward_weights) if weight < 1 else 0.0
        value = self.guide.value(state, player) if weight > 0 else 0.0
        return weight * value + (1.0 - weight) * game


SHIPPED = {"civ": {20: "civ.pt", 100: "civ-100.pt"}}
"""The networks shipped per game, in the shipped data's `nets/` folder, by the horizon (turns) each
was trained for: the 20-turn network loses the 100-turn game to the one trained for it, which loses
the 20-turn game (docs/net.md). The folder also keeps the 100-turn network that shipped before
(`civ-100-clone.pt`), so that a run recorded with it replays it by hash. Real FreeCiv's planners
search our civ engine on the server's view translated (`nlmcs.games.freeciv.translate`), so the
civ networks are theirs too (their layout is checked against the translated game)."""
SHIPPED["freeciv"] = SHIPPED["civ"]

_GUIDES: dict[tuple, NetGuide] = {}


def horizon(game: Game) -> int | None:
    """The game's turn limit where it has one (civ and the FreeCiv match do)."""
    value = getattr(getattr(game, "config", None), "max_turns", None)
    return int(value) if value else None


def default_net(game_name: str, max_turns: int | None = None) -> Path:
    """The shipped network of a game for games of `max_turns` turns: the one trained at the
    nearest horizon by ratio (unknown: the shortest); `UserInputError` when none ships."""
    nets = SHIPPED.get(game_name, {1: f"{game_name}.pt"})
    trained = min(nets) if not max_turns else min(
        nets, key=lambda h: (abs(math.log(max_turns / h)), h))
    path = shipped_dir() / "nets" / nets[trained]
    if not path.is_file():
        raise UserInputError(f"no network ships for game {game_name!r}; train one "
                             "(`nlmcs net train`) and pass it with --net")
    return path


def shipped_net(path: str | Path) -> bool:
    """Whether `path` is one of the shipped networks (a run records it as "shipped")."""
    return Path(path).resolve().parent == (shipped_dir() / "nets").resolve()


def shipped_net_of_hash(sha256: str) -> Path | None:
    """The shipped network whose content hash starts with `sha256`, if one still ships (a run
    recorded as "shipped" replays the file it played, whichever horizon it was)."""
    from nlmcs.files import sha256_file

    return next((p for p in sorted((shipped_dir() / "nets").glob("*.pt"))
                 if sha256 and sha256_file(p).startswith(sha256)), None)


def load_guide(path: str | Path | None, game: Game) -> NetGuide:
    """A guide over the checkpoint at `path` (None: the shipped one for the game's horizon),
    refused unless it was made for `game`; one per file version and process (pool workers play
    many games)."""
    path = Path(path) if path is not None else default_net(game.name, horizon(game))
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, id(game))
    except OSError:
        key = None
    if key is None or key not in _GUIDES:
        guide = NetGuide(load(path, game))
        if key is None:
            return guide
        if len(_GUIDES) >= 4:
            _GUIDES.clear()
        _GUIDES[key] = guide
    return _GUIDES[key]
