"""The JSON API described for other clients: an OpenAPI 3.1 document (`GET /openapi.json`) built
by Starlette's `SchemaGenerator` from the YAML after `---` in each route's docstring, and a plain
HTML page of the same document (`GET /docs`), so the description lives next to the code it
describes and works offline. Request bodies are the JSON Schema of the pydantic models that
check them (`nlmcs.serve.requests`), so the description cannot drift from the checks.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from pydantic.json_schema import models_json_schema
from starlette import schemas
from starlette.routing import BaseRoute

from nlmcs import __version__
from nlmcs.serve.logs import RequestError
from nlmcs.serve.requests import Act, Empty, EndTurn, NewGame

REF = "#/components/schemas/{model}"

# --- response schemas (the views' JSON; tests compare them with real answers) ------------------
INT = {"type": "integer"}
NUM = {"type": "number"}
STR = {"type": "string"}
BOOL = {"type": "boolean"}


def _nullable(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def _ref(name: str) -> dict:
    return {"$ref": REF.format(model=name)}


def _array(items: dict) -> dict:
    return {"type": "array", "items": items}


def _object(description: str, properties: dict, optional: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "description": description, "properties": properties,
            "required": [k for k in properties if k not in optional]}


def _described(schema: dict, text: str) -> dict:
    return {**schema, "description": text}


ACTION_ARG = _described({"anyOf": [INT, STR, {"type": "null"}]},
                        "a direction 0-7, an item, a tech, or null")
ACTED = _nullable(_object("the action this agent took this turn",
                          {"kind": STR, "arg": ACTION_ARG, "text": STR}))

RESPONSE_SCHEMAS = {
    "Error": _object("every refusal: what is wrong, in one line", {"error": STR}),
    "Colour": _object("a seat's colour, as the map draws it", {"name": STR, "hex": STR}),
    "Player": _object("one seat", {
        "player": INT, "kind": {"enum": ["human", "opponent"]},
        "name": _described(STR, "'you', or the opponent's name (builtin:normal, search:uct)"),
        "score": NUM, "stats": {"type": "object", "additionalProperties": NUM},
        "colour": _ref("Colour")}),
    "Choice": _object("one legal action now", {
        "kind": STR, "arg": ACTION_ARG, "text": STR,
        "target": _described(_nullable(INT), "the tile a move or attack heads for")}),
    "Agent": _object("one of your agents that may act this turn", {
        "agent": STR, "kind": {"enum": ["unit", "city", "civ"]}, "acted": ACTED,
        "tile": _described(INT, "units and cities"), "type": _described(STR, "units"),
        "actions": _array(_ref("Choice"))}, optional=("tile", "type")),
    "City": _object("a city's growth and production", {
        "id": INT, "agent": STR, "owner": INT, "size": INT, "food": INT, "food_box": INT,
        "surplus_food": INT, "shields": INT, "build": STR, "build_cost": INT,
        "surplus_shield": INT, "trade": INT}),
    "Research": _object("your research", {
        "researching": _nullable(STR), "bulbs": INT, "cost": _nullable(INT),
        "known": _array(STR)}),
    "OpponentMove": _object("one of the opponent's moves since your last turn", {
        "player": INT, "agent": STR, "kind": STR, "arg": ACTION_ARG, "applied": BOOL,
        "text": STR, "what": STR, "from": _nullable(INT), "to": _nullable(INT),
        "survived": BOOL, "before": _nullable(STR)}, optional=("to", "survived", "before")),
    "Game": _object("a game from your seat: everything the client draws", {
        "id": STR, "turn": INT, "max_turns": INT, "over": BOOL,
        "winner": _described(_nullable(INT), "the winning player once over (null: a tie)"),
        "human": _described(INT, "your seat"), "players": _array(_ref("Player")),
        "state": _described({"type": "object"}, "the engine's own state JSON "
                                                 "(nlmcs-civ-state/1, `State.to_json()`)"),
        "legend": _described({"type": "object"}, "names behind the state's terrain letters, "
                                                  "and each unit type's strengths"),
        "cities": _array(_ref("City")), "research": _ref("Research"),
        "agents": _array(_ref("Agent")), "opponent_moves": _array(_ref("OpponentMove"))}),
    "GameSummary": _object("a game to resume", {
        "id": STR, "turn": _described(_nullable(INT), "the turn it is at (null: unreadable)"),
        "max_turns": INT, "over": BOOL, "opponent": STR,
        "in_memory": _described(BOOL, "false: it resumes from its log when opened"),
        "scores": _array(NUM)}, optional=("max_turns", "opponent", "scores")),
    "GameList": _object("the games and the server's settings", {
        "games": _array(_ref("GameSummary")), "opponent": STR,
        "corpus": _described(STR, "the corpus every game is recorded into"),
        "maps": _array(STR), "default_map": STR}),
    "Advice": _object("the text agent's choice for one agent, and why", {
        "agent": STR, "turn": INT, "action": _nullable(_ref("Choice")),
        "sentence": _described(_nullable(STR), "the manual's most relevant sentence"),
        "relevance": _nullable(NUM), "sampled_sentence": _nullable(STR),
        "top_sentences": _array(_object("a candidate sentence", {"text": STR, "p": NUM})),
        "relevance_verdict": _nullable(STR), "rollouts": INT, "depth": INT,
        "seconds": NUM}),
    "Ingest": _object("what an ingest added to the corpus", {
        "corpus": STR, "new_games": INT, "games": _nullable(INT), "decisions": _nullable(INT),
        "directory": STR, "message": STR}, optional=("directory",)),
}

ERRORS = {  # name: (the status it is answered with, why); a test holds the routes to them
    "BadRequest": (400, "the body or query is not what this route takes"),
    "Forbidden": (403, "another player's agent, or a request from another site"),
    "NotFound": (404, "no such game, or no such agent in it"),
    "Conflict": (409, "a stale turn, an agent that already acted, a finished game, or a "
                      "game that cannot be resumed"),
    "TooLarge": (413, "a body over the server's limit"),
    "NotJson": (415, "a body not sent as application/json"),
    "Unprocessable": (422, "an action the engine does not list as legal now, or an unknown "
                           "map"),
    "TooMany": (429, "too many new games in the last minute"),
    "Unavailable": (503, "this description needs PyYAML, which is not installed"),
}


BODY_ERRORS = ("BadRequest", "Forbidden", "TooLarge", "NotJson")
"""The answers of every route that reads a JSON body (added to each by `openapi`, not written
in each docstring): a malformed body, another site's request, too large, not JSON."""


