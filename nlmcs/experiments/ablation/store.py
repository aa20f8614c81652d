"""The run folder of an ablation: its spec (`run.json`) and one fsynced JSON line per game.

The store itself (fsynced rows, the one tail repair, `run.json`, the writer lock) is the
project's one run store, `nlmcs.runs`; what is an ablation's own is here: which fields a game's
row has, its key (arm, game), and the spec's identity in `run.json`, whose earlier identities
(with `--force-mix`) and the code that played each are kept.
"""

from __future__ import annotations

import logging
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.spec import SPEC_FORMAT, AblationSpec, identity_changes
from nlmcs.runs import (  # noqa: F401  (the run store's names, as the ablation's)
    GAME_PACKAGES,
    LOCK_NAME,
    RESULTS_NAME,
    RUN_NAME,
    BadLine,
    Results,
    append_row,
    code_state,
    locked,
    now,
    repair_tail,
    write_run,
)
from nlmcs.runs import read_results as _read_results
from nlmcs.runs import read_run as _read_run

log = logging.getLogger(__name__)

LOGS_NAME = "decisions"
"""Folder of the kept decision logs (`ablation run --log-decisions`): LOGS_NAME/ARM/game-I.jsonl."""
OUTCOMES = ("win", "loss", "draw", "undecided")
_NUMBER = (int, float)
ROW_TYPES: dict[str, tuple[type, ...]] = {
    "arm": (str,), "method": (str,), "rollouts": (int,), "game": (int,), "seed": (int,),
    "outcome": (str,), "steps": (int,), "score": _NUMBER, "opponent_score": _NUMBER,
    "margin": _NUMBER, "fingerprint": (str,),
}  # fmt: skip
"""Fields every stored row must have, with their JSON types."""


def game_log_path(folder: Path, arm: str, index: int) -> Path:
    """Where game `index` of `arm` keeps its decision log."""
    return Path(folder) / LOGS_NAME / arm / f"game-{index:05d}.jsonl"


def check_row(row: object) -> str | None:
    """Why a parsed line is not a game row, or None if it is one."""
    if not isinstance(row, dict):
        return "not a JSON object"
    for key, types in ROW_TYPES.items():
        if key not in row:
            return f"missing field {key!r}"
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, types):
            return f"field {key!r} has the wrong type ({type(value).__name__})"
    if row["outcome"] not in OUTCOMES:
        return f"unknown outcome {row['outcome']!r}"
    return contradiction(row)


def outcome_of(winner: int | None, finished: bool) -> str:
    """The planner is player 0: win, loss, draw (over with no winner) or undecided."""
    if winner is not None:
        return "win" if winner == 0 else "loss"
    return "draw" if finished else "undecided"


def contradiction(row: dict) -> str | None:
    """Why a well-typed row contradicts itself (its margin is not its scores' difference; its
    outcome is not its winner's), or None: a report would count such a row as it claims."""
    if abs(row["margin"] - (row["score"] - row["opponent_score"])) > 1e-4:
        return (f"margin {row['margin']} is not score {row['score']} - opponent score "
                f"{row['opponent_score']}")
    if "winner" in row and row["outcome"] != outcome_of(row["winner"],
                                                          row.get("finished", True)):
        return f"outcome {row['outcome']!r} but winner {row['winner']}"
    return None


def row_key(row: dict) -> tuple[str, int]:
    return (row["arm"], row["game"])


def read_results(path: Path, *, strict: bool = True) -> Results:
    """Stream `path`; strict raises `UserInputError` naming the first bad line (after reading
    them all, so the message counts the good rows). `Results.done()`: the (arm, game) pairs."""
    return _read_results(path, check=check_row, key=row_key,
                         label=lambda k: f"{k[0]} game {k[1]}", strict=strict)


def read_run(folder: Path) -> dict | None:
    """The folder's run.json, None if there is none; a damaged one is a `UserInputError`."""
    return _read_run(folder, fmt=SPEC_FORMAT, what="an nlmcs ablation run file",
                     required=("spec",))


def check_folder(folder: Path, spec: AblationSpec, *, force_mix: bool = False) -> Results:
    """Read-only checks before a run: the folder is new, or holds this spec's identity (or
    `force_mix`), and its results file reads cleanly. Returns the stored rows."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserInputError(f"{folder}: not a folder; give a run folder with --out")
    run = read_run(folder) if folder.is_dir() else None
    results = read_results(folder / RESULTS_NAME)
    if run is None:
        if folder.is_dir() and any(p.name != LOCK_NAME for p in folder.iterdir()):
            raise UserInputError(f"{folder}: holds other files and no {RUN_NAME}; give a new "
                                 "or empty folder with --out")  # fmt: skip
        return results
    fp = spec.fingerprint()
    if force_mix:
        return results
    if run.get("fingerprint") != fp:
        old = run.get("identities", {}).get(run.get("fingerprint"), {})
        changes = identity_changes(old, spec.identity())
        what = "; ".join(changes[:4]) + (" ..." if len(changes) > 4 else "")
        raise UserInputError(f"{folder} holds a run with another configuration "
                             f"({what or 'see ' + RUN_NAME}); give a new --out, or --force-mix "
                             "to add these games to it")  # fmt: skip
    foreign = sorted({r["fingerprint"] for r in results.rows} - {fp})
    if foreign:
        raise UserInputError(f"{folder / RESULTS_NAME} holds games of another configuration "
                             f"({', '.join(foreign)}); give a new --out, or --force-mix")
    return results


def start_run(folder: Path, spec: AblationSpec) -> None:
    """Record the spec (and keep any earlier identities) in run.json, atomically."""
    folder = Path(folder)
    run = read_run(folder) or {"format": SPEC_FORMAT, "created": now(), "identities": {}}
    fp = spec.fingerprint()
    run["identities"][fp] = spec.identity()
    code = code_state()
    history = run.setdefault("code_history", [])
    if not history or history[-1] != code:  # each code that played here, in order
        history.append(code)
    run.update(fingerprint=fp, spec=spec.to_dict(), updated=now(), code=code)
    write_run(folder, run)
