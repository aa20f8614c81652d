"""Reader and validator for recorded-game logs in the "nlmcs-corpus/1" JSON-lines format.

A log file holds one or more games. Each game is a `game` header line, then `turn` lines (the
full state at the start of every turn) and `decision` lines (one per agent action, with the acting
player's state vector before and after the action), then a `result` line. docs/corpus.md
documents the format under "Corpus format"; `nlmcs.games.record.CorpusRecorder` writes it.

The reader is a lazy generator of whole games (a game is only yielded once its result line has
been read and every line validated), so files far larger than memory stream through. Every problem
names the file and the line. Lines are checked for meaning as well as syntax: a decision by a
player the header does not list, a winner outside the players, non-finite or wrong-length scores,
a negative turn, a vector value that overflows float32, and (for the civ game) an unknown action
kind are refused. With `on_error="skip"` a malformed line, or a game left without a result by a
crashed recorder, is dropped *and* reported in the `ReadReport`; nothing is dropped silently.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.files import MAX_LINE_BYTES, bounded_lines
from nlmcs.games.base import Action
from nlmcs.games.civ.serialize import FORMAT as CIV_STATE_FORMAT
from nlmcs.games.registry import action_kinds, game_entry
from nlmcs.seeds import NAMED_RULES

log = logging.getLogger(__name__)

FORMAT = "nlmcs-corpus/1"
OnError = Literal["stop", "skip"]


class CorpusFormatError(UserInputError):
    """A log line that breaks the format; the message starts with `file:line:`."""


class WrongGameError(CorpusFormatError):
    """A log recorded for another game or ruleset; never skipped, since the whole file is wrong."""


@dataclass(frozen=True)
class Decision:
    """One agent's action as recorded (the fields of a `decision` line)."""

    line: int
    turn: int
    player: int
    agent: str
    agent_labels: tuple[str, ...]
    action_kind: str
    action_arg: int | str | None
    action_type: str
    applied: bool
    state_vector: np.ndarray  # (F,) float32
    after_vector: np.ndarray  # (F,) float32


@dataclass
class GameRecord:
    """A complete, validated game from one log file."""

    path: Path
    line: int  # line of the header
    header: dict
    decisions: list[Decision] = field(default_factory=list)
    turns: int = 0  # number of `turn` lines seen
    turn: int | None = None  # the last `turn` line's turn
    state: dict | None = None  # and its state, if it held one
    result: dict | None = None
    action_kinds: tuple[str, ...] | None = None  # None: a game whose kinds the reader does not know
    rules: object | None = None  # the engine's game for this header, to replay turn states in
    live: object | None = None  # the last turn line's state in the engine (built on first use)

    @property
    def game_id(self) -> str:
        return self.header["game_id"]

    @property
    def players(self) -> set[int]:
        return {p["player"] for p in self.header["players"]}


@dataclass
class ReadReport:
    """What a read skipped, as `file:line: problem` strings, and how many games it yielded."""

    problems: list[str] = field(default_factory=list)
    games: int = 0
    decisions: int = 0


def _fail(path: Path, line: int, message: str) -> CorpusFormatError:
    return CorpusFormatError(f"{path}:{line}: {message}")


def _need(record: dict, key: str, kinds: type | tuple[type, ...], path: Path, line: int):
    if key not in record:
        raise _fail(path, line, f"{record.get('type')} line lacks the field {key!r}")
    value = record[key]
    # bool is an int subclass; refuse it where a number is wanted.
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise _fail(path, line, f"field {key!r} should not be true/false")
    if not isinstance(value, kinds):
        raise _fail(path, line, f"field {key!r} has the wrong type ({type(value).__name__})")
    return value


_NUMBER_TYPES = frozenset({int, float})
MAX_COUNT = 2**31 - 1
"""Largest turn or player number: far beyond any game, and well inside the 64-bit columns."""
MAX_SEED = 2**63 - 1


def _finite(value: object) -> bool:
    """A JSON number (not true/false) that a float holds finitely."""
    if type(value) not in _NUMBER_TYPES:
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer of hundreds of digits
        return False


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _count(record: dict, key: str, path: Path, line: int, high: int = MAX_COUNT) -> int:
    value = _need(record, key, int, path, line)
    if value < 0:
        raise _fail(path, line, f"field {key!r} must not be negative ({value})")
    if value > high:
        raise _fail(path, line, f"field {key!r} is too large ({_short(value)})")
    return value


