"""The games' corpus logs on disk, as the server reads them back: whether a game has finished,
and where an unfinished one stands (its header and the state at the start of its current turn).
Also the error every refusal of the server raises."""

from __future__ import annotations

import json
import re
from pathlib import Path

LOG_PREFIX = "human-"
"""Log files are `human-<game id>.jsonl`: apart from `corpus record`'s `game-<seed>.jsonl`."""
MAX_LOG_BYTES = 512_000_000
"""A 100-turn game on the largest map logs a few tens of MB; far more is not one of ours."""
TURN_LINE = re.compile(rb'\n\{"type":"turn","game_id":"[^"\n]*","turn":(\d+)[,}]')
"""The start of a turn line as the corpus recorder writes it (compact JSON, fields in order)."""
TAIL_BLOCK = 1 << 16
"""First block read from a log's end (a turn line is a few KB); each further block is twice as
large, so a list of many games reads little, and a long turn's lines still take few reads."""


class RequestError(Exception):
    """A request the engine refuses; `status` is the HTTP status the client gets."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def log_finished(path: Path) -> bool:
    """Whether a log's last line is a game's result (read from the end, whatever the size)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 4096))
            tail = fh.read()
    except OSError:
        return False
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return tail.endswith(b"\n") and last.startswith(b'{"type":"result"')


def log_turn(path: Path) -> int | None:
    """The turn an unfinished game's log resumes at (its last turn line), read from the end so
    a list of games costs little however long their logs; None if no turn line is found (an
    empty or foreign file)."""
    try:
        with open(path, "rb") as fh:
            end = fh.seek(0, 2)
            tail, block = b"", TAIL_BLOCK
            while end > 0:
                start = max(0, end - block)
                block = min(2 * block, 1 << 24)
                fh.seek(start)
                # a line start may straddle two blocks; the file's start is a line's start
                tail = (b"\n" if start == 0 else b"") + fh.read(end - start) + tail[:200]
                hits = list(TURN_LINE.finditer(tail))
                if hits:
                    return int(hits[-1].group(1))
                end = start
    except OSError:
        return None
    return None


def read_progress(path: Path) -> tuple[dict, dict | None]:
    """(game header, last turn line) of one game's log; the turn line is None for a finished
    game. A log that is damaged, or whose last turn has no state, cannot be resumed."""
    if path.stat().st_size > MAX_LOG_BYTES:
        raise RequestError(409, f"{path} is too large to be one of this server's games")
    header = turn_line = None
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                raise RequestError(409, f"{path}:{number}: damaged line; the game cannot be "
                                        "resumed") from None
            kind = rec.get("type") if isinstance(rec, dict) else None
            if number == 1 and kind != "game":
                break
            if kind == "game":
                header = rec
            elif kind == "turn":
                turn_line = rec
            elif kind == "result":
                turn_line = None
    if header is None:
        raise RequestError(409, f"{path}: no game header; the game cannot be resumed")
    if turn_line is not None and not isinstance(turn_line.get("state"), dict):
        raise RequestError(409, f"{path}: the last turn has no state; the game cannot be resumed")
    return header, turn_line