def components() -> dict:
    """Schemas, error answers and parameters the routes' docstrings refer to by `$ref`."""
    _, defs = models_json_schema([(m, "validation") for m in (NewGame, Act, EndTurn, Empty)],
                                 ref_template=REF)
    responses = {name: {"description": text, "content": {
        "application/json": {"schema": _ref("Error")}}} for name, (_, text) in ERRORS.items()}
    parameters = {
        "GameId": {"name": "game_id", "in": "path", "required": True,
                   "description": "the game's id (16 hex digits; the page's #game=ID)",
                   "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"}},
        "Agent": {"name": "agent", "in": "query", "required": True,
                  "description": "one of your agents that may act now, e.g. unit:3",
                  "schema": {"type": "string", "minLength": 1, "maxLength": 32}},
    }
    return {"schemas": {**defs["$defs"], **RESPONSE_SCHEMAS}, "responses": responses,
            "parameters": parameters}


# --- the document ------------------------------------------------------------------------------
class ApiSchema(schemas.SchemaGenerator):
    """Starlette's generator, taking the docstring's text before `---` as the summary, so the
    sentence a reader of the code sees is the one the API page shows."""

    def parse_docstring(self, func_or_method: Callable) -> dict:
        parsed = super().parse_docstring(func_or_method)
        head = (func_or_method.__doc__ or "").split("---")[0]
        if parsed and head.strip():
            parsed.setdefault("summary", " ".join(head.split()))
        return parsed


def openapi(routes: list[BaseRoute]) -> dict:
    """The OpenAPI document of `routes` (those with `include_in_schema`); 503 without PyYAML,
    which Starlette needs to read the docstrings."""
    if schemas.yaml is None:
        raise RequestError(503, "the API description needs PyYAML: pip install pyyaml")
    generator = ApiSchema({
        "openapi": "3.1.0",
        "info": {"title": "nlmcs game server", "version": __version__,
                 "description": "Play the civ game in the browser or from any HTTP client. "
                                "Every answer is JSON; a refusal is {\"error\": \"...\"} with "
                                "a 4xx status and changes nothing. POST bodies must be sent as "
                                "application/json from the same origin."},
        "components": components(),
    })
    doc = generator.get_schema(routes)
    for operations in doc.get("paths", {}).values():
        for op in operations.values():
            if "requestBody" in op:  # every route that reads a body can refuse it the same ways
                answers = op.setdefault("responses", {})
                for name in BODY_ERRORS:
                    answers.setdefault(str(ERRORS[name][0]),
                                       {"$ref": f"#/components/responses/{name}"})
                op["responses"] = dict(sorted(answers.items()))
    return doc


# --- the page ----------------------------------------------------------------------------------
PAGE_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1em auto; max-width: 60em; color: #222;
       padding: 0 1em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-family: monospace; font-size: 1.05em; margin: 1.2em 0 .3em; }
.method { display: inline-block; min-width: 3.5em; color: #fff; background: #2d6ca2;
          padding: 0 .4em; border-radius: 3px; }
