"""The JSON API's own description: `/openapi.json` documents every JSON route the app has (the
list is taken from the app's routes, so a route added without its description fails here), its
schemas match real answers, and `/docs` shows the same document as a page that needs nothing
from the network."""

from __future__ import annotations

import json
import re

import pytest
from starlette.responses import JSONResponse
from starlette.routing import Route

from nlmcs.serve.apidoc import ERRORS, type_text

PATH_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


def resolve(doc: dict, item: dict) -> dict:
    ref = item.get("$ref")
    if ref is None:
        return item
    assert ref.startswith("#/"), ref
    node = doc
    for part in ref[2:].split("/"):
        assert part in node, f"dangling $ref {ref}"
        node = node[part]
    return node


def undocumented(app, doc: dict) -> list[str]:
    """Each way the app's routes and the document disagree, in words."""
    problems = []
    for route in app.routes:
        if not isinstance(route, Route) or not route.include_in_schema:
            continue
        path = PATH_PARAM.sub(r"{\1}", route.path)
        for method in sorted((route.methods or {"GET"}) - {"HEAD"}):
            op = doc["paths"].get(path, {}).get(method.lower())
            if op is None:
                problems.append(f"{method} {path}: not documented")
                continue
            if not op.get("summary"):
                problems.append(f"{method} {path}: no summary")
            params = [resolve(doc, p) for p in op.get("parameters", [])]
            for name in PATH_PARAM.findall(route.path):
                if not any(p["name"] == name and p["in"] == "path" for p in params):
                    problems.append(f"{method} {path}: path parameter {name} undocumented")
            if method == "POST" and "requestBody" not in op:
                problems.append(f"{method} {path}: no request body")
            ok = [resolve(doc, r) for s, r in op.get("responses", {}).items()
                  if str(s).startswith("2")]
            if not any("schema" in r.get("content", {}).get("application/json", {})
                       for r in ok):
                problems.append(f"{method} {path}: no JSON answer documented")
    return problems


def refs(node) -> set[str]:
    if isinstance(node, dict):
        return ({node["$ref"]} if "$ref" in node else set()).union(*map(refs, node.values()))
    if isinstance(node, list):
        return set().union(*map(refs, node))
    return set()


@pytest.fixture
def doc(client) -> dict:
    r = client.get("/openapi.json")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    return json.loads(r.content)


def test_openapi_documents_every_json_route_of_the_app(client, doc):
    assert doc["openapi"].startswith("3.1") and doc["info"]["title"] and doc["info"]["version"]
    assert undocumented(client.app, doc) == []
    for ref in refs(doc):
        resolve(doc, {"$ref": ref})
    documented = {(m.upper(), p) for p, ms in doc["paths"].items() for m in ms}
    assert {("POST", "/api/games/{game_id}/end-turn"), ("GET", "/api/games/{game_id}/advice"),
            ("POST", "/api/ingest"), ("GET", "/openapi.json")} <= documented
    for path, methods in doc["paths"].items():  # each refusal under its own status
        for method, op in methods.items():
            for status, answer in op["responses"].items():
                name = answer.get("$ref", "").rsplit("/", 1)[-1]
                assert name == "" or str(ERRORS[name][0]) == status, (method, path, status)
    advice = doc["paths"]["/api/games/{game_id}/advice"]["get"]
    assert {(p["name"], p["in"]) for p in (resolve(doc, x) for x in advice["parameters"])} == {
        ("game_id", "path"), ("agent", "query")}
    # the routes left out of the description are the pages, and they answer HTML
    for route in client.app.routes:
        if isinstance(route, Route) and not route.include_in_schema:
            page = client.get(route.path)
            assert page.status_code == 200, route.path
            assert page.headers["content-type"].startswith("text/html"), route.path


def test_a_route_added_without_its_description_is_caught(client, doc):
    async def shiny(request):
        """A new route whose docstring has no OpenAPI part."""
        return JSONResponse({})

    client.app.router.routes.append(Route("/api/games/{game_id}/shiny", shiny,
                                          methods=["GET", "POST"]))
    assert undocumented(client.app, doc) == ["GET /api/games/{game_id}/shiny: not documented",
                                             "POST /api/games/{game_id}/shiny: not documented"]
    again = client.get("/openapi.json").json()  # built from the routes as they are now
    assert "/api/games/{game_id}/shiny" not in again["paths"]


def test_the_documented_schemas_match_real_answers(client, doc):
    schemas = doc["components"]["schemas"]

    def check(name: str, answer: dict) -> None:
        schema = schemas[name]
        assert set(schema["required"]) <= set(answer) <= set(schema["properties"]), name

    check("GameList", client.get("/api/games").json())
    r = client.post("/api/games", json={"seed": 3})
    game = r.json()
    check("Game", game)
    for player in game["players"]:
        check("Player", player)
        check("Colour", player["colour"])
    for agent in game["agents"]:
        check("Agent", agent)
        for choice in agent["actions"]:
            check("Choice", choice)
    check("Research", game["research"])
    game = client.post(f"/api/games/{game['id']}/end-turn", json={"turn": 0}).json()
    for move in game["opponent_moves"]:
        check("OpponentMove", move)
    for summary in client.get("/api/games").json()["games"]:
        check("GameSummary", summary)
    check("Ingest", client.post("/api/ingest", json={}).json())
    check("Error", client.get("/api/games/0000000000000000").json())
    # request bodies are the models that check them: an unknown field is refused in both
    assert schemas["EndTurn"]["additionalProperties"] is False
    assert schemas["EndTurn"]["required"] == ["turn"]
    assert type_text(schemas["Act"]["properties"]["action"]) == "Move"


def test_the_api_page_lists_every_operation_and_needs_no_network(client, doc):
    r = client.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            assert f"{method.upper()}</span> {path}" in page
            assert op["summary"].replace("'", "&#x27;") in page
    for name in doc["components"]["schemas"]:
        assert f'id="schema-{name}"' in page
    assert "<script" not in page and not re.search(r"(src|href)=\"(https?:)?//", page)


def test_without_pyyaml_the_description_says_what_to_install(client, monkeypatch):
    from starlette import schemas

    monkeypatch.setattr(schemas, "yaml", None)
    for path in ("/openapi.json", "/docs"):
        r = client.get(path)
        assert r.status_code == 503 and "pip install pyyaml" in r.json()["error"]
    assert client.get("/api/games").status_code == 200  # the game itself does not need it