def _vector(record: dict, key: str, width: int, path: Path, line: int) -> np.ndarray:
    values = _need(record, key, list, path, line)
    if len(values) != width:
        raise _fail(path, line, f"{key} has {len(values)} values; the header names {width}")
    # type() rather than isinstance(): true/false are ints to Python but not numbers here.
    numeric = set(map(type, values)) <= _NUMBER_TYPES
    try:
        array = np.asarray(values, dtype=np.float64) if numeric else None
    except OverflowError:  # an integer too large for any float
        array = None
    if array is None or not np.isfinite(array).all():
        bad = next((v for v in values if not _finite(v)), None)
        raise _fail(path, line, f"{key} holds a non-finite or non-numeric value {_short(bad)}")
    with np.errstate(over="ignore"):  # an overflow is reported below, by line
        single = array.astype(np.float32)
    if not np.isfinite(single).all():
        bad = float(array[~np.isfinite(single)][0])
        raise _fail(path, line, f"{key} holds {bad!r}, too large for a float32 vector")
    return single


def _check_header(rec: dict, path: Path, line: int, expect_game: str | None,
                  expect_ruleset: str | None) -> None:
    if rec.get("format") != FORMAT:
        raise _fail(path, line, f"unknown format {rec.get('format')!r} (expected {FORMAT!r})")
    _need(rec, "game_id", str, path, line)
    game = _need(rec, "game", str, path, line)
    ruleset = _need(rec, "ruleset", str, path, line)
    _count(rec, "seed", path, line, high=MAX_SEED)
    if "chance" in rec and rec["chance"] not in NAMED_RULES:
        raise _fail(path, line, f"unknown chance rule {str(rec['chance'])[:40]!r} (known: "
                                f"{', '.join(NAMED_RULES)})")
    players = _need(rec, "players", list, path, line)
    features = _need(rec, "state_features", list, path, line)
    if not features or not all(isinstance(f, str) for f in features):
        raise _fail(path, line, "state_features must be a non-empty list of names")
    if not players:
        raise _fail(path, line, "players must list at least one player")
    for p in players:
        if not isinstance(p, dict) or not {"player", "kind"} <= p.keys():
            raise _fail(path, line, "each player needs 'player' and 'kind'")
        number = p["player"]
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= MAX_COUNT:
            raise _fail(path, line, f"player number {_short(number)} must be an integer from 0 to "
                                    f"{MAX_COUNT}")
        if not isinstance(p["kind"], str):
            raise _fail(path, line, f"player {number} kind must be a string")
    numbers = [p["player"] for p in players]
    if len(set(numbers)) != len(numbers):
        raise _fail(path, line, f"player numbers repeat: {numbers}")
    sha = rec.get("ruleset_sha256", "")
    if not isinstance(sha, str):
        raise _fail(path, line, "field 'ruleset_sha256' must be a string")
    if expect_game is not None and game != expect_game:
        raise WrongGameError(f"{path}:{line}: log is for game {game!r}, expected {expect_game!r}")
    if expect_ruleset is not None and ruleset != expect_ruleset:
        raise WrongGameError(
            f"{path}:{line}: log uses ruleset {ruleset!r}, expected {expect_ruleset!r}")


def _decision(rec: dict, game: GameRecord, width: int, path: Path, line: int) -> Decision:
    action = _need(rec, "action", dict, path, line)
    kind = action.get("kind")
    arg = action.get("arg")
    if not isinstance(kind, str) or not (arg is None or isinstance(arg, int | str)):
        raise _fail(path, line, "action must be {'kind': str, 'arg': int|str|null}")
    known = game.action_kinds
    if known is not None and kind not in known:
        raise _fail(path, line, f"unknown action kind {kind!r} for game "
                                f"{game.header['game']!r} (known: {', '.join(known)})")
    labels = _need(rec, "agent_labels", list, path, line)
    if not all(isinstance(w, str) for w in labels):
        raise _fail(path, line, "agent_labels must be a list of words")
    player = _need(rec, "player", int, path, line)
    if player not in game.players:
        raise _fail(path, line, f"decision by player {_short(player)}, who is not among the game's "
                                f"players {sorted(game.players)}")
    return Decision(
        line=line,
        turn=_count(rec, "turn", path, line),
        player=player,
        agent=_need(rec, "agent", str, path, line),
        agent_labels=tuple(labels),
        action_kind=kind,
        action_arg=arg,
        action_type=_need(rec, "action_type", str, path, line),
        applied=_need(rec, "applied", bool, path, line),
        state_vector=_vector(rec, "state_vector", width, path, line),
        after_vector=_vector(rec, "after_vector", width, path, line),
    )


