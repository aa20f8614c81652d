"""The request bodies' checks (pydantic models) answer the first problem in words a client's
author can act on, and keep strict JSON types (no "0" for 0, no true for 1)."""

from __future__ import annotations

import pytest

from nlmcs.serve.logs import RequestError
from nlmcs.serve.requests import MAX_SEED, Act, EndTurn, NewGame, advice_agent, parse

ACT = {"turn": 0, "agent": "unit:1"}


@pytest.mark.parametrize("model, data, message", [
    (EndTurn, {"turn": "0"}, "field 'turn' has the wrong type (str)"),
    (EndTurn, {"turn": True}, "field 'turn' has the wrong type (bool)"),
    (EndTurn, {"turn": 2**31}, "field 'turn' is out of range (2147483648)"),
    (EndTurn, {}, "missing field 'turn'"),
    (EndTurn, {"turn": 0, "b": 1, "a": 2}, "unknown field(s): 'b', 'a'"),
    (Act, {**ACT, "action": {}}, "missing field 'kind'"),
    (Act, {**ACT, "action": {"kind": "go", "arg": [1]}}, "field 'arg' has the wrong type (list)"),
    (Act, {**ACT, "action": {"kind": "go", "arg": "x" * 65}}, "action kind or argument too long"),
    (Act, {**ACT, "action": {"kind": "k" * 33}}, "action kind or argument too long"),
    (Act, {"turn": 0, "agent": "", "action": {"kind": "go"}}, "agent must be a name"),
    (NewGame, {"seed": MAX_SEED + 1}, f"seed must be between 0 and {MAX_SEED}"),
    (NewGame, {"seed": 1.0}, "field 'seed' has the wrong type (float)"),
])  # fmt: skip
def test_bad_bodies_name_their_first_problem(model, data, message):
    with pytest.raises(RequestError) as err:
        parse(model, data)
    assert err.value.status == 400 and err.value.message.startswith(message)


def test_good_bodies_read_back():
    act = parse(Act, {**ACT, "action": {"kind": "move", "arg": 3}})
    assert (act.turn, act.agent, act.action.kind, act.action.arg) == (0, "unit:1", "move", 3)
    assert parse(NewGame, {}).seed is None and parse(NewGame, {"seed": MAX_SEED}).seed == MAX_SEED
    assert advice_agent("city:5") == "city:5"
    with pytest.raises(RequestError, match="agent must be a name"):
        advice_agent(None)


def test_a_client_that_leaves_mid_request_is_quiet(client, caplog):
    """A dropped connection while the body streams in is normal: no error logged, no
    traceback, a short answer nobody reads."""
    import anyio

    app = client.app
    sent = []

    async def receive():
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/api/games", "raw_path": b"/api/games",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
             "server": ("testserver", 80),
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json")]}
    with caplog.at_level("INFO"):
        anyio.run(app, scope, receive, send)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 400
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert "Traceback" not in caplog.text
