"""The HTTP layer: a Starlette app serving the single-page client and a small JSON API.

Routes (every error is JSON, `{"error": "..."}`, with a 4xx status that says which kind):

- `GET  /`                          the client (`static/index.html`, `static/client.js`)
- `GET  /api/games`                 games in memory and unfinished games resumable from logs
- `POST /api/games`                 `{"seed"?: int, "map"?: "default|small|tiny"}` -> 201, a game
- `GET  /api/games/{id}`            the game (resumed from its log if not in memory)
- `POST /api/games/{id}/actions`    `{"turn": t, "agent": "unit:3", "action": {"kind", "arg"}}`
- `POST /api/games/{id}/end-turn`   `{"turn": t}`
- `GET  /api/games/{id}/advice?agent=unit:3`  the text agent's sentence and action
- `POST /api/ingest`                `{}`: finished games' logs into the corpus
- `GET  /openapi.json`              this API as OpenAPI 3.1 (from the YAML in the handlers'
                                    docstrings, `apidoc.py`); `GET /docs`: the same as a page

Requests are checked before they reach a game: bodies are JSON objects of known fields and
types (the pydantic models of `nlmcs.serve.requests`), at most `ServeConfig.max_body_bytes`,
sent as `application/json` (so a page of another site cannot post without the browser asking
first), from the same origin, to a known host name.
Engine work (a turn, a search, an ingest) runs in worker threads, off the event loop, one request
at a time per game.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from nlmcs.errors import UserInputError
from nlmcs.serve.advice import Advisor
from nlmcs.serve.apidoc import api_page, openapi
from nlmcs.serve.config import MAP_PRESETS, ServeConfig
from nlmcs.serve.logs import RequestError
from nlmcs.serve.requests import Act, Empty, EndTurn, NewGame, advice_agent, parse
from nlmcs.serve.sessions import SessionTable
from nlmcs.serve.views import game_view

log = logging.getLogger(__name__)
notice = logging.getLogger("nlmcs.notice")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def static_dir() -> Path:
    return Path(str(resources.files("nlmcs.serve") / "static"))


# --- request checks -----------------------------------------------------------------------------
async def read_json(request: Request, limit: int) -> dict:
    """The body as a JSON object, or a `RequestError` saying what is wrong with it."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise RequestError(415, "send the body as JSON (Content-Type: application/json)")
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise RequestError(403, f"cross-site request from {origin[:80]!r} refused")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise RequestError(413, f"request body over {limit} bytes")
    size, chunks = 0, []
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(413, f"request body over {limit} bytes")
        chunks.append(chunk)
    try:
        data = json.loads(b"".join(chunks))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise RequestError(400, "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise RequestError(400, "the body must be a JSON object")
    return data


# --- the app ------------------------------------------------------------------------------------
def create_app(config: ServeConfig, *, logs_dir: Path | None = None,
               allowed_hosts: tuple[str, ...] = LOOPBACK_NAMES) -> Starlette:
    """The server for `config`; games are logged into `logs_dir` (default: the corpus's
    `logs/` folder). Host names outside `allowed_hosts` are refused ("*" allows any)."""
    from corpus.store import store_dir

    table = SessionTable(config, logs_dir=logs_dir or store_dir(config.corpus) / "logs")
    advisor = Advisor(rollouts=config.advice_rollouts, depth=config.advice_depth,
                      manual=config.manual, opponent=config.opponent)
    limit = config.max_body_bytes

    def endpoint(handler: Callable) -> Callable:
        """Turn a handler's `RequestError` into its JSON answer (keeping the handler's
        docstring: the API description is read from it)."""
        @functools.wraps(handler)
        async def wrapped(request: Request):
            try:
                return await handler(request)
            except RequestError as err:
                return JSONResponse({"error": err.message}, status_code=err.status)
            except ClientDisconnect:  # the client went away mid-request: normal, and quiet
                log.debug("client left during %s %s", request.method, request.url.path)
                return Response(status_code=400)
        return wrapped

    def in_game(request: Request, work: Callable):
        """Run `work(session)` in a worker thread, holding the game's lock; answer the view."""
        def run():
            session = table.get(request.path_params["game_id"])
            with session.lock:
                work(session)
                return game_view(session)
        return run_in_threadpool(run)

    async def index(request: Request):
        return FileResponse(static_dir() / "index.html", media_type="text/html")

    async def list_games(request: Request):
        """Games to resume, and the server's settings (opponent, corpus, maps).
        ---
        responses:
          '200':
            description: the games in memory and the unfinished ones whose logs resume them,
              newest first, each with the turn it is at
            content:
              application/json:
                schema: {$ref: '#/components/schemas/GameList'}
        """
        games = await run_in_threadpool(table.summaries)
        return JSONResponse({"games": games, "opponent": config.opponent,
                             "corpus": config.corpus, "maps": list(MAP_PRESETS),
                             "default_map": config.map})

    async def new_game(request: Request):
        """Start a game on a fresh map; its log starts in the corpus's logs folder.
        ---
        requestBody:
          required: true
          content:
            application/json:
              schema: {$ref: '#/components/schemas/NewGame'}
        responses:
          '201':
            description: the new game at its first turn
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Game'}
          '422': {$ref: '#/components/responses/Unprocessable'}
          '429': {$ref: '#/components/responses/TooMany'}
        """
        body = parse(NewGame, await read_json(request, limit))

        def create():
            session = table.create(seed=body.seed, preset=body.map)
            with session.lock:
                return game_view(session)
        return JSONResponse(await run_in_threadpool(create), status_code=201)

    async def show_game(request: Request):
        """A game from your seat, resumed from its log if it is not in memory.
        ---
        parameters:
          - {$ref: '#/components/parameters/GameId'}
        responses:
          '200':
            description: the game now
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Game'}
          '404': {$ref: '#/components/responses/NotFound'}
          '409': {$ref: '#/components/responses/Conflict'}
        """
        return JSONResponse(await in_game(request, lambda s: None))

    async def act(request: Request):
        """Play one action of one of your agents (each acts at most once a turn).
        ---
        parameters:
          - {$ref: '#/components/parameters/GameId'}
        requestBody:
          required: true
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Act'}
        responses:
          '200':
            description: the game after the action
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Game'}
          '404': {$ref: '#/components/responses/NotFound'}
          '409': {$ref: '#/components/responses/Conflict'}
          '422': {$ref: '#/components/responses/Unprocessable'}
        """
        body = parse(Act, await read_json(request, limit))
        return JSONResponse(await in_game(request, lambda s: s.act(
            turn=body.turn, agent=body.agent, kind=body.action.kind, arg=body.action.arg)))

    async def end_turn(request: Request):
        """End your turn: the opponent's remaining moves are played and the next turn begins.
        ---
        parameters:
          - {$ref: '#/components/parameters/GameId'}
        requestBody:
          required: true
          content:
            application/json:
              schema: {$ref: '#/components/schemas/EndTurn'}
        responses:
          '200':
            description: the game at the next turn (or over), with the opponent's moves
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Game'}
          '404': {$ref: '#/components/responses/NotFound'}
          '409': {$ref: '#/components/responses/Conflict'}
        """
        body = parse(EndTurn, await read_json(request, limit))
        return JSONResponse(await in_game(request, lambda s: s.end_turn(turn=body.turn)))

    async def advice(request: Request):
        """What the text agent would do with one of your agents, and the manual's sentence
        behind it (a search on a copy of the game: it changes nothing).
        ---
        parameters:
          - {$ref: '#/components/parameters/GameId'}
          - {$ref: '#/components/parameters/Agent'}
        responses:
          '200':
            description: the text agent's action and its most relevant sentence
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Advice'}
          '400': {$ref: '#/components/responses/BadRequest'}
          '403': {$ref: '#/components/responses/Forbidden'}
          '404': {$ref: '#/components/responses/NotFound'}
          '409': {$ref: '#/components/responses/Conflict'}
        """
        agent = advice_agent(request.query_params.get("agent"))

        def run():
            session = table.get(request.path_params["game_id"])
            with session.lock:
                state, player = session.advice_state(agent), session.human
            return advisor.advise(state, player, agent)
        return JSONResponse(await run_in_threadpool(run))

    async def ingest(request: Request):
        """Mine every finished game's log into the corpus (also done when the server stops).
        ---
        requestBody:
          required: true
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Empty'}
        responses:
          '200':
            description: what the corpus gained (no finished game yet is not an error)
            content:
              application/json:
                schema: {$ref: '#/components/schemas/Ingest'}
          '409': {$ref: '#/components/responses/Conflict'}
        """
        parse(Empty, await read_json(request, limit))
        try:
            summary = await run_in_threadpool(table.ingest_finished)
        except UserInputError as err:
            raise RequestError(409, f"corpus {config.corpus}: {err}") from None
        return JSONResponse(_ingest_answer(config.corpus, summary))

    async def openapi_json(request: Request):
        """This API as an OpenAPI 3.1 document.
        ---
        responses:
          '200':
            description: the document (the page /docs shows it for people)
            content:
              application/json:
                schema: {type: object}
          '503': {$ref: '#/components/responses/Unavailable'}
        """
        return JSONResponse(openapi(request.app.routes))

    async def api_docs(request: Request):
        return HTMLResponse(api_page(openapi(request.app.routes)))

    def shutdown() -> None:
        """At shutdown: finished games into the corpus, then release every search."""
        try:
            summary = table.ingest_finished()
        except UserInputError as err:
            notice.info("finished games were not ingested into corpus %s: %s", config.corpus,
                        err)
        else:
            answer = _ingest_answer(config.corpus, summary)
            notice.info("%s", answer["message"])
        table.close()
        advisor.close()

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        await run_in_threadpool(shutdown)

    async def http_error(request: Request, exc: HTTPException):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    gid = "/api/games/{game_id}"
    routes = [
        Route("/", endpoint(index), include_in_schema=False),
        Route("/api/games", endpoint(list_games), methods=["GET"]),
        Route("/api/games", endpoint(new_game), methods=["POST"]),
        Route(gid, endpoint(show_game), methods=["GET"]),
        Route(f"{gid}/actions", endpoint(act), methods=["POST"]),
        Route(f"{gid}/end-turn", endpoint(end_turn), methods=["POST"]),
        Route(f"{gid}/advice", endpoint(advice), methods=["GET"]),
        Route("/api/ingest", endpoint(ingest), methods=["POST"]),
        Route("/docs", endpoint(api_docs), methods=["GET"], include_in_schema=False),
        Route("/openapi.json", endpoint(openapi_json), methods=["GET"]),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error},
                    middleware=[Middleware(TrustedHostMiddleware,
                                           allowed_hosts=list(allowed_hosts))])
    app.state.table = table
    app.state.advisor = advisor
    return app


def _ingest_answer(corpus: str, summary) -> dict:
    if summary is None:
        return {"corpus": corpus, "new_games": 0, "games": None, "decisions": None,
                "message": "no finished game to ingest yet"}
    return {"corpus": corpus, "new_games": summary.new_games, "games": summary.total_games,
            "decisions": summary.total_decisions, "directory": str(summary.directory),
            "message": f"corpus {corpus}: +{summary.new_games} games, now "
                       f"{summary.total_games} games, {summary.total_decisions} decisions"}