def _check_result(rec: dict, game: GameRecord, path: Path, line: int) -> None:
    _count(rec, "turns", path, line)
    winner = rec.get("winner")
    if winner is not None and (isinstance(winner, bool) or not isinstance(winner, int)):
        raise _fail(path, line, "winner must be a player number or null")
    if winner is not None and winner not in game.players:
        raise _fail(path, line, f"winner {_short(winner)} is not among the game's players "
                                f"{sorted(game.players)}")
    scores = _need(rec, "scores", list, path, line)
    if len(scores) != len(game.players):
        raise _fail(path, line, f"scores has {len(scores)} values for {len(game.players)} players")
    for score in scores:
        if not _finite(score):
            raise _fail(path, line, f"scores holds a non-finite or non-numeric value "
                                    f"{_short(score)}")


class DuplicateKey(ValueError):
    """A JSON object naming a key twice: `json` keeps the last, silently dropping the first."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


_AGENT = re.compile(r"[a-z_]+(?::\d+)+")
"""An agent id as the engines write it: kind:number (unit:3, city:7, civ:0; a game may add
numbers, unit:0:2)."""


def _check_agent(decision: Decision, game: GameRecord, path: Path, line: int) -> bool:
    """What the log itself can prove about a decision: the agent is named as engines name
    them, it acts in the turn the log is in, not past the game's turn limit, and (where the
    turn line holds the state) it exists at the turn's start and belongs to the deciding
    player; an agent numbered a little past the state's `next_id` may have been made during the
    turn, and is let through unseen. True when the agent was found in an engine state, so that
    `_check_legal` can replay the rules for it."""
    agent = decision.agent
    if not _AGENT.fullmatch(agent):
        raise _fail(path, line, f"agent {_short(agent)} is not an agent id (kind:number, such as "
                                "unit:3 or city:7)")
    limit = (game.header.get("config") or {}).get("max_turns")
    if isinstance(limit, int) and not isinstance(limit, bool) and decision.turn > limit:
        raise _fail(path, line, f"decision at turn {decision.turn} of a game of {limit} turns")
    if game.turn is not None and decision.turn != game.turn:
        raise _fail(path, line, f"decision at turn {decision.turn} inside turn {game.turn}")
    kind, *numbers = agent.split(":")
    if len(numbers) != 1:
        return False  # not the civ engine's naming: nothing more to check
    number = int(numbers[0])
    if kind == "civ" and number != decision.player:
        raise _fail(path, line, f"player {decision.player} decides for {agent}")
    state = game.state
    if kind == "civ":
        return state is not None
    listing = {"unit": "units", "city": "cities"}.get(kind)
    if state is None or listing is None or not isinstance(state.get(listing), list):
        return False
    next_id = state.get("next_id")
    if isinstance(next_id, int) and number >= next_id:
        # made during this turn (a city its settlers founded); a turn makes at most one agent
        # per agent it starts with
        room = sum(len(state.get(k) or ()) for k in ("units", "cities"))
        if number < next_id + room:
            return False
        raise _fail(path, line, f"{agent} does not exist at turn {decision.turn} (agents are "
                                f"numbered below {next_id} at its start)")
    owner = next((x.get("owner") for x in state[listing]
                  if isinstance(x, dict) and x.get("id") == number), _MISSING)
    if owner is _MISSING:
        raise _fail(path, line, f"{agent} does not exist at the start of turn {decision.turn}")
    if owner != decision.player:
        if kind == "city" and _human(game, decision.player):
            return False  # a city taken earlier in the turn (a human acts on the board as it is)
        raise _fail(path, line, f"player {decision.player} orders {agent}, which belongs to "
                                f"player {_short(owner)}")
    return True


def _human(game: GameRecord, player: int) -> bool:
    """A human seat (`nlmcs serve`) acts on the board as it is when each order is given, after
    the orders before it in the turn, not on the turn's starting state as programs do."""
    return any(p["player"] == player and p["kind"] == "human" for p in game.header["players"])