.method.post { background: #3b8a3e; }
table { border-collapse: collapse; margin: .3em 0; }
td, th { border: 1px solid #ddd; padding: .15em .5em; text-align: left; vertical-align: top; }
code { background: #f2f2f2; padding: 0 .2em; }
"""


def _resolve(doc: dict, item: dict) -> dict:
    """A `$ref` into the document's own components, followed."""
    ref = item.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return item
    node = doc
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def type_text(schema: dict, *, html_links: bool = False) -> str:
    """A schema in a few words: `integer ≥ 0`, `array of Agent`, `string | null`; as HTML with
    schema names linked to their definitions when `html_links`."""
    def esc(text: str) -> str:
        return html.escape(text) if html_links else text

    def again(part: dict) -> str:
        return type_text(part, html_links=html_links)

    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f'<a href="#schema-{esc(name)}">{esc(name)}</a>' if html_links else name
    if "anyOf" in schema:
        return " | ".join(again(s) for s in schema["anyOf"])
    if "enum" in schema:
        return esc(" | ".join(json.dumps(v) for v in schema["enum"]))
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {again(schema.get('items', {}))}"
    words = [str(kind)]
    for key, sign in (("minimum", "≥"), ("exclusiveMaximum", "<"), ("maximum", "≤")):
        if key in schema:
            words.append(f"{sign} {schema[key]}")
    if "maxLength" in schema:
        words.append(f"of {schema.get('minLength', 0)}-{schema['maxLength']} characters")
    return esc(" ".join(words))


def _type_html(schema: dict) -> str:
    return type_text(schema, html_links=True)


def _fields_table(schema: dict) -> str:
    props = schema.get("properties") or {}
    if not props:
        return "<p>no fields</p>" if schema.get("type") == "object" else ""
    required = set(schema.get("required", []))
    rows = "".join(
        f"<tr><td><code>{html.escape(name)}</code></td><td>{_type_html(prop)}</td>"
        f"<td>{'required' if name in required else 'optional'}</td>"
        f"<td>{html.escape(str(prop.get('description', '')))}</td></tr>"
        for name, prop in props.items())
    return f"<table><tr><th>field</th><th>type</th><th></th><th></th></tr>{rows}</table>"


def _operation_html(doc: dict, path: str, method: str, op: dict) -> str:
    out = [f'<h3 id="{method}-{html.escape(path)}"><span class="method {method}">'
           f"{method.upper()}</span> {html.escape(path)}</h3>",
           f"<p>{html.escape(op.get('summary', ''))}</p>"]
    if op.get("description"):
        out.append(f"<p>{html.escape(op['description'])}</p>")
    params = [_resolve(doc, p) for p in op.get("parameters", [])]
    if params:
        rows = "".join(
            f"<tr><td><code>{html.escape(p['name'])}</code></td><td>{html.escape(p['in'])}</td>"
            f"<td>{_type_html(p.get('schema', {}))}</td>"
            f"<td>{'required' if p.get('required') else 'optional'}</td>"
            f"<td>{html.escape(p.get('description', ''))}</td></tr>" for p in params)
        out.append(f"<p>Parameters</p><table>{rows}</table>")
    body = op.get("requestBody")
    if body:
        schema = body.get("content", {}).get("application/json", {}).get("schema", {})
        out.append(f"<p>Body (application/json): {_type_html(schema)}</p>"
                   + _fields_table(_resolve(doc, schema)))
    rows = []
    for status, answer in op.get("responses", {}).items():
        answer = _resolve(doc, answer)
        schema = answer.get("content", {}).get("application/json", {}).get("schema")
        rows.append(f"<tr><td>{html.escape(str(status))}</td>"
                    f"<td>{_type_html(schema) if schema else ''}</td>"
                    f"<td>{html.escape(answer.get('description', ''))}</td></tr>")
    out.append(f"<p>Answers</p><table>{''.join(rows)}</table>")
    return "\n".join(out)


def api_page(doc: dict) -> str:
    """The OpenAPI document as one plain HTML page: every operation with its parameters, body
    and answers, then every schema with its fields. No script, nothing fetched."""
    ops = [(path, method, op) for path, methods in doc.get("paths", {}).items()
           for method, op in methods.items()]
    index = "".join(f'<li><a href="#{m}-{html.escape(p)}"><code>{m.upper()} '
                    f"{html.escape(p)}</code></a> — {html.escape(op.get('summary', ''))}</li>"
                    for p, m, op in ops)
    body = "\n".join(_operation_html(doc, p, m, op) for p, m, op in ops)
    schemas_html = "\n".join(
        f'<h3 id="schema-{html.escape(name)}">{html.escape(name)}</h3>'
        f"<p>{html.escape(str(s.get('description', '')))}</p>{_fields_table(s)}"
        for name, s in doc.get("components", {}).get("schemas", {}).items())
    info = doc.get("info", {})
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(info.get('title', 'API'))} — JSON API</title>
<link rel="icon" href="data:,"><style>{PAGE_STYLE}</style></head>
<body>
<h1>{html.escape(info.get('title', 'API'))} — JSON API <small>{html.escape(
        str(info.get('version', '')))}</small></h1>
<p>{html.escape(info.get('description', ''))}</p>
<p>The same description as OpenAPI {html.escape(str(doc.get('openapi', '')))}:
<a href="/openapi.json"><code>/openapi.json</code></a>. Back to <a href="/">the game</a>.</p>
<h2>Endpoints</h2><ul>{index}</ul>
{body}
<h2>Schemas</h2>
{schemas_html}
</body></html>
"""
