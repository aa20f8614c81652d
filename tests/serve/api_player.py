"""A scripted player of the browser server's API, for tests and for playing whole games: it
rebuilds the engine's state from each view (`Game.state_from_json`) and sends, one request per
agent, what the built-in AI would play in the human's seat."""

from __future__ import annotations

import numpy as np

from nlmcs.games.civ import CivConfig, CivGame


def game_for(view: dict, max_turns: int) -> CivGame:
    m = view["state"]["map"]
    return CivGame(CivConfig(width=m["width"], height=m["height"], max_turns=max_turns))


def play_turn(client, view: dict, game: CivGame, rng: np.random.Generator) -> tuple[dict, int]:
    """Play the human's agents as the built-in AI would, then end the turn.
    Returns (view after the turn, actions sent)."""
    state = game.state_from_json(view["state"])
    plan = game.policy("builtin").joint_action(state, view["human"], rng)
    sent = 0
    for agent, action in plan.items():
        if agent not in {a["agent"] for a in view["agents"]} or action.kind == "wait":
            continue
        r = client.post(f"/api/games/{view['id']}/actions",
                        json={"turn": view["turn"], "agent": agent,
                              "action": {"kind": action.kind, "arg": action.arg}})
        if r.status_code == 404 and "died" in r.json()["error"]:
            continue  # killed earlier this turn (the plan was made at its start)
        if r.status_code == 422:
            continue  # an earlier move of this turn made it illegal; the engine drops it too
        assert r.status_code == 200, r.json()
        view = r.json()
        sent += 1
        if view["over"]:
            return view, sent
    r = client.post(f"/api/games/{view['id']}/end-turn", json={"turn": view["turn"]})
    assert r.status_code == 200, r.json()
    return r.json(), sent


def play_game(client, view: dict, *, max_turns: int, seed: int = 0) -> tuple[dict, int]:
    """Play to the end; returns (final view, actions sent)."""
    game = game_for(view, max_turns)
    rng = np.random.default_rng(seed)
    total = 0
    while not view["over"]:
        view, sent = play_turn(client, view, game, rng)
        total += sent
    return view, total