def _rules(header: dict) -> object | None:
    """The engine's game a header describes, to replay its turn states in; None where this
    installation cannot (a game without an engine here or without recorded configurations, a
    configuration or ruleset it cannot rebuild): those games' actions are checked by kind only."""
    try:
        key = json.dumps([header["game"], header.get("config"), header.get("ruleset")],
                         sort_keys=True)
    except (TypeError, ValueError):
        return None
    if key not in _RULES:  # a log holds many games of one configuration: build it once
        if len(_RULES) > 16:
            _RULES.clear()
        _RULES[key] = _build_rules(header)
    return _RULES[key]


_RULES: dict[str, object | None] = {}


def _build_rules(header: dict) -> object | None:
    try:
        entry = game_entry(header["game"])
        if not entry.simulated or entry.from_config is None:
            return None
        rules = entry.rebuild(header.get("config") or {})
    except (UserInputError, TypeError, ValueError, OSError):
        return None
    ruleset = getattr(getattr(rules, "ruleset", None), "name", None)
    return rules if ruleset == header.get("ruleset") else None


def _check_legal(decision: Decision, game: GameRecord, path: Path, line: int) -> None:
    """Every player chooses from the turn's starting state, before any action of the turn is
    applied, so a recorded action must be one the engine offers that agent in the state the
    turn line holds (`applied` says whether it still worked when its turn came). A move in
    direction 99 or research of a tech the ruleset lacks, or lacks the prerequisites of, is
    refused here. States are only replayed when the turn line holds the engine's own state."""
    state = game.state
    if game.rules is None or state is None or state.get("format") != CIV_STATE_FORMAT:
        return
    if game.live is None:
        try:
            game.live = game.rules.state_from_json(state)
        except (UserInputError, KeyError, TypeError, ValueError, IndexError) as err:
            raise _fail(path, line, f"the state of turn {game.turn} does not load in this game "
                                    f"({err}), so its decisions cannot be checked") from None
    action = Action(decision.action_kind, decision.action_arg)
    if _human(game, decision.player) and not decision.agent.startswith("civ:"):
        # Moves and attacks depend on what moved before in the turn; only their form is
        # checked. Research is exact for humans too: techs change at the turn's end only.
        legal = _every_order(game.live, decision.agent)
    else:
        legal = game.live.legal_actions(decision.agent)
    if action not in legal:
        offered = ", ".join(_action_text(a) for a in legal[:8]) + (", ..." if len(legal) > 8
                                                                    else "")  # fmt: skip
        raise _fail(path, line, f"{decision.agent} cannot {_action_text(action)} at the start of "
                                f"turn {decision.turn} (the rules offer: {offered or 'nothing'})")


def _every_order(state, agent: str) -> list[Action]:
    """Every action the rules have for an agent of this kind, anywhere (a unit's moves and
    attacks in the 8 directions and its orders; any item a city could build)."""
    from nlmcs.games.civ import tables as tb

    if agent.startswith("city:"):
        return [Action("build", name) for name in state.tables.item_names]
    return [*tb.MOVE, *tb.ATTACK, tb.FORTIFY, tb.WAIT, tb.BUILD_CITY, tb.IRRIGATE,
            tb.MINE_ACTION, tb.BUILD_ROAD]


def _action_text(action: Action) -> str:
    return action.kind if action.arg is None else f"{action.kind} {_short(action.arg)}"


_MISSING = object()


