"""Synthesised logs in the nlmcs-corpus/1 format, so the corpus tests do not need the engine."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from nlmcs.games.civ.ruleset import resolve_ruleset_path

FEATURES = ["cities", "units", "food", "shields", "techs", "score"]
AGENTS = [("unit:1", "settlers", ["build city", "irrigate", "move"]),
          ("unit:2", "warriors", ["fortify", "move", "attack"]),
          ("city:1", "city", ["build warriors", "build settlers"]),
          ("civ:0", "civilization", ["research bronze working", "research alphabet"])]
EFFECT = {"build city": [1, 0, 0, 0, 0, 5], "irrigate": [0, 0, 2, 0, 0, 1], "move": [0] * 6,
          "fortify": [0] * 6, "attack": [0, -1, 0, 0, 0, 2], "build warriors": [0, 1, 0, -3, 0, 0],
          "build settlers": [0, 1, -4, -3, 0, 0], "research bronze working": [0, 0, 0, 0, 1, 2],
          "research alphabet": [0, 0, 0, 0, 1, 2]}


def _action(name: str) -> dict:
    if name.startswith("build ") and name != "build city":
        return {"kind": "build", "arg": name.split(" ", 1)[1]}
    if name.startswith("research "):
        return {"kind": "research", "arg": name.split(" ", 1)[1]}
    if name == "move":
        return {"kind": "move", "arg": "north"}
    return {"kind": name.replace(" ", "_"), "arg": None}


def ruleset_sha256(name: str) -> str:
    """The sha256 a log of ruleset `name` carries: that of the file this installation has (the
    corpus refuses a known ruleset name with another hash), else a made-up one."""
    path = resolve_ruleset_path(name)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "ab" * 32


def game_lines(game_id: str, *, seed: int, turns: int = 3, ruleset: str = "classic",
               game: str = "civ", winner: int | None = 0) -> list[str]:
    """One complete game: header, turn lines, decisions for two players, result."""
    rng = np.random.default_rng(seed)
    header = {"type": "game", "format": "nlmcs-corpus/1", "game_id": game_id, "game": game,
              "ruleset": ruleset, "ruleset_sha256": ruleset_sha256(ruleset), "seed": seed,
              "config": {"width": 16, "height": 12},
              "players": [{"player": 0, "kind": "builtin", "name": "builtin:normal"},
                          {"player": 1, "kind": "random", "name": "random"}],
              "state_features": FEATURES}
    lines = [json.dumps(header)]
    vec = {p: rng.uniform(1, 5, size=len(FEATURES)) for p in (0, 1)}
    for turn in range(turns):
        lines.append(json.dumps({"type": "turn", "game_id": game_id, "turn": turn,
                                 "state": {"turn": turn}}))
        for player in (0, 1):
            for agent, label, choices in AGENTS:
                name = choices[int(rng.integers(len(choices)))]
                before = vec[player].copy()
                after = before + np.asarray(EFFECT[name], dtype=float)
                vec[player] = after
                action = _action(name)
                lines.append(json.dumps({
                    "type": "decision", "game_id": game_id, "turn": turn, "player": player,
                    "agent": agent.replace(":0", f":{player}"), "agent_labels": [label],
                    "action": action, "action_type": action["kind"], "applied": True,
                    "state_vector": before.round(3).tolist(),
                    "after_vector": after.round(3).tolist()}))
    lines.append(json.dumps({"type": "result", "game_id": game_id, "turns": turns,
                             "winner": winner, "scores": [10.0, 4.0]}))
    return lines


def write_log(path: Path, games: list[list[str]], *, tail: str = "") -> Path:
    path.write_text("".join(line + "\n" for g in games for line in g) + tail)
    return path
