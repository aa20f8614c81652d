"""The run store of every command that plays many games: one fsynced JSON line per finished job.

A crash, an interrupt or a lost worker must lose at most the jobs in flight, and a re-run must
find exactly what is done. So each result goes to the results file (`games.jsonl` in a run
folder) in one write followed by fsync before it counts as done; a last line cut short by a crash
is dropped once, under the writer lock, by `repair_tail`; every other bad line is named (with its
number) and left for the user to fix, never dropped or rewritten. The run's identity lives in
`run.json`, replaced atomically, not as a line of the results. A lock file keeps two runs from
writing to one folder at once. A base module (it imports no feature): the ablations, the advice
audit and the reader's labels keep their rows here, corpus recording and self-play their whole
files (`FileStore`); `nlmcs.jobs` plays the jobs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.files import write_atomic
from nlmcs.locking import hold

log = logging.getLogger(__name__)

RESULTS_NAME = "games.jsonl"
RUN_NAME = "run.json"
LOCK_NAME = ".lock"


# --- identities ---------------------------------------------------------------------------------
def fingerprint(identity: Mapping) -> str:
    """Short stable hash of an identity dict (12 hex digits)."""
    text = json.dumps(identity, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def identity_changes(old: Mapping, new: Mapping, prefix: str = "") -> list[str]:
    """Human-readable differences between two identity dicts ("steps 15 -> 20", ...)."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, _ABSENT), new.get(key, _ABSENT)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out.extend(identity_changes(a, b, f"{prefix}{key}."))
        elif a != b:
            out.append(f"{prefix}{key} {a!r} -> {b!r}")
    return out


class _Absent:
    """A key one identity lacks (a run stored before the key existed)."""

    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


# --- the results file ---------------------------------------------------------------------------
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
    """Number of a last line cut off before its end (not a stored row), else None."""
    keys: set = field(default_factory=set)
    """The keys of the rows (`read_results`'s `key`), when it was given one."""

    def done(self) -> set:
        return set(self.keys)

    def error(self) -> UserInputError:
        first = self.bad[0]
        more = f" (and {len(self.bad) - 1} more bad lines)" if len(self.bad) > 1 else ""
        return UserInputError(
            f"{self.path} line {first.line}: {first.reason}{more}; the {len(self.rows)} good "
            "rows are kept as they are; fix or delete the bad line to go on")


def _is_object(row: object) -> str | None:
    return None if isinstance(row, dict) else "not a JSON object"


class NotANumber(ValueError):
    """A row holding NaN or Infinity, which no writer of a results file writes."""


def _not_a_number(word: str):
    raise NotANumber(word)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: a number too large to be one
        raise NotANumber(text[:20])
    return value