def _lines(path: Path) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, parsed object or None, problem or None) for every non-blank line."""
    try:
        handle = path.open("rb")
    except OSError as err:
        raise UserInputError(f"{path}: cannot open ({err.strerror})") from None
    with handle:
        for number, raw in bounded_lines(handle):
            if raw is None:
                yield number, None, f"line longer than {MAX_LINE_BYTES / 1e6:g} MB"
                continue
            if not raw.strip():
                continue
            last = not raw.endswith(b"\n")
            try:
                obj = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
            except DuplicateKey as err:
                yield number, None, f"the key {err.key!r} appears twice in one object"
                continue
            except UnicodeDecodeError:
                yield number, None, "not UTF-8 text (is this a binary file?)"
                continue
            except json.JSONDecodeError as err:
                what = "truncated last line (the recorder may have crashed)" if last else (
                    f"malformed JSON ({err.msg} at column {err.colno})")
                yield number, None, what
                continue
            except RecursionError:
                yield number, None, "JSON nested too deeply"
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                yield number, None, "each line must be a JSON object with a 'type'"
                continue
            yield number, obj, None


def log_files(paths: list[str | Path]) -> list[Path]:
    """Files to read, in a stable order: a directory stands for its *.jsonl files, sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise UserInputError(f"{path}: directory holds no .jsonl log files")
            out.extend(found)
        else:
            out.append(path)
    return out


def read_games(
    path: str | Path,
    *,
    limit: int | None = None,
    on_error: OnError = "stop",
    expect_game: str | None = None,
    expect_ruleset: str | None = None,
    report: ReadReport | None = None,
) -> Iterator[GameRecord]:
    """Yield the complete games of one log file, in file order, at most `limit` of them.

    `on_error="stop"` raises `CorpusFormatError` at the first problem; `"skip"` drops the bad line
    (or the unfinished game) and appends the problem to `report.problems`. A log for another game
    or ruleset than `expect_game`/`expect_ruleset` is always an error.
    """
    path = Path(path)
    if path.is_dir():
        raise UserInputError(f"{path}: is a directory, expected a .jsonl log file")
    report = report if report is not None else ReadReport()
    current: GameRecord | None = None
    width = 0

    def problem(line: int, message: str) -> None:
        text = f"{path}:{line}: {message}"
        if on_error == "stop":
            raise CorpusFormatError(text)
        log.warning("skipped %s", text)
        report.problems.append(text)

    yielded = 0
    dropped_id: object = None  # game id whose header was bad: its lines go with it
    for number, rec, issue in _lines(path):
        if limit is not None and yielded >= limit:
            return
        if issue is not None:
            problem(number, issue)
            continue
        kind = rec["type"]
        if kind != "game" and dropped_id is not None and rec.get("game_id") == dropped_id:
            continue  # part of a game already reported as skipped
        try:
            if kind == "game":
                if current is not None:
                    problem(current.line, f"game {current.game_id!r} has no result line")
                    current = None
                dropped_id = rec.get("game_id")
                _check_header(rec, path, number, expect_game, expect_ruleset)
                dropped_id = None
                current = GameRecord(path=path, line=number, header=rec,
                                     action_kinds=action_kinds(rec["game"]),
                                     rules=_rules(rec))  # fmt: skip
                width = len(rec["state_features"])
                continue
            if current is None:
                raise _fail(path, number, f"{kind} line before any game header")
            if rec.get("game_id") != current.game_id:
                raise _fail(path, number, f"game_id {rec.get('game_id')!r} inside game "
                                          f"{current.game_id!r}")
            if kind == "turn":
                turn = _count(rec, "turn", path, number)
                if current.turn is not None and turn <= current.turn:
                    raise _fail(path, number, f"turn {turn} after turn {current.turn}: turns "
                                              "must go forward")
                state = None
                if "state" in rec:  # a recorder may leave states out to save space
                    state = _need(rec, "state", dict, path, number)
                current.turns += 1
                current.turn, current.state, current.live = turn, state, None
            elif kind == "decision":
                decision = _decision(rec, current, width, path, number)
                if _check_agent(decision, current, path, number):
                    _check_legal(decision, current, path, number)
                current.decisions.append(decision)
            elif kind == "result":
                _check_result(rec, current, path, number)
                current.result = rec
                report.games += 1
                report.decisions += len(current.decisions)
                yielded += 1
                done, current = current, None
                yield done
            else:
                raise _fail(path, number, f"unknown line type {kind!r}")
        except CorpusFormatError as err:
            if on_error == "stop" or isinstance(err, WrongGameError):
                raise
            if kind == "game":
                err = CorpusFormatError(f"{err} (its whole game is skipped)")
            report.problems.append(str(err))
            log.warning("skipped %s", err)
    if current is not None and (limit is None or yielded < limit):
        problem(current.line, f"game {current.game_id!r} has no result line (file ends early; "
                              "the recorder may have crashed)")
