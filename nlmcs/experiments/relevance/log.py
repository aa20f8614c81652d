"""The decision log of `nlmcs play --log-decisions`, read back and checked.

The log is JSON lines. Every line without a "record" key is a decision record: one per agent per
real step (step, turn, player, agent, action, candidates with Q; the text methods add the agent's,
action's and state's words, the top candidate sentences with probabilities, the sampled sentence,
its words' labels with the part of speech of each, and the learned word-to-attribute weights,
see `nlmcs.model.evaluator`). The same file also holds typed records, which older readers never
saw and so cannot trip over (states unless `--no-log-states`):

- `{"record": "game", "format": LOG_FORMAT, ...}` first: method, manual, seed, opponent, the game's
  name and configuration, the search and model configurations;
- `{"record": "state", "step": t, "turn": ..., "scores": [...], "state": {...}}` before the
  decisions of step t (the state they were made in; `Game.state_from_json` reads it back), and
  one more with `"final": true` after the last step;
- `{"record": "end", ...}` last: steps played, winner, scores.

A log without typed records (written before they existed) reads the same, only without maps
and header; one without state records (`--no-log-states`, an ablation's kept logs) has no maps.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.experiments.relevance.records import check_decision
from nlmcs.files import MAX_LINE_BYTES, bounded_lines, check_input

LOG_FORMAT = "nlmcs-decisions/1"
GAME, STATE, END = "game", "state", "end"
"""The typed records' "record" values."""


@dataclass
class DecisionLog:
    """One decision log as read: decision records in file order, typed records by kind."""

    path: Path
    decisions: list[dict] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # line number of each decision record
    header: dict | None = None
    states: dict[int, dict] = field(default_factory=dict)  # step -> state record
    end: dict | None = None
    cut_line: int | None = None
    """Number of a last line that was cut off mid-record (skipped), else None."""

    @property
    def method(self) -> str | None:
        if self.header is not None:
            return self.header.get("method")
        if any("sentences" in r for r in self.decisions):
            return None  # some text method; a log without header does not say which
        if any("latent" in r for r in self.decisions):
            return "nonlinear"
        return None

    @property
    def manual(self) -> str | None:
        return None if self.header is None else self.header.get("manual")

    @property
    def has_text(self) -> bool:
        """Whether any decision carries candidate sentences (the text methods' records, or the
        text reader's in the text-prior methods')."""
        return any("sentences" in r or "prior_sentences" in r for r in self.decisions)

    @property
    def label(self) -> str:
        """A short name for headings: the method and file name."""
        return f"{self.method or 'log'} ({self.path.name})"

    def steps(self) -> list[int]:
        return sorted({r["step"] for r in self.decisions})

    def by_step(self) -> dict[int, list[dict]]:
        out: dict[int, list[dict]] = {}
        for r in self.decisions:
            out.setdefault(r["step"], []).append(r)
        return dict(sorted(out.items()))


def read_log(path: str | Path) -> DecisionLog:
    """Read a decision log; bad input raises `UserInputError` naming the file (and line).

    A last line cut off mid-record (a copy that stopped early) is skipped and reported in
    `cut_line`; a malformed line anywhere else, a log with no decision records, a binary file
    and a missing file are errors.
    """
    path = Path(path)
    check_input(path, what="decision log")  # a folder, a FIFO, a link loop: one line, no hang
    log = DecisionLog(path)
    for number, text, complete in _lines(path):
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as err:
            if not complete:
                log.cut_line = number
                break
            raise UserInputError(f"{path}:{number}: malformed JSON ({err.msg})") from None
        except RecursionError:
            raise UserInputError(f"{path}:{number}: JSON nested too deeply") from None
        if not isinstance(rec, dict):
            raise UserInputError(f"{path}:{number}: expected a JSON object, got "
                                 f"{type(rec).__name__}")
        _add(log, rec, number, text)
    if not log.decisions:
        what = "is empty" if log.header is None and log.cut_line is None else \
            "holds no complete decision record"
        raise UserInputError(f"{path}: {what} (write one with `nlmcs play --log-decisions`)")
    return log


def _lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, ends with a newline), streamed in bounded memory; a binary file is
    refused."""
    with open(path, "rb") as fh:
        for number, raw in bounded_lines(fh):
            if raw is None:
                raise UserInputError(f"{path}:{number}: line longer than "
                                     f"{MAX_LINE_BYTES / 1e6:g} MB, not a decision log")
            if b"\x00" in raw:
                raise UserInputError(f"{path}: binary data, not a JSON-lines decision log")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise UserInputError(f"{path}: not UTF-8 text, not a JSON-lines decision "
                                     "log") from None
            yield number, line, line.endswith("\n")


def _add(log: DecisionLog, rec: dict, number: int, text: str) -> None:
    kind = rec.get("record")
    where = f"{log.path}:{number}"
    if kind is None:
        problem = check_decision(text)
        if problem is not None:
            raise UserInputError(f"{where}: {problem}")
        log.decisions.append(rec)
        log.lines.append(number)
    elif kind == GAME:
        if rec.get("format") != LOG_FORMAT:
            raise UserInputError(f"{where}: log format {rec.get('format')!r}, expected "
                                 f"{LOG_FORMAT!r}")
        log.header = rec
    elif kind == STATE:
        if not isinstance(rec.get("step"), int) or not isinstance(rec.get("state"), dict):
            raise UserInputError(f"{where}: state record without step and state")
        log.states[rec["step"]] = rec
    elif kind == END:
        log.end = rec
    # other record kinds come from newer writers: skipped


def require_text(log: DecisionLog) -> None:
    """Refuse a log whose decisions name no sentences (a method that reads no manual)."""
    if not log.has_text:
        method = log.method or "a method without text"
        raise UserInputError(
            f"{log.path}: written by {method}, which reads no manual: its decisions hold no "
            "sentences, so there is no relevance to show (play text, relevance-only, "
            "random-text or a text-prior method such as uct-text)")


def check_manual(log: DecisionLog, *, manual) -> None:
    """Refuse a log written while reading another manual than `manual` (a
    `manual_pipeline.store.StoredManual`): by the header's name where there is one, and by the
    text of every logged sentence (a log without header is checked by its sentences alone)."""
    name = str(manual.name)
    if log.manual is not None and Path(str(log.manual)).name != name:
        raise UserInputError(f"{log.path}: written reading manual {log.manual!r}, not {name!r}")
    texts = [str(t) for t in manual.sentences.sort_values("sentence_id")["text"]]
    for rec, number in zip(log.decisions, log.lines, strict=True):
        for s in rec.get("sentences", ()):
            sid = s.get("id", -1)
            if sid < 0:
                continue
            if sid >= len(texts) or texts[sid] != s.get("text"):
                raise UserInputError(
                    f"{log.path}:{number}: sentence {sid} is not sentence {sid} of manual "
                    f"{name!r}: the log was written reading another manual")


def unit_type(rec: dict) -> str:
    """The agent's kind in words ("settlers", "city", "civilization"), else its id's prefix."""
    labels = rec.get("agent_labels")
    if labels:
        return " ".join(labels)
    return str(rec.get("agent", "?")).split(":")[0]
