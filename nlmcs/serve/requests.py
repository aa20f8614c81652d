"""The JSON bodies the game server accepts, as pydantic models, and their errors in one line.

Strict types (no "0" for 0, no true for 1), no unknown fields, bounded strings and numbers; a
body that fails answers 400 with the first problem, worded for a person writing a client.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nlmcs.serve.logs import RequestError

MAX_SEED = 2**32 - 1


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


Turn = Annotated[int, Field(ge=0, lt=2**31, description=(
    "the turn the request is for: the game's `turn`; any other is stale (409)"))]
Agent = Annotated[str, Field(min_length=1, max_length=32, description=(
    "one of your agents, e.g. 'unit:3', 'city:5' or 'civ:0' (research)"))]


class NewGame(Body):
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] | None = Field(
        None, description="the map's seed (default: random)")
    map: str | None = Field(None, description=(
        "a map preset of `GET /api/games`'s `maps` (default: its `default_map`)"))


class Move(Body):
    kind: Annotated[str, Field(max_length=32, description="e.g. move, attack, build_city, "
                                                           "build, research, wait")]
    arg: int | Annotated[str, Field(max_length=64)] | None = Field(None, description=(
        "a direction 0-7 (move, attack), an item (build) or a tech (research); exactly as "
        "the agent's `actions` list it"))


class Act(Body):
    turn: Turn
    agent: Agent
    action: Move


class EndTurn(Body):
    turn: Turn


class Empty(Body):
    pass


class Advice(Body):
    """The advice query (`?agent=unit:3`): a missing or odd agent says what an agent is."""

    agent: Agent


def advice_agent(value) -> str:
    try:
        return Advice.model_validate({"agent": value}).agent
    except ValidationError:
        raise RequestError(400, AGENT_HINT) from None


AGENT_HINT = "agent must be a name such as 'unit:3', 'city:5' or 'civ:0'"
RANGE_ERRORS = {"greater_than_equal", "less_than", "less_than_equal", "greater_than"}
LENGTH_ERRORS = {"string_too_long", "string_too_short"}


def parse(model: type[Body], data: dict) -> Body:
    """`data` as `model`, or the `RequestError` of its first problem."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise RequestError(400, _message(err, data)) from None


def _message(err: ValidationError, data: dict) -> str:
    problems = err.errors(include_url=False)
    unknown = [str(p["loc"][-1]) for p in problems if p["type"] == "extra_forbidden"]
    if unknown:
        return f"unknown field(s): {', '.join(map(repr, unknown))[:200]}"
    # a bound broken says more than the other branches of a union refusing the type
    first = next((p for p in problems if p["type"] in RANGE_ERRORS | LENGTH_ERRORS), problems[0])
    loc = [str(x) for x in first["loc"] if not _is_union_branch(x)]
    name = loc[-1] if loc else "body"
    kind = first["type"]
    if kind == "missing":
        return f"missing field {name!r}"
    if kind in RANGE_ERRORS:
        if name == "seed":
            return f"seed must be between 0 and {MAX_SEED}"
        return f"field {name!r} is out of range ({first.get('input')})"
    if kind in LENGTH_ERRORS:
        if name == "agent":
            return AGENT_HINT
        return "action kind or argument too long"
    return f"field {name!r} has the wrong type ({type(_value(data, loc)).__name__})"


def _is_union_branch(part) -> bool:
    """pydantic names the branch of a union it tried (`int`, `str`, `constrained-str`, ...)."""
    return isinstance(part, str) and (part in {"int", "str", "none"} or "[" in part
                                      or part.startswith(("constrained", "function")))


def _value(data: dict, loc: list[str]):
    value = data
    for part in loc:
        if not isinstance(value, dict) or part not in value:
            return value
        value = value[part]
    return value
