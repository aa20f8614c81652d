"""The shape of one decision record, as pydantic models: what the report, `show` and the
measures read from it, typed, so a hand-edited or damaged record is refused by field and line
instead of crashing a view. Unknown fields pass (newer writers add some); known ones are strict
(no "0.5" for 0.5, no true for 1), probabilities in [0, 1], numbers finite.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Probability = Annotated[float, Field(ge=-1e-9, le=1 + 1e-6, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]


class Part(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Sentence(Part):
    id: int
    p: Probability
    text: str | None = None


class Candidate(Part):
    action: Any = None
    q: Finite | None = None


class Latent(Part):
    state: int
    p: Probability


class PriorSentence(Part):
    sentence: int
    relevance: Probability
    text: str | None = None


class PriorMove(Part):
    labels: list[str]
    p: Probability


class Decision(Part):
    step: Count
    agent: str
    turn: int | None = None
    player: int | None = None
    candidates: list[Candidate] | None = None
    agent_labels: list[str] | None = None
    action_labels: list[str] | None = None
    state_labels: list[str] | None = None
    num_candidates: Count | None = None
    relevance_entropy: Probability | None = None
    sentences: list[Sentence] | None = None
    sampled_sentence: int | None = None
    sampled_text: str | None = None
    word_labels: list[tuple[str, str]] | None = None
    word_pos: list[str] | None = None
    associations: list[tuple[str, str, str, Finite]] | None = None
    latent: list[Latent] | None = None
    sampled_latent: int | None = None
    prior_sentences: list[PriorSentence] | None = None
    prior_top: list[PriorMove] | None = None
    prior_null: Probability | None = None


def check_decision(line: str) -> str | None:
    """None if the JSON `line` reads as a decision record, else what is wrong with it, in a
    phrase. (Validated from the JSON text: there an array reads as a pair or a 4-tuple and an
    integer as a number, as JSON means them.)"""
    try:
        Decision.model_validate_json(line)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(x) for x in first["loc"]) or "record"
        value = first.get("input")
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        if first["type"] == "missing":
            return f"not a decision record (no {where!r})"
        if first["type"] in ("greater_than_equal", "less_than_equal") and where.endswith(
                (".p", ".relevance", "relevance_entropy", "prior_null")):
            return f"{where} = {shown} is not a probability (a number in [0, 1])"
        return f"{where} = {shown}: {first['msg'].lower()}"
    return None
