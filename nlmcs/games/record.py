"""`CorpusRecorder`: a game hook writing every decision in the "nlmcs-corpus/1" JSON-lines format.

One file may hold several games. Each game's lines are collected in memory and appended to the file
in one write (then flushed and fsynced) when the game ends, so a crash loses at most the game in
flight and leaves at most a truncated last game, which the corpus reader reports by line number.
A caller that plays turn by turn may `flush` earlier (whole lines only).
A new file is created atomically (temp file in the same directory, then rename). The format is
documented in docs/corpus.md under "Corpus format"; `corpus/format.py` reads and validates it.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import numpy as np

from nlmcs.files import write_atomic
from nlmcs.games.base import Action, AgentId, Game, State
from nlmcs.games.runner import GameHook, GameResult
from nlmcs.seeds import CHANCE_RULE

FORMAT = "nlmcs-corpus/1"


def _vec(v: np.ndarray) -> list[float]:
    # Most features are counts: a whole number rounds to itself, and the test is cheaper.
    return [x if x.is_integer() else round(x, 5) for x in np.asarray(v, float).tolist()]


def _turn_labels(state: State) -> dict[AgentId, list[str]]:
    """Every acting agent's words at the start of a turn: a unit that dies or founds a city
    during its own action still gets the words it had when it chose."""
    return {a: list(state.agent_labels(a))
            for p in range(state.num_players) for a in state.agents(p)}


class CorpusRecorder(GameHook):
    """Record games played by `nlmcs.games.runner.play_game` into `path` (appending)."""

    def __init__(self, path: str | Path, *, record_states: bool = True,
                 chance: str | None = CHANCE_RULE):
        self.path = Path(path)
        self.record_states = record_states
        self.chance = chance  # the chance rule play_game drew by (None: the log names none)
        self.game_id = ""
        self._lines: list[str] = []
        self._labels: dict[AgentId, list[str]] = {}
        self._last: tuple = (None, None)  # the last decision's vector after it, and as listed
        self.games_written = 0

    def _emit(self, obj: dict) -> None:
        self._lines.append(json.dumps(obj, separators=(",", ":")))

    def on_start(self, game: Game, state: State, seed: int, players_meta: list[dict]) -> None:
        self.game_id = f"{game.name}-{seed}-{uuid.uuid4().hex[:12]}"
        self._lines = []
        config = game.config.to_dict() if hasattr(game, "config") else {}
        ruleset = getattr(game, "ruleset", None)
        self._emit({
            "type": "game", "format": FORMAT, "game_id": self.game_id, "game": game.name,
            "ruleset": getattr(ruleset, "name", ""),
            "ruleset_sha256": getattr(ruleset, "sha256", ""),
            "seed": int(seed), "config": config, "players": list(players_meta),
            "state_features": list(game.state_feature_names()),
            **({"chance": self.chance} if self.chance else {}),
        })

    def on_turn(self, state: State) -> None:
        self._labels = _turn_labels(state)
        turn = {"type": "turn", "game_id": self.game_id, "turn": state.turn}
        if self.record_states:
            turn["state"] = state.to_json()
        self._emit(turn)

    def continue_game(self, game_id: str, state: State) -> None:
        """Go on recording game `game_id`, whose header and current `turn` line are already in
        the file (a game resumed from its own log): the next lines continue that game."""
        self.game_id = game_id
        self._lines = []
        self._labels = _turn_labels(state)

    def on_decision(self, state_before_vec: np.ndarray, state: State, turn: int, player: int,
                    agent: AgentId, action: Action, applied: bool,
                    after_vec: np.ndarray) -> None:
        labels = self._labels.get(agent)
        if labels is None:
            labels = list(state.agent_labels(agent))
        after = _vec(after_vec)
        self._emit({
            "type": "decision", "game_id": self.game_id, "turn": int(turn), "player": int(player),
            "agent": agent, "agent_labels": labels,
            "action": {"kind": action.kind, "arg": action.arg},
            "action_type": state.action_type(action), "applied": bool(applied),
            "state_vector": self._listed(state_before_vec), "after_vector": after,
        })
        self._last = (after_vec, after)

    def _listed(self, vec: np.ndarray) -> list[float]:
        """`_vec` of a vector; the game loop hands a decision's vector after it on as the
        next one's before (`runner.apply_decisions`), listed once."""
        last, listed = self._last
        return listed if vec is last else _vec(vec)

    def on_end(self, state: State, result: GameResult) -> None:
        self._emit({
            "type": "result", "game_id": self.game_id, "turns": int(result.turns),
            "winner": result.winner, "scores": [float(x) for x in result.scores],
        })
        self.flush()
        self.games_written += 1

    def flush(self) -> None:
        """Append the lines collected so far to the file (whole lines, fsynced; a new file
        appears atomically). The game runner flushes once, at the end; a game played turn by
        turn (the browser server) flushes after every turn, so a crash loses at most that turn."""
        if not self._lines:
            return
        text = "\n".join(self._lines) + "\n"
        self._lines = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        else:
            write_atomic(self.path, text)