def read_results(path: Path, *, check: Callable[[object], str | None] = _is_object,
                 key: Callable[[dict], Hashable] | None = None,
                 label: Callable[[Hashable], str] = str, strict: bool = True) -> Results:
    """Stream `path`: `check` says why a parsed line is not a row (None if it is one), and a
    row whose `key` repeats an earlier row's is a bad line (`label` names the key). Strict
    raises `UserInputError` naming the first bad line (after reading them all, so the message
    counts the good rows)."""
    out = Results(Path(path))
    if not out.path.exists():
        return out
    seen: dict[Hashable, int] = {}
    with open(out.path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            reason = None
            if not raw.endswith(b"\n"):
                # only the last line can lack its end: a write cut short (a full disk, a
                # crash); that job never counted as stored, and `repair_tail` drops it
                out.cut_tail = number
                continue
            elif not raw.strip():
                reason = "empty line"
            else:
                try:
                    row = json.loads(raw.decode("utf-8"), parse_constant=_not_a_number,
                                     parse_float=_finite)
                except UnicodeDecodeError:
                    reason = "not UTF-8 text"
                except NotANumber as err:
                    reason = f"holds {err} (rows are written without; a number was lost)"
                except json.JSONDecodeError as err:
                    reason = f"malformed JSON ({err.msg}, column {err.colno})"
                except RecursionError:
                    reason = "JSON nested too deeply"
                else:
                    reason = check(row)
                    k = key(row) if reason is None and key is not None else None
                    if k is not None and k in seen:
                        reason = f"repeats {label(k)} (first on line {seen[k]})"
                    elif reason is None:
                        if k is not None:
                            seen[k] = number
                            out.keys.add(k)
                        out.rows.append(row)
            if reason is not None:
                out.bad.append(BadLine(number, reason))
    if strict and out.bad:
        raise out.error()
    return out


def append_row(path: Path, row: dict) -> None:
    """Append one row as a JSON line with a single write, then fsync: once this returns, the
    row survives a crash. A write that fails (a full disk) is undone, so no half line stays;
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
    """Drop a last line cut off before its end (never a stored row: a row counts once its
    whole line is written); True if one was dropped. Call it holding the store's lock."""
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


class JsonLinesStore:
    """The results file as `nlmcs.jobs.run_jobs` keeps results: each checked, appended and
    fsynced as its job ends. `stored` counts the rows in the file (for the messages)."""

    def __init__(self, path: Path, *, stored: int = 0,
                 check: Callable[[object], str | None] = _is_object,
                 on_row: Callable[[dict], None] | None = None,
                 describe: Callable[[object], str] = str, noun: str = "games"):
        self.path, self.stored, self.check, self.on_row = Path(path), stored, check, on_row
        self.describe, self.noun = describe, noun
        self.rows: list[dict] = []
        """The rows this store appended."""

    @property
    def where(self) -> Path:
        return self.path

    def keep(self, job, row: dict) -> None:
        problem = self.check(row)
        if problem is not None:  # a bug in the job, never a line to store
            raise RuntimeError(f"{self.describe(job)}: bad row ({problem})")
        append_row(self.path, row)
        self.stored += 1
        self.rows.append(row)
        if self.on_row is not None:
            self.on_row(row)


class FileStore:
    """The store of jobs whose results are whole files (a corpus's game logs, self-play
    positions), for `nlmcs.jobs.run_jobs`: `save(job, result)` writes one (atomically, or the
    worker did), so a stored job is one whose file exists; `on_kept(stored)` follows each."""

    def __init__(self, where: Path, save: Callable[[object, object], None] | None = None, *,
                 stored: int = 0, noun: str = "games", describe: Callable[[object], str] = str,
                 on_kept: Callable[[int], None] | None = None):
        self.where, self.save, self.stored, self.noun = Path(where), save, stored, noun
        self.describe, self.on_kept = describe, on_kept

    def keep(self, job, result) -> None:
        if self.save is not None:
            self.save(job, result)
        self.stored += 1
        if self.on_kept is not None:
            self.on_kept(self.stored)


# --- the run folder -----------------------------------------------------------------------------
def read_run(folder: Path, *, fmt: str, what: str, required: tuple[str, ...] = ()
             ) -> dict | None:
    """The folder's run.json, None if there is none; a damaged one, or one of another format
    (`what` names the expected kind), is a `UserInputError`."""
    path = Path(folder) / RUN_NAME
    if not path.exists():
        return None
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserInputError(f"{path}: not a readable run file ({err})") from None
    if not isinstance(run, dict) or run.get("format") != fmt or \
            any(k not in run for k in required):
        raise UserInputError(f"{path}: not {what} ({fmt})")
    return run


def write_run(folder: Path, run: dict, *, results: str | None = RESULTS_NAME) -> None:
    """Replace run.json atomically, and create the (empty) results file if it is missing, so a
    started run's folder always holds both (None: a run whose results are files of their own)."""
    folder = Path(folder)
    write_atomic(folder / RUN_NAME, json.dumps(run, indent=2, sort_keys=True) + "\n")
    path = folder / results if results is not None else None
    if path is not None and not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o666))
        fsync_dir(folder)


def locked(folder: Path):
    """Hold the folder's lock; another run writing there is a `UserInputError`."""
    return hold(Path(folder) / LOCK_NAME, what=f"{folder}: run folder", wait=False)


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
        if Path(top, "nlmcs").resolve() == here:  # the checkout this code is in
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


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
