"""What the served page tells a new player before and during a game: what to do when there is no
game yet, which colour is theirs, and at which turn a game they may resume stands."""

from __future__ import annotations

import json
import re

from nlmcs.serve import logs
from nlmcs.serve.views import PLAYER_COLOURS


def new_game(client) -> dict:
    r = client.post("/api/games", json={"seed": 3})
    assert r.status_code == 201, r.text
    return r.json()


def end_turn(client, view: dict) -> dict:
    r = client.post(f"/api/games/{view['id']}/end-turn", json={"turn": view["turn"]})
    assert r.status_code == 200, r.text
    return r.json()


def test_before_any_game_the_page_says_what_to_do_first(client):
    assert client.get("/api/games").json()["games"] == []
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = page.text
    assert "No game yet" in text and "New game" in text
    assert re.search(r"<canvas id=\"map\"[^>]*\bhidden\b", text), "an empty canvas is shown"
    # how to play (click a unit) is the client's hint once a game is on the board
    assert "Click one of your units" not in text
    assert 'href="/docs"' in text


def test_the_game_names_each_seat_s_colour_from_the_one_colour_table(client):
    view = new_game(client)
    colours = {p["player"]: p["colour"] for p in view["players"]}
    mine = colours[view["human"]]
    assert mine == {"name": "red", "hex": "#d62728"}
    assert (mine["name"], mine["hex"]) == PLAYER_COLOURS[view["human"]]
    others = [c for p, c in colours.items() if p != view["human"]]
    assert others and all(c["name"] != mine["name"] for c in others)
    # the client draws and names colours from the game, not from a second table of its own
    script = client.get("/static/client.js").text
    assert not [hex_ for _, hex_ in PLAYER_COLOURS if hex_ in script]
    assert "colour.hex" in script and "colour.name" in script
    assert 'id="legend"' in client.get("/").text


def test_the_resume_offer_names_the_turn_the_game_reached(make_client):
    client = make_client()
    corpus = client.app.state.table.config.corpus
    view = end_turn(client, end_turn(client, new_game(client)))
    assert view["turn"] == 2
    listed = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert listed[view["id"]]["turn"] == 2

    again = make_client(corpus=corpus)  # another server: the game is in its log only
    listed = {g["id"]: g for g in again.get("/api/games").json()["games"]}
    assert listed[view["id"]]["in_memory"] is False
    assert listed[view["id"]]["turn"] == 2  # not missing, not the turn the game started at
    assert again.get(f"/api/games/{view['id']}").json()["turn"] == 2


def test_the_turn_of_a_log_is_read_from_its_end_across_block_edges(tmp_path, monkeypatch):
    path = tmp_path / "human-0123456789abcdef.jsonl"

    def line(obj: dict) -> str:  # as the corpus recorder writes it
        return json.dumps(obj, separators=(",", ":"))

    lines = [line({"type": "game", "game_id": "civ-1-x", "seed": 1})]
    for t in range(3):
        lines.append(line({"type": "turn", "game_id": "civ-1-x", "turn": t,
                           "state": {"pad": "x" * (50 + 37 * t)}}))
        lines.append(line({"type": "decision", "turn": t,  # a decoy in a string
                           "note": '\n{"type":"turn","game_id":"civ-1-x","turn":99,'}))
    path.write_text("\n".join(lines) + "\n")
    for block in (*range(5, 120, 3), 1 << 16):  # a line's start cut by block edges anywhere
        monkeypatch.setattr(logs, "TAIL_BLOCK", block)
        assert logs.log_turn(path) == 2, block
    path.write_text('{"type":"game","game_id":"civ-1-x"}\n')
    assert logs.log_turn(path) is None
    assert logs.log_turn(tmp_path / "missing.jsonl") is None
