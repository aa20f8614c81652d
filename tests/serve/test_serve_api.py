"""The browser server's JSON API: every endpoint with legal and illegal requests, and what each
leaves in the game and in its corpus log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus.format import read_games
from nlmcs.serve.logs import log_finished


def new_game(client, **body) -> dict:
    r = client.post("/api/games", json={"seed": 3, **body})
    assert r.status_code == 201, r.text
    return r.json()


def log_path(client, view: dict) -> Path:
    return client.app.state.table.logs / f"human-{view['id']}.jsonl"


def log_lines(client, view: dict) -> list[dict]:
    return [json.loads(x) for x in log_path(client, view).read_text().splitlines()]


def agent_of(view: dict, word: str) -> dict:
    return next(a for a in view["agents"] if a.get("type") == word)


def act(client, view, agent, kind, arg=None, turn=None):
    return client.post(f"/api/games/{view['id']}/actions",
                       json={"turn": view["turn"] if turn is None else turn, "agent": agent,
                             "action": {"kind": kind, "arg": arg}})


def test_new_game_shows_the_engine_state_and_starts_its_log(client):
    view = new_game(client)
    assert view["turn"] == 0 and not view["over"] and view["human"] == 0
    state = view["state"]
    assert state["format"] == "nlmcs-civ-state/1"
    assert len(state["map"]["terrain"]) == state["map"]["height"] == 8
    assert {u["owner"] for u in state["units"]} == {0, 1}
    kinds = {a["kind"] for a in view["agents"]}
    assert kinds == {"civ", "unit"}  # no city yet
    settlers = agent_of(view, "settlers")
    assert {"kind": "build_city", "arg": None} in [
        {"kind": a["kind"], "arg": a["arg"]} for a in settlers["actions"]]
    moves = [a for a in settlers["actions"] if a["kind"] == "move"]
    assert moves and all(isinstance(a["target"], int) for a in moves)
    lines = log_lines(client, view)
    assert [x["type"] for x in lines] == ["game", "turn"]  # flushed at the turn's start
    header = lines[0]
    assert header["players"] == [{"player": 0, "kind": "human", "name": "human"},
                                 {"player": 1, "kind": "builtin", "name": "builtin:normal"}]
    assert header["seed"] == 3 and header["config"]["width"] == 10
    assert lines[1]["state"] == state


def test_moves_and_production_are_applied_and_recorded_as_the_human_s(client):
    view = new_game(client)
    settlers = agent_of(view, "settlers")["agent"]
    warriors = agent_of(view, "warriors")
    move = next(a for a in warriors["actions"] if a["kind"] == "move")
    r = act(client, view, settlers, "build_city")
    assert r.status_code == 200, r.json()
    view = r.json()
    city = next(a for a in view["agents"] if a["kind"] == "city")
    assert next(c for c in view["cities"] if c["agent"] == city["agent"])["size"] == 1
    view = act(client, view, warriors["agent"], "move", move["arg"]).json()
    moved = next(u for u in view["state"]["units"] if f"unit:{u['id']}" == warriors["agent"])
    assert moved["tile"] == move["target"]
    view = act(client, view, city["agent"], "build", "settlers").json()
    assert next(c for c in view["cities"] if c["agent"] == city["agent"])["build"] == "settlers"
    view = act(client, view, "civ:0", "research", "bronze working").json()
    assert view["research"]["researching"] == "bronze working"
    assert {a["agent"]: a["acted"]["kind"] for a in view["agents"] if a["acted"]} == {
        warriors["agent"]: "move", city["agent"]: "build", "civ:0": "research"}
    # Nothing of this turn is on disk yet; ending the turn writes it, with the next turn's start.
    assert len(log_lines(client, view)) == 2
    r = client.post(f"/api/games/{view['id']}/end-turn", json={"turn": 0})
    assert r.status_code == 200
    view = r.json()
    assert view["turn"] == 1
    lines = log_lines(client, view)
    mine = [(x["agent"], x["action"]["kind"], x["action"]["arg"], x["applied"])
            for x in lines if x["type"] == "decision" and x["player"] == 0]
    assert mine == [(settlers, "build_city", None, True),
                    (warriors["agent"], "move", move["arg"], True),
                    (city["agent"], "build", "settlers", True),
                    ("civ:0", "research", "bronze working", True)]
    theirs = [x for x in lines if x["type"] == "decision" and x["player"] == 1]
    assert theirs and all(x["turn"] == 0 for x in theirs)
    assert lines[-1]["type"] == "turn" and lines[-1]["turn"] == 1
    assert view["opponent_moves"], "the opponent's moves are shown"


@pytest.mark.parametrize("body, status, words", [
    ({"agent": "unit:1", "action": {"kind": "fly"}}, 422, "not a legal action"),
    ({"agent": "unit:4", "action": {"kind": "build_city"}}, 422, "not a legal action"),
    ({"agent": "unit:4", "action": {"kind": "move", "arg": 99}}, 422, "not a legal action"),
    ({"agent": "unit:4", "action": {"kind": "move", "arg": "north"}}, 422, "not a legal action"),
    ({"agent": "unit:6", "action": {"kind": "wait"}}, 403, "belongs to the opponent"),
    ({"agent": "civ:1", "action": {"kind": "research", "arg": "alphabet"}}, 403, "opponent"),
    ({"agent": "unit:999", "action": {"kind": "wait"}}, 404, "no agent"),
    ({"agent": "../../x", "action": {"kind": "wait"}}, 404, "no agent"),
    ({"agent": "unit:1", "action": {"kind": "wait"}, "turn": 5}, 409, "stale"),
])
def test_forged_stale_and_illegal_actions_are_refused_and_change_nothing(client, body, status,
                                                                         words):
    view = new_game(client)
    before = client.get(f"/api/games/{view['id']}").json()
    r = client.post(f"/api/games/{view['id']}/actions", json={"turn": 0, **body})
    assert r.status_code == status and words in r.json()["error"], r.json()
    after = client.get(f"/api/games/{view['id']}").json()
    assert after == before
    client.post(f"/api/games/{view['id']}/end-turn", json={"turn": 0})
    decisions = [x for x in log_lines(client, view) if x["type"] == "decision"]
    assert not [x for x in decisions if x["player"] == 0]


@pytest.mark.parametrize("arg", [2.0, True])
def test_an_argument_of_the_wrong_json_type_is_not_taken_for_a_legal_one(client, arg):
    view = new_game(client)
    warriors = agent_of(view, "warriors")
    assert 2 in {a["arg"] for a in warriors["actions"] if a["kind"] == "move"}
    r = act(client, view, warriors["agent"], "move", arg)
    assert r.status_code == 400 and "wrong type" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}").json()["state"] == view["state"]


def test_an_agent_acts_once_a_turn_and_a_finished_turn_is_stale(client):
    view = new_game(client)
    warriors = agent_of(view, "warriors")["agent"]
    assert act(client, view, warriors, "fortify").status_code == 200
    r = act(client, view, warriors, "wait")
    assert r.status_code == 409 and "already acted" in r.json()["error"]
    assert client.post(f"/api/games/{view['id']}/end-turn", json={"turn": 0}).status_code == 200
    r = client.post(f"/api/games/{view['id']}/end-turn", json={"turn": 0})
    assert r.status_code == 409 and "stale" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}").json()["turn"] == 1


@pytest.mark.parametrize("path", ["/api/games/0123456789abcdef", "/api/games/..%2F..%2Fetc",
                                  "/api/games/ZZZ", "/api/games/0123456789abcdef/advice?agent=x"])
def test_unknown_game_ids_are_404(client, path):
    r = client.get(path)
    assert r.status_code == 404 and "error" in r.json()


def test_posts_to_an_unknown_game_are_404(client):
    for tail, body in (("actions", {"turn": 0, "agent": "unit:1", "action": {"kind": "wait"}}),
                       ("end-turn", {"turn": 0})):
        r = client.post(f"/api/games/fedcba9876543210/{tail}", json=body)
        assert r.status_code == 404 and "unknown game" in r.json()["error"]


@pytest.mark.parametrize("content, headers, status, words", [
    (b"{not json", {}, 400, "not valid JSON"),
    (b"\xff\xfe", {}, 400, "not valid JSON"),
    (b"[1, 2]", {}, 400, "JSON object"),
    (b"[" * 5000 + b"]" * 5000, {}, 400, "not valid JSON"),
    (b'{"turn": "0"}', {}, 400, "wrong type"),
    (b'{"turn": true}', {}, 400, "wrong type"),
    (b'{"turn": 1e400}', {}, 400, "wrong type"),
    (b'{"turn": -1}', {}, 400, "out of range"),
    (b'{}', {}, 400, "missing field 'turn'"),
    (b'{"turn": 0, "extra": 1}', {}, 400, "unknown field"),
    (b'{"turn": 0}', {"content-type": "text/plain"}, 415, "JSON"),
    (b'{"turn": 0}', {"origin": "http://evil.example"}, 403, "cross-site"),
    (b'{"turn": 0' + b" " * 20_000 + b"}", {}, 413, "over 16384 bytes"),
])
def test_malformed_and_oversized_bodies_are_refused(client, content, headers, status, words):
    view = new_game(client)
    r = client.post(f"/api/games/{view['id']}/end-turn", content=content,
                    headers={"content-type": "application/json", **headers})
    assert r.status_code == status and words in r.json()["error"], r.text
    assert client.get(f"/api/games/{view['id']}").json()["turn"] == 0


def test_a_body_streamed_without_its_length_is_cut_off_at_the_limit(client):
    view = new_game(client)

    def chunks():
        yield b'{"turn": 0, "pad": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    r = client.post(f"/api/games/{view['id']}/end-turn", content=chunks(),
                    headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_malformed_action_fields(client):
    view = new_game(client)
    url = f"/api/games/{view['id']}/actions"
    for body, words in (({"turn": 0, "agent": 5, "action": {"kind": "wait"}}, "wrong type"),
                        ({"turn": 0, "agent": "unit:1", "action": "wait"}, "wrong type"),
                        ({"turn": 0, "agent": "unit:1", "action": {}}, "missing field 'kind'"),
                        ({"turn": 0, "agent": "unit:1", "action": {"kind": "move",
                                                                   "arg": [1]}}, "wrong type"),
                        ({"turn": 0, "agent": "x" * 40, "action": {"kind": "wait"}}, "agent")):
        r = client.post(url, json=body)
        assert r.status_code == 400 and words in r.json()["error"], (body, r.json())


def test_other_routes_methods_and_hosts_answer_cleanly(client):
    assert client.get("/nope").status_code == 404
    r = client.delete("/api/games")
    assert r.status_code == 405 and r.json()["error"]
    r = client.get("/api/games", headers={"host": "evil.example"})
    assert r.status_code == 400
    index = client.get("/")
    assert index.status_code == 200 and "<canvas" in index.text
    script = client.get("/static/client.js")
    assert script.status_code == 200 and "fetch(" in script.text
    r = client.post("/api/games", json={"map": "huge"})
    assert r.status_code == 422 and "unknown map" in r.json()["error"]
    r = client.post("/api/games", json={"seed": -1})
    assert r.status_code == 400


def test_two_games_interleaved_keep_their_own_states_and_logs(client):
    a = new_game(client, seed=5)
    b = new_game(client, seed=5)
    assert a["id"] != b["id"] and a["state"] == b["state"]
    settlers = agent_of(a, "settlers")["agent"]
    a = act(client, a, settlers, "build_city").json()
    assert client.get(f"/api/games/{b['id']}").json()["state"] == b["state"]
    b = act(client, b, agent_of(b, "warriors")["agent"], "fortify").json()
    assert not b["state"]["cities"] and len(a["state"]["cities"]) == 1
    b = client.post(f"/api/games/{b['id']}/end-turn", json={"turn": 0}).json()
    assert b["turn"] == 1 and client.get(f"/api/games/{a['id']}").json()["turn"] == 0
    # A move valid in game a at turn 0 is stale in game b, and changes neither.
    r = act(client, b, settlers, "build_city", turn=0)
    assert r.status_code == 409
    a = client.post(f"/api/games/{a['id']}/end-turn", json={"turn": 0}).json()
    mine_a = [x["action"]["kind"] for x in log_lines(client, a)
              if x["type"] == "decision" and x["player"] == 0]
    mine_b = [x["action"]["kind"] for x in log_lines(client, b)
              if x["type"] == "decision" and x["player"] == 0]
    assert mine_a == ["build_city"] and mine_b == ["fortify"]
    listed = {g["id"] for g in client.get("/api/games").json()["games"]}
    assert {a["id"], b["id"]} <= listed


def test_a_game_resumes_from_its_log_after_eviction_and_restart(make_client):
    small = make_client(max_games=1)
    a = new_game(small, seed=11)
    a = act(small, a, agent_of(a, "settlers")["agent"], "build_city").json()
    a = small.post(f"/api/games/{a['id']}/end-turn", json={"turn": 0}).json()
    a = act(small, a, agent_of(a, "warriors")["agent"], "fortify").json()  # not yet on disk
    new_game(small, seed=12)  # a is put back to its log
    resumed = small.get(f"/api/games/{a['id']}").json()
    assert resumed["turn"] == 1
    assert resumed["state"]["cities"] == a["state"]["cities"]
    assert not any(x["acted"] for x in resumed["agents"])  # the unfinished turn is replayed
    resumed = small.post(f"/api/games/{a['id']}/end-turn", json={"turn": 1}).json()
    # A new server on the same corpus finds the game in its log.
    corpus = small.app.state.table.config.corpus
    again = make_client(corpus=corpus)
    listed = {g["id"]: g for g in again.get("/api/games").json()["games"]}
    assert a["id"] in listed and not listed[a["id"]]["in_memory"]
    view = again.get(f"/api/games/{a['id']}").json()
    assert view["turn"] == 2 and view["state"]["cities"]
    lines = log_lines(again, view)
    assert [x["turn"] for x in lines if x["type"] == "turn"] == [0, 1, 2]


def test_advice_names_a_manual_sentence_and_a_legal_action_and_changes_nothing(client):
    view = new_game(client)
    settlers = agent_of(view, "settlers")
    r = client.get(f"/api/games/{view['id']}/advice", params={"agent": settlers["agent"]})
    assert r.status_code == 200, r.json()
    advice = r.json()
    legal = [{"kind": a["kind"], "arg": a["arg"]} for a in settlers["actions"]]
    assert {"kind": advice["action"]["kind"], "arg": advice["action"]["arg"]} in legal
    assert "settlers" in advice["sentence"].lower()
    assert 0 < advice["relevance"] <= 1 and advice["rollouts"] == 10
    # it says in words whether relevance prefers the sentence (issue 55: the one rule)
    assert advice["relevance_verdict"].split(":")[0] in ("uniform", "not uniform")
    assert client.get(f"/api/games/{view['id']}").json() == view
    r = client.get(f"/api/games/{view['id']}/advice", params={"agent": "unit:6"})
    assert r.status_code == 403
    assert client.get(f"/api/games/{view['id']}/advice").status_code == 400


def test_a_full_game_to_the_turn_limit_is_recorded_and_ingested(make_client):
    from api_player import play_game

    from corpus.store import load_corpus

    client = make_client(max_turns=12)
    view = new_game(client, seed=4)
    r = client.post("/api/ingest", json={})
    assert r.status_code == 200 and r.json()["new_games"] == 0  # nothing finished yet
    final, sent = play_game(client, view, max_turns=12)
    assert final["over"] and sent > 12
    path = log_path(client, final)
    assert log_finished(path)
    (game,) = read_games(path)
    assert game.result["turns"] == final["turn"]
    human = [d for d in game.decisions if d.player == 0]
    assert len(human) == sent and all(d.applied for d in human)
    r = client.post(f"/api/games/{final['id']}/end-turn", json={"turn": final["turn"]})
    assert r.status_code == 409 and "over" in r.json()["error"]
    r = client.post("/api/ingest", json={})
    assert r.status_code == 200 and r.json()["new_games"] == 1, r.json()
    corpus = load_corpus(client.app.state.table.config.corpus)
    kinds = corpus.decisions.groupby("player_kind").size().to_dict()
    assert kinds["human"] == sent and kinds["builtin"] > 0
    assert client.post("/api/ingest", json={}).json()["new_games"] == 0  # no-op the second time


def test_shutdown_ingests_finished_games(make_client):
    from api_player import play_game

    from corpus.store import load_corpus

    client = make_client(max_turns=3)
    play_game(client, new_game(client, seed=2), max_turns=3)
    unfinished = new_game(client, seed=3)
    corpus = client.app.state.table.config.corpus
    client.__exit__(None, None, None)
    stored = load_corpus(corpus)
    assert len(stored.games) == 1
    assert not log_finished(log_path(client, unfinished))


def test_a_search_opponent_plays_and_is_recorded_as_search(make_client):
    client = make_client(opponent="uct", opponent_rollouts=3, opponent_depth=2)
    view = new_game(client, seed=1)
    for turn in range(3):
        view = client.post(f"/api/games/{view['id']}/end-turn", json={"turn": turn}).json()
    assert view["turn"] == 3
    lines = log_lines(client, view)
    assert lines[0]["players"][1] == {"player": 1, "kind": "search", "name": "search:uct"}
    assert any(x["type"] == "decision" and x["player"] == 1 for x in lines)


def test_new_games_are_limited_per_minute_and_the_list_reads_a_bounded_number_of_logs(
        make_client):
    """Issue 60 class 8: anyone who reached the server could start games without limit, each
    leaving a log that every list request read."""
    limited = make_client(new_games_per_minute=3, listed_logs=2)
    ids = [new_game(limited, seed=i)["id"] for i in range(3)]
    refused = limited.post("/api/games", json={"seed": 9})
    assert refused.status_code == 429 and "new games in the last minute" in refused.json()["error"]
    corpus = limited.app.state.table.config.corpus
    again = make_client(corpus=corpus, listed_logs=2)  # a fresh server: every game on disk
    listed = [g["id"] for g in again.get("/api/games").json()["games"]]
    assert len(listed) == 2 and set(listed) <= set(ids)


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True),
    ("0:0:0:0:0:0:0:1", True), ("::ffff:127.0.0.1", True), ("localhost", True),
    ("0.0.0.0", False), ("192.168.1.4", False), ("::", False), ("example.org", False)])
def test_any_spelling_of_a_loopback_address_is_this_machine_only(host, loopback):
    from nlmcs.commands.serve import is_loopback

    assert is_loopback(host) is loopback
