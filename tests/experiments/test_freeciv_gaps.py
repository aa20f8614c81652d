"""The rules-gap report's longer horizons replay our moves as made (no server needed)."""

from __future__ import annotations

import numpy as np

from nlmcs.experiments.freeciv_play import _predict, _replay, measures
from nlmcs.games import make_game
from nlmcs.games.base import Action


def _settle_all(state) -> dict:
    """Every agent of ours founds a city where it may, else waits (or its first move)."""
    joint = {}
    for agent, actions in state.agent_actions(0):
        by_kind = {a.kind: a for a in actions}
        joint[agent] = by_kind.get("build_city") or by_kind.get("wait") or actions[0]
    return joint


def test_a_longer_horizon_follows_the_moves_we_made_not_our_ai():
    game = make_game("civ", preset="small", max_turns=30)
    start = game.new_initial_state(3)
    cities = measures(start)["cities"]
    # our recorded moves: every unit waits, five turns long; the cities never grow in number
    wait = {agent: next(a for a in actions if a.kind in ("wait", "fortify", "research"))
            for agent, actions in start.agent_actions(0)}
    history, state = {}, start
    rng = np.random.default_rng(0)
    for turn in range(5):
        history[turn] = (state.clone(), wait)
        state = _predict(state, wait, rng)
    replayed = _replay(history, 0, 4, np.random.default_rng(1))
    assert replayed.turn == start.turn + 5
    assert measures(replayed)["cities"] == cities
    # our built-in AI in our place founds its cities in those turns: the old prediction
    ai = start
    for _ in range(5):
        ai = _predict(ai, None, np.random.default_rng(1))
    assert measures(ai)["cities"] > cities


def test_a_recorded_move_the_prediction_no_longer_allows_is_left_out():
    game = make_game("civ", preset="small", max_turns=30)
    start = game.new_initial_state(3)
    made = _settle_all(start)
    history = {0: (start.clone(), made),
               1: (start.clone(), {**made, "unit:999": Action("wait")})}
    # turn 1 replays turn 0's foundings again: those settlers are cities by then; a unit the
    # prediction lacks is skipped; nothing raises
    replayed = _replay(history, 0, 1, np.random.default_rng(2))
    assert replayed.turn == start.turn + 2
    assert measures(replayed)["cities"] == measures(_predict(start, made, np.random.default_rng(
        2)))["cities"]


class _ScriptedServer:
    """A client double: `receive` hands out the scripted packets, updating the view as the real
    client does, and fails (as a socket read that timed out) once they run out."""

    def __init__(self, packets):
        from nlmcs.games.freeciv.client import View

        self.view, self.packets = View(player_id=0), list(packets)

    def receive(self):
        if not self.packets:
            from nlmcs.games.freeciv.codec import ProtocolError

            raise ProtocolError("cannot read from the server (timed out)")
        name, values = self.packets.pop(0)
        self.view.update(name, values)
        return name, values


def test_our_player_dying_between_turns_ends_the_wait_for_the_next_turn():
    """The server starts no turn for a dead player (it refuses a dead player's "turn done"):
    the loop must stop on the news of our death, not wait for a turn that never comes."""
    from nlmcs.experiments.freeciv_play import DESTROYED, next_turn

    alive = ("PACKET_PLAYER_INFO", {"playerno": 0, "is_alive": True, "score": 7})
    begin = ("PACKET_BEGIN_TURN", {})
    client = _ScriptedServer([alive, ("PACKET_CHAT_MSG", {"message": "hi"}), begin])
    assert next_turn(client) == begin
    dead = ("PACKET_PLAYER_INFO", {"playerno": 0, "is_alive": False, "score": 0})
    client = _ScriptedServer([("PACKET_CHAT_MSG", {"message": "lost"}), dead])
    assert next_turn(client) == (DESTROYED, {})  # and no wait for the turn after
    report = ("PACKET_ENDGAME_REPORT", {"player_num": 2})
    assert next_turn(_ScriptedServer([alive, report])) == report


def test_a_game_we_were_destroyed_in_is_played_out_for_freecivs_final_scores():
    """With no living human connected the server starts no turn: its console sets the
    autogame timeout, and the end-of-game report then gives every player's score."""
    from nlmcs.experiments.freeciv_play import scores_after_our_end

    class Console:
        lines: list[str] = []

        def command(self, line):
            self.lines.append(line)

    srv = Console()
    client = _ScriptedServer([("PACKET_CHAT_MSG", {"message": "Game ended in victory"}),
                              ("PACKET_ENDGAME_REPORT", {"player_num": 2}),
                              ("PACKET_ENDGAME_PLAYER", {"player_id": 0, "score": 6}),
                              ("PACKET_ENDGAME_PLAYER", {"player_id": 1, "score": 16})])
    client.receive_until = lambda names: next(
        p for p in iter(client.receive, None) if p[0] in names)
    assert scores_after_our_end(srv, client) == {0: 6, 1: 16}
    assert srv.lines == ["set timeout -1"]
    silent = _ScriptedServer([])  # the autogame never reports: a loss with scores unknown
    silent.receive_until = lambda names: next(
        p for p in iter(silent.receive, None) if p[0] in names)
    assert scores_after_our_end(srv, silent) == {}


def test_a_destroyed_game_is_lost_to_the_best_other_player_even_with_the_higher_score():
    from nlmcs.experiments.freeciv_play import FreeCivGame, _result
    from nlmcs.games.freeciv.server import ServerConfig

    server = ServerConfig(seed=1, ai_players=2)
    kw = {"method": "uct", "seed": 1, "server": server, "seconds": 1.0}
    # us (player 0) dead with 9 points; AIs 1 and 2 scored 4 and 7: a loss to the second
    lost = _result(FreeCivGame(), final={0: 9, 1: 4, 2: 7}, destroyed=True, me=0, **kw)
    assert lost["winner"] == 2 and lost["destroyed"] and lost["scores"] == [9, 4, 7]
    assert _result(FreeCivGame(), final={}, destroyed=True, me=0, **kw)["winner"] == 1
    won = _result(FreeCivGame(), final={0: 9, 1: 4, 2: 7}, destroyed=False, me=0, **kw)
    assert won["winner"] == 0 and not won["destroyed"]
