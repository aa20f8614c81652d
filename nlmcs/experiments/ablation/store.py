"""The run folder: its spec (`run.json`) and one fsynced JSON line per finished game.

A crash, an interrupt or a lost worker must lose at most the games in flight, and a re-run must
find exactly what is done. So every game's row goes to `games.jsonl` in one write followed by
fsync before the game counts as done, and `run.json` is replaced atomically. Nothing here drops
or rewrites a stored row: a bad line is named (with its number) and left for the user to fix.
A lock file keeps two runs from writing to one folder at once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.spec import SPEC_FORMAT, AblationSpec, identity_changes
from nlmcs.files import write_atomic
from nlmcs.locking import hold

log = logging.getLogger(__name__)

RESULTS_NAME = "games.jsonl"
RUN_NAME = "run.json"
LOCK_NAME = ".lock"
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


@dataclass(frozen=True)
class BadLine:
    line: int
    reason: str


@dataclass
class Results:
    """The rows of a results file that read cleanly, and the lines that did not."""

    path: Path
    rows: list[dict] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    cut_tail: int | None = None
    """Number of a last line cut off before its end (not a stored game), else None."""

    def done(self) -> set[tuple[str, int]]:
        return {(r["arm"], r["game"]) for r in self.rows}

    def error(self) -> UserInputError:
        first = self.bad[0]
        more = f" (and {len(self.bad) - 1} more bad lines)" if len(self.bad) > 1 else ""
        return UserInputError(
            f"{self.path} line {first.line}: {first.reason}{more}; the {len(self.rows)} good "
            "rows are kept as they are; fix or delete the bad line to go on")


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
    return None


def read_results(path: Path, *, strict: bool = True) -> Results:
    """Stream `path`; strict raises `UserInputError` naming the first bad line (after reading
    them all, so the message counts the good rows)."""
    out = Results(Path(path))
    if not out.path.exists():
        return out
    seen: dict[tuple[str, int], int] = {}
    with open(out.path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            reason = None
            if not raw.endswith(b"\n"):
                # only the last line can lack its end: a write cut short (a full disk, a
                # crash); that game never counted as stored, and `repair_tail` drops it
                out.cut_tail = number
                continue
            elif not raw.strip():
                reason = "empty line"
            else:
                try:
                    row = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    reason = "not UTF-8 text"
                except json.JSONDecodeError as err:
                    reason = f"malformed JSON ({err.msg}, column {err.colno})"
                except RecursionError:
                    reason = "JSON nested too deeply"
                else:
                    reason = check_row(row)
                    key = (row["arm"], row["game"]) if reason is None else None
                    if key is not None and key in seen:
                        reason = f"repeats {key[0]} game {key[1]} (first on line {seen[key]})"
                    elif key is not None:
                        seen[key] = number
                        out.rows.append(row)
            if reason is not None:
                out.bad.append(BadLine(number, reason))
    if strict and out.bad:
        raise out.error()
    return out


def append_row(path: Path, row: dict) -> None:
    """Append one row as a JSON line with a single write, then fsync: once this returns, the
    game survives a crash. A write that fails (a full disk) is undone, so no half line stays;
    a crash mid-write can still leave one, which `repair_tail` removes on the next run."""
    data = (json.dumps(row, separators=(",", ":"), default=str, allow_nan=False)
            + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)  # less the umask
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise type(err)(err.errno, err.strerror, str(path)) from err
    finally:
        os.close(fd)


def repair_tail(path: Path) -> bool:
    """Drop a last line cut off before its end (never a stored game: a row counts once its
    whole line is written); True if one was dropped. Call it holding the folder's lock."""
    path = Path(path)
    if not path.exists():
        return False
    data = path.read_bytes()  # a few MB at most; the run reads it whole next anyway
    if not data or data.endswith(b"\n"):
        return False
    with open(path, "rb+") as fh:
        fh.truncate(data.rfind(b"\n") + 1)
        fh.flush()
        os.fsync(fh.fileno())
    log.warning("%s: dropped a last line cut off before its end (a game that was not stored)",
                path)
    return True


def read_run(folder: Path) -> dict | None:
    """The folder's run.json, None if there is none; a damaged one is a `UserInputError`."""
    path = Path(folder) / RUN_NAME
    if not path.exists():
        return None
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserInputError(f"{path}: not a readable run file ({err})") from None
    if not isinstance(run, dict) or run.get("format") != SPEC_FORMAT or "spec" not in run:
        raise UserInputError(f"{path}: not an nlmcs ablation run file ({SPEC_FORMAT})")
    return run


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
    run = read_run(folder) or {"format": SPEC_FORMAT, "created": _now(), "identities": {}}
    fp = spec.fingerprint()
    run["identities"][fp] = spec.identity()
    code = code_state()
    history = run.setdefault("code_history", [])
    if not history or history[-1] != code:  # each code that played here, in order
        history.append(code)
    run.update(fingerprint=fp, spec=spec.to_dict(), updated=_now(), code=code)
    write_atomic(folder / RUN_NAME, json.dumps(run, indent=2, sort_keys=True) + "\n")
    results = folder / RESULTS_NAME
    if not results.exists():
        os.close(os.open(results, os.O_WRONLY | os.O_CREAT, 0o666))
        _fsync_dir(folder)


GAME_PACKAGES = ("numpy", "numba", "torch", "scipy", "spacy")
"""The packages whose versions decide a game's moves (besides the project's own code)."""


def code_state() -> dict:
    """What code played: the git commit of the checkout and whether it had changes (None
    outside a checkout, as for an installed wheel), and the versions of `GAME_PACKAGES`. Kept
    beside the run's identity, not in it, so a run resumes across commits."""
    import importlib.metadata
    import subprocess

    here = Path(__file__).resolve().parent
    commit = dirty = None
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, text=True,
                             capture_output=True, timeout=10, check=True).stdout.strip()
        if Path(top, "nlmcs").resolve() == here.parents[1]:  # the checkout this code is in
            commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=top, text=True,
                                    capture_output=True, timeout=10, check=True).stdout.strip()
            dirty = bool(subprocess.run(["git", "status", "--porcelain"],
                                        cwd=top, text=True, capture_output=True, timeout=30,
                                        check=True).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    versions = {}
    for name in GAME_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {"commit": commit, "dirty": dirty, "packages": versions}


def locked(folder: Path):
    """Hold the folder's lock; another run writing there is a `UserInputError`."""
    return hold(Path(folder) / LOCK_NAME, what=f"{folder}: run folder", wait=False)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
