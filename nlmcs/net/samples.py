"""Training positions with their targets, ragged as `features.Position`, and where they come from.

A `Samples` table holds positions (the player's state vector and the game's result for that
player, the value target), their agents and their candidates (each with its policy target: the
recorded move's one-hot for behaviour cloning, the search's visit shares for self-play). It is
saved as one `.npz` per game, written whole, so a killed run keeps every game it finished.

`replay_corpus` rebuilds a corpus's positions: a recorded game of scripted players replays
exactly from its seed (all chance draws from one generator), so the game is played again and
each replayed move checked against the stored ones; a game that does not replay (played by a
search, or by another version of the rules) is skipped and counted, never guessed.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.files import atomic_output
from nlmcs.games.base import SCRIPTED_PLAYERS, Action, AgentId
from nlmcs.net.features import Batch, Encoder, Position


@dataclass
class Samples:
    glob: np.ndarray  # (S, F) float32
    value: np.ndarray  # (S,) float32: the position's player's result (win 1, draw 0.5, loss 0)
    agent_pos: np.ndarray  # (A,) int32
    agent_tok: np.ndarray  # (A, Ka) int16
    cand_agent: np.ndarray  # (C,) int32
    cand_tok: np.ndarray  # (C, Kc) int16
    target: np.ndarray  # (C,) float32; each agent's targets sum to 1 (or 0: no target)

    def __len__(self) -> int:
        return len(self.glob)

    @classmethod
    def empty(cls, n_features: int, agent_width: int, action_width: int) -> Samples:
        return cls(np.zeros((0, n_features), np.float32), np.zeros(0, np.float32),
                   np.zeros(0, np.int32), np.zeros((0, agent_width), np.int16),
                   np.zeros(0, np.int32), np.zeros((0, action_width), np.int16),
                   np.zeros(0, np.float32))

    @classmethod
    def from_positions(cls, positions: Sequence[Position], targets: Sequence[np.ndarray],
                       values: Sequence[float]) -> Samples:
        """`targets[i]` is position i's (C_i,) candidate targets."""
        parts = []
        for p, t, v in zip(positions, targets, values, strict=True):
            parts.append(cls(p.glob[None].astype(np.float32), np.asarray([v], np.float32),
                             np.zeros(len(p.agent_tok), np.int32),
                             p.agent_tok.astype(np.int16), p.cand_agent.astype(np.int32),
                             p.cand_tok.astype(np.int16), np.asarray(t, np.float32)))
        return concat(parts)

    def batch(self, index: np.ndarray) -> tuple[Batch, np.ndarray, np.ndarray]:
        """(batch of positions `index`, their candidates' targets, their values). Rows are
        stored position by position and agent by agent, so each is a contiguous range."""
        if not hasattr(self, "_starts"):
            self._starts = (np.searchsorted(self.agent_pos, np.arange(len(self) + 1)),
                            np.searchsorted(self.cand_agent, np.arange(len(self.agent_pos) + 1)))
        pos_start, agent_start = self._starts
        index = np.asarray(index)
        agents = _ranges(pos_start[index], pos_start[index + 1])
        cands = _ranges(agent_start[agents], agent_start[agents + 1])
        n_agents = pos_start[index + 1] - pos_start[index]
        n_cands = agent_start[agents + 1] - agent_start[agents]
        batch = Batch(glob=self.glob[index],
                      agent_pos=np.repeat(np.arange(len(index)), n_agents),
                      agent_tok=self.agent_tok[agents],
                      cand_agent=np.repeat(np.arange(len(agents)), n_cands),
                      cand_tok=self.cand_tok[cands])
        return batch, self.target[cands], self.value[index]

    def save(self, path: str | Path, meta: dict | None = None) -> None:
        with atomic_output(path, binary=True) as fh:
            np.savez_compressed(fh, meta=np.asarray(json.dumps(meta or {})),
                                **{f.name: getattr(self, f.name) for f in fields(self)})


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The concatenation of arange(s, e) for each pair."""
    lengths = ends - starts
    if not lengths.sum():
        return np.zeros(0, np.int64)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return np.arange(lengths.sum()) + offsets


def concat(parts: Sequence[Samples]) -> Samples:
    parts = [p for p in parts if len(p)]
    if not parts:
        raise ValueError("no samples to join")
    pos_off = np.cumsum([0] + [len(p) for p in parts[:-1]])
    agent_off = np.cumsum([0] + [len(p.agent_pos) for p in parts[:-1]])
    return Samples(
        glob=np.concatenate([p.glob for p in parts]),
        value=np.concatenate([p.value for p in parts]),
        agent_pos=np.concatenate([p.agent_pos + o
                                  for p, o in zip(parts, pos_off, strict=True)]),
        agent_tok=np.concatenate([p.agent_tok for p in parts]),
        cand_agent=np.concatenate([p.cand_agent + o
                                   for p, o in zip(parts, agent_off, strict=True)]),
        cand_tok=np.concatenate([p.cand_tok for p in parts]),
        target=np.concatenate([p.target for p in parts]))


def load_samples(path: str | Path) -> tuple[Samples, dict]:
    """(samples, meta) of a file `Samples.save` wrote; a damaged file is one `UserInputError`."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            samples = Samples(**{f.name: data[f.name] for f in fields(Samples)})
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, EOFError) as err:
        raise UserInputError(f"{path}: not a samples file ({type(err).__name__})") from None
    n, a, c = len(samples.glob), len(samples.agent_pos), len(samples.cand_agent)
    if (len(samples.value) != n or len(samples.agent_tok) != a or len(samples.cand_tok) != c
            or len(samples.target) != c or (a and samples.agent_pos.max() >= n)
            or (c and samples.cand_agent.max() >= a)):
        raise UserInputError(f"{path}: a damaged samples file (row counts disagree)")
    return samples, meta


