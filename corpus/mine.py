"""Mining: recorded decisions -> state vectors, action vectors and labels (Dobre & Lascarides 2015).

Each decision becomes a state vector s (the acting player's features before the action) and an
action vector a = after - before: the action is described by what it changed, so actions of
different games and maps compare without coordinates. Alongside go the action type (for typed
roll-outs), an action key (type plus a transferable argument, for the naive-Bayes model), the
agent's words and the recorded player's result (win 1, loss 0, draw or undecided 0.5), which can
serve as the utility U of a corpus pair.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpus.format import GameRecord

# Column order of the decision table (vectors are kept apart as float32 matrices).
DECISION_COLUMNS = (
    "game_id", "turn", "player", "player_kind", "player_name", "agent", "agent_label",
    "action_kind", "action_arg", "action_type", "action_key", "applied", "result",
)
GAME_COLUMNS = (
    "game_id", "game", "ruleset", "ruleset_sha256", "seed", "config", "players", "turns",
    "winner", "scores", "decisions", "source", "chance",
)


@dataclass
class Mined:
    """Decisions of one or more games: a table plus row-aligned (n, F) state and action matrices."""

    decisions: pd.DataFrame
    states: np.ndarray  # (n, F) float32, s before the action
    actions: np.ndarray  # (n, F) float32, a = s_after - s_before
    games: pd.DataFrame
    feature_names: list[str]

    def __len__(self) -> int:
        return len(self.decisions)


def action_key(kind: str, arg: int | str | None) -> str:
    """Action type plus its argument where the argument means the same in every game.

    String arguments ("north", "warriors", "bronze working") transfer between games; integer ones
    (unit and tile ids) do not, so those actions are known by their type alone.
    """
    return f"{kind}:{arg}" if isinstance(arg, str) else kind


NO_WINNER = -1
"""The games table's winner of a drawn game (the column is an integer)."""


def stored_winner(value) -> int | None:
    """A games table's winner as a game's result (None for a draw; older tables null or NaN)."""
    if value is None or value != value or int(value) == NO_WINNER:
        return None
    return int(value)


def player_result(winner: int | None, player: int) -> float:
    if winner is None:
        return 0.5
    return 1.0 if winner == player else 0.0


def mine_game(record: GameRecord) -> Mined:
    """Turn one validated game into rows; the state vectors come straight from the log."""
    header = record.header
    kinds = {p["player"]: p for p in header["players"]}
    winner = record.result.get("winner") if record.result else None
    rows = []
    for d in record.decisions:
        pinfo = kinds.get(d.player, {})
        rows.append((
            header["game_id"], d.turn, d.player, str(pinfo.get("kind", "unknown")),
            str(pinfo.get("name", pinfo.get("kind", "unknown"))), d.agent,
            d.agent_labels[0] if d.agent_labels else "", d.action_kind,
            "" if d.action_arg is None else str(d.action_arg), d.action_type,
            action_key(d.action_kind, d.action_arg), d.applied, player_result(winner, d.player),
        ))
    table = pd.DataFrame.from_records(rows, columns=list(DECISION_COLUMNS))
    width = len(header["state_features"])
    before = np.zeros((0, width), np.float32)
    after = before
    if record.decisions:
        before = np.stack([d.state_vector for d in record.decisions])
        after = np.stack([d.after_vector for d in record.decisions])
    result = record.result or {}
    game_row = {
        "game_id": header["game_id"], "game": header["game"], "ruleset": header["ruleset"],
        "ruleset_sha256": str(header.get("ruleset_sha256", "")), "seed": int(header["seed"]),
        "config": json.dumps(header.get("config", {})), "players": json.dumps(header["players"]),
        "turns": int(result.get("turns", 0)),
        "winner": NO_WINNER if winner is None else int(winner),
        "scores": json.dumps(result.get("scores", [])), "decisions": len(rows),
        "source": str(record.path),
        "chance": str(header.get("chance", "")),  # "": the log names no rule (the legacy one)
    }
    return Mined(
        decisions=table, states=before, actions=after - before,
        games=pd.DataFrame([game_row], columns=list(GAME_COLUMNS)),
        feature_names=list(header["state_features"]),
    )


def concat(parts: list[Mined]) -> Mined:
    """Stack mined games that share one feature list (the caller checks that they do)."""
    if not parts:
        raise ValueError("nothing to concatenate")
    return Mined(
        decisions=pd.concat([p.decisions for p in parts], ignore_index=True),
        states=np.concatenate([p.states for p in parts]),
        actions=np.concatenate([p.actions for p in parts]),
        games=pd.concat([p.games for p in parts], ignore_index=True),
        feature_names=parts[0].feature_names,
    )