def one_hot(actions: Sequence[Sequence[Action]], chosen: dict[AgentId, Action],
            agents: Sequence[AgentId]) -> np.ndarray:
    """Behaviour-cloning targets: 1 on each agent's chosen action (an agent whose move is not
    among its legal actions gets no target)."""
    out = []
    for agent, legal in zip(agents, actions, strict=True):
        row = np.zeros(len(legal), np.float32)
        move = chosen.get(agent)
        if move is not None and move in legal:
            row[list(legal).index(move)] = 1.0
        out.append(row)
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def result_of(winner: int | None, player: int) -> float:
    return 0.5 if winner is None else float(winner == player)


@dataclass
class ReplayReport:
    games: int = 0
    replayed: int = 0
    skipped: dict | None = None
    positions: int = 0
    decisions: int = 0


def replay_corpus(corpus, encoder: Encoder, *, games: int | None = None,
                  on_game: Callable[[int, int], None] | None = None
                  ) -> tuple[Samples, ReplayReport]:
    """Positions of a stored corpus's games, replayed and checked move by move (module doc)."""
    from corpus.mine import stored_winner
    from nlmcs.games.registry import game_entry
    from nlmcs.games.runner import GameHook, play_game
    from nlmcs.seeds import CHANCE_RULES, chance_rng, stored_rule

    table = corpus.games.head(games) if games else corpus.games
    report = ReplayReport(games=len(table), skipped={})
    by_game = corpus.decisions.groupby("game_id", sort=False)
    parts = []

    class Record(GameHook):
        def __init__(self):
            self.positions, self.targets, self.players, self.moves = [], [], [], Counter()

        def on_choice(self, state, player, joint):
            position = encoder.encode(state, player)
            self.positions.append(position)
            self.targets.append(one_hot(position.actions, joint, position.agents))
            self.players.append(player)
            for agent, action in joint.items():
                arg = "" if action.arg is None else str(action.arg)
                self.moves[(state.turn, player, agent, action.kind, arg)] += 1

    for k, (_, row) in enumerate(table.iterrows()):
        why = None
        players = json.loads(row["players"])
        specs = [p.get("name") for p in players]
        if row["game"] != encoder.layout.game:
            why = f"game {row['game']}"
        elif any(p.get("kind") not in SCRIPTED_PLAYERS for p in players):
            why = "not scripted players"
        elif (rule := stored_rule(row.get("chance"))) not in CHANCE_RULES:
            why = f"chance rule {rule}"
        if why is None:
            game = game_entry(row["game"]).rebuild(json.loads(row["config"]))
            hook = Record()
            stored = by_game.get_group(row["game_id"])
            # as many turns as the record has decisions for (a game won by conquest ends in
            # the turn it is won, so its final turn counter is one short of the turns played)
            result = play_game(game, {p["player"]: game.policy(s) for p, s in
                                      zip(players, specs, strict=True)}, seed=int(row["seed"]),
                               max_turns=int(stored["turn"].max()) + 1, hooks=[hook],
                               rng=chance_rng(int(row["seed"]), rule))
            recorded = Counter(zip(stored["turn"], stored["player"], stored["agent"],
                                   stored["action_kind"], stored["action_arg"], strict=True))
            if recorded != hook.moves:
                why = "moves differ from the record"
            elif result.winner != stored_winner(row["winner"]):
                why = "winner differs from the record"
        if why is not None:
            report.skipped[why] = report.skipped.get(why, 0) + 1
        else:
            values = [result_of(result.winner, p) for p in hook.players]
            parts.append(Samples.from_positions(hook.positions, hook.targets, values))
            report.replayed += 1
            report.decisions += sum(hook.moves.values())
        if on_game is not None:
            on_game(k + 1, len(table))
    if not parts:
        raise UserInputError(f"no game of corpus {corpus.directory} replays here "
                             f"(skipped: {report.skipped})")
    samples = concat(parts)
    report.positions = len(samples)
    return samples, report
