"""A stored corpus: mined decisions as columnar parquet parts plus a meta.json that commits them.

Layout of `<corpora_dir>/<name>/`:
- `decisions-NNNN.parquet`: one part per ingest; decision columns (see `corpus.mine`) plus `state`
  and `action`, fixed-size float32 lists in the frozen feature order kept in meta.json.
- `games-NNNN.parquet`: one row per game (ids, players, result, source file), rewritten whole at
  each ingest under a new number.
- `meta.json`: counts, the feature names, the ruleset and its sha256, every source file with its
  sha256, the list of parts, and each committed file's sha256, size and row count
  (`corpus.meta`).

meta.json is written last and atomically, so it is the commit point: a crash mid-ingest leaves an
unlisted part file that loading ignores and the next ingest removes; the corpus is never seen
half-written. Writers hold the corpus's lock (`nlmcs.locking`), so a second ingest into the same
corpus waits for the first. Loading checks every committed file against meta.json; a damaged
corpus is refused by name, and the next ingest rebuilds it from its source logs (given again,
or still where they were). Re-ingesting a file whose sha256 is already listed is a no-op; a game
id already in the corpus (or twice in the new logs), a log of another ruleset version and a
corpus name that is a path are refused.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from corpus.format import OnError, ReadReport, log_files, read_games
from corpus.meta import STORE_FORMAT, read_meta, verify_files
from corpus.mine import Mined, concat, mine_game
from nlmcs.errors import UserInputError
from nlmcs.files import (
    TEMP_SUFFIX,
    atomic_output,
    check_input,
    check_unchanged,
    file_record,
    file_version,
    parquet_rows,
    sha256_file,
    write_atomic,
)
from nlmcs.locking import store_lock
from nlmcs.paths import corpora_dir, shipped_dir, validate_store_name

log = logging.getLogger(__name__)
notice = logging.getLogger("nlmcs.notice")

PARQUET = {"compression": "zstd", "compression_level": 9}
"""How decision parts are written: zstd keeps a corpus about 2x smaller than parquet's default."""


@dataclass(frozen=True)
class StoredCorpus:
    name: str
    directory: Path
    meta: dict
    decisions: pd.DataFrame  # decision columns of `corpus.mine.DECISION_COLUMNS`
    states: np.ndarray  # (n, F) float32
    actions: np.ndarray  # (n, F) float32
    games: pd.DataFrame

    @property
    def feature_names(self) -> list[str]:
        return list(self.meta["feature_names"])


@dataclass
class IngestSummary:
    directory: Path
    new_games: int = 0
    new_decisions: int = 0
    already_ingested: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    total_games: int = 0
    total_decisions: int = 0


def corpus_dir(name_or_dir: str | Path, *, root: Path | None = None) -> Path:
    """Where to read a corpus: a name maps to `<root or corpora_dir()>/<name>`; a path with a
    separator is used as is."""
    text = str(name_or_dir)
    if "/" in text or os.sep in text or Path(text).is_absolute():
        return Path(text)
    return (root or corpora_dir()) / validate_store_name(text, kind="corpus")


def store_dir(name: str | Path, *, root: Path | None = None) -> Path:
    """Where to write a corpus: a `Path` is a directory chosen by the caller; a string must be
    a corpus name (no separators), so `--name ../../x` never writes outside the store."""
    if isinstance(name, Path):
        return name
    name = validate_store_name(name, kind="corpus")
    if root is None and (shipped_dir() / "corpora" / name / "meta.json").is_file():
        raise UserInputError(f"corpus name {name!r} is the shipped corpus's; one stored under it "
                             "would hide the shipped one from every command: choose another "
                             "name")
    return (root or corpora_dir()) / name


def _write_json(path: Path, data: dict) -> None:
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True, allow_nan=False))


def _vectors(matrix: np.ndarray) -> pa.Array:
    width = matrix.shape[1]
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).ravel(), type=pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, width)


def _part_table(mined: Mined) -> pa.Table:
    table = pa.Table.from_pandas(mined.decisions, preserve_index=False)
    table = table.append_column("state", _vectors(mined.states))
    return table.append_column("action", _vectors(mined.actions))


def _counts(decisions: pd.DataFrame, games: pd.DataFrame) -> dict:
    kinds: Counter[str] = Counter()
    for players in games["players"]:
        kinds.update(str(p.get("kind")) for p in json.loads(players))
    return {
        "games": len(games),
        "decisions": len(decisions),
        "applied": int(decisions["applied"].sum()),
        "action_types": dict(Counter(decisions["action_type"]).most_common()),
        "decisions_per_player_kind": dict(Counter(decisions["player_kind"]).most_common()),
        "players_per_kind": dict(kinds.most_common()),
        "agents": dict(Counter(decisions["agent_label"]).most_common()),
    }


def ingest(
    paths: Sequence[str | Path],
    *,
    name: str | Path,
    root: Path | None = None,
    on_error: OnError = "stop",
) -> IngestSummary:
    """Mine log files into corpus `name`, creating it or appending a new part to it.

    Holds the corpus's lock throughout (a second writer waits). A damaged corpus is rebuilt
    from its sources first (the logs given now, or those still where they were ingested from).
    """
    directory = store_dir(name, root=root)
    files = log_files(list(paths))
    hashes, versions = [], {}
    for path in files:
        try:
            versions[path] = file_version(check_input(path, what="log file"))
        except UserInputError as err:
            if not path.exists() and not path.is_symlink():
                raise UserInputError(f"{path}: no such log file") from None
            raise err from None
        hashes.append((path, sha256_file(path)))
    with store_lock(directory, what=f"corpus {directory.name}"):
        meta = read_meta(directory)
        _tidy(directory, meta)
        if meta is not None:
            problem = verify_files(directory, meta)
            if problem is not None:
                meta = _rebuild(directory, meta, problem, given={sha: p for p, sha in hashes})
        return _ingest_locked(directory, meta, hashes, on_error, versions)


def _ingest_locked(directory: Path, meta: dict | None, hashes: list[tuple[Path, str]],
                   on_error: OnError, versions: dict[Path, tuple]) -> IngestSummary:
    summary = IngestSummary(directory=directory)
    known_sha = {s["sha256"] for s in meta["sources"]} if meta else set()
    known_ids: dict[str, str] = {}
    expect = _Expect()
    if meta:
        games = _read_games(directory, meta, columns=["game_id", "source", "ruleset_sha256"])
        known_ids = dict(zip(games["game_id"].tolist(), games["source"].tolist(), strict=True))
        first_sha = games["ruleset_sha256"].iloc[0] if len(games) else ""
        expect = _Expect(meta["game"], meta["ruleset"], meta["feature_names"],
                         meta.get("ruleset_sha256") or str(first_sha))
    parts: list[Mined] = []
    sources: list[dict] = []
    for path, sha in hashes:
        if sha in known_sha:
            summary.already_ingested.append(str(path))
            log.info("%s already ingested (sha256 %s)", path, sha[:12])
            continue
        known_sha.add(sha)
        report = ReadReport()
        mined_here = _mine_source(path, expect, known_ids, on_error, report)
        # hashed, then mined: both must have read the same file
        check_unchanged(path, versions[path], again="ingest it again")
        summary.problems.extend(report.problems)
        parts.extend(mined_here)
        sources.append({"path": str(path.resolve()), "sha256": sha, "games": len(mined_here),
                        "decisions": sum(len(m) for m in mined_here),
                        "skipped_lines": len(report.problems)})
    if not parts:
        if meta is None:
            raise UserInputError("nothing to ingest: every log was already ingested")
        summary.total_games = meta["counts"]["games"]
        summary.total_decisions = meta["counts"]["decisions"]
        return summary
    new = concat(parts)
    final = _commit(directory, meta, new, sources, expect)
    summary.new_games = len(new.games)
    summary.new_decisions = len(new)
    summary.total_games = final["counts"]["games"]
    summary.total_decisions = final["counts"]["decisions"]
    return summary


@dataclass
class _Expect:
    """What every game of one corpus must share; set by the first game when the corpus is new."""

    game: str | None = None
    ruleset: str | None = None
    features: list[str] | None = None
    ruleset_sha256: str = ""


def _mine_source(path: Path, expect: _Expect, known_ids: dict[str, str], on_error: OnError,
                 report: ReadReport) -> list[Mined]:
    mined = []
    for record in read_games(path, on_error=on_error, expect_game=expect.game,
                             expect_ruleset=expect.ruleset, report=report):
        header, where = record.header, f"{path}:{record.line}"
        sha = str(header.get("ruleset_sha256", ""))
        if expect.features is None:
            _check_known_ruleset(header, where)
            expect.game, expect.ruleset = header["game"], header["ruleset"]
            expect.features = list(header["state_features"])
            expect.ruleset_sha256 = sha
        if (header["game"], header["ruleset"]) != (expect.game, expect.ruleset):
            raise UserInputError(f"{where}: log is for {header['game']!r} with ruleset "
                                 f"{header['ruleset']!r}; the corpus holds {expect.game!r} with "
                                 f"ruleset {expect.ruleset!r}")
        if sha and expect.ruleset_sha256 and sha != expect.ruleset_sha256:
            raise UserInputError(f"{where}: ruleset {header['ruleset']!r} with sha256 "
                                 f"{sha[:12]}..., but the corpus's games used "
                                 f"{expect.ruleset_sha256[:12]}... (another version of the "
                                 "ruleset); record into another corpus")
        expect.ruleset_sha256 = expect.ruleset_sha256 or sha
        if header["state_features"] != expect.features:
            raise UserInputError(f"{where}: state features differ from the corpus's "
                                 f"({len(header['state_features'])} vs {len(expect.features)})")
        if record.game_id in known_ids:
            raise UserInputError(f"{where}: duplicate game id {record.game_id!r} (already "
                                 f"from {known_ids[record.game_id]})")
        known_ids[record.game_id] = where
        if record.decisions:
            mined.append(mine_game(record))
    if not mined:
        raise UserInputError(f"{path}: no complete game with decisions in this log")
    return mined


def _check_known_ruleset(header: dict, where: str) -> None:
    """A log that names a ruleset known here must carry that ruleset's sha256: a corpus named
    after one ruleset must not hold vectors of another."""
    sha = str(header.get("ruleset_sha256", ""))
    if header["game"] != "civ" or not sha:
        return
    from nlmcs.games.civ.ruleset import resolve_ruleset_path

    path = resolve_ruleset_path(str(header["ruleset"]))
    if not path.is_file():
        return  # a ruleset this installation does not have: nothing to compare with
    actual = sha256_file(path)
    if actual != sha:
        raise UserInputError(f"{where}: log names ruleset {header['ruleset']!r} but its sha256 "
                             f"{sha[:12]}... is not that of {path} ({actual[:12]}...): it was "
                             "recorded with another ruleset of that name")


def _tidy(directory: Path, meta: dict | None) -> None:
    """Remove what interrupted writers left (the caller holds the lock): uncommitted parts, and
    temporary files here and in `logs/` (games a killed `corpus record` was writing)."""
    listed = {*meta["parts"], meta["games_file"]} if meta else set()
    for folder in (directory, directory / "logs"):
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            stale_part = (folder == directory and entry.name not in listed
                          and entry.name.startswith(("decisions-", "games-"))
                          and entry.name.endswith(".parquet"))
            temporary = entry.name.startswith(".") and entry.name.endswith(TEMP_SUFFIX)
            if (stale_part or temporary) and entry.is_file():
                entry.unlink()


def _write_part(directory: Path, name: str, mined: Mined) -> dict:
    with atomic_output(directory / name, binary=True) as fh:
        pq.write_table(_part_table(mined), fh, **PARQUET)
    return file_record(directory / name, len(mined))


def _write_games(directory: Path, name: str, games: pd.DataFrame) -> dict:
    with atomic_output(directory / name, binary=True) as fh:
        games.to_parquet(fh, index=False)
    return file_record(directory / name, len(games))


def _commit(directory: Path, meta: dict | None, new: Mined, sources: list[dict],
            expect: _Expect) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    parts = list(meta["parts"]) if meta else []
    number = len(parts) + 1
    part = f"decisions-{number:04d}.parquet"
    files = dict(meta.get("files") or {}) if meta else {}
    if meta and not meta.get("files"):  # a corpus from before checksums: record them now
        files = {p: file_record(directory / p, parquet_rows(directory / p)) for p in parts}
    files[part] = _write_part(directory, part, new)
    games = new.games
    if meta:
        games = pd.concat([_read_games(directory, meta), games], ignore_index=True)
        files.pop(meta["games_file"], None)
    games_file = f"games-{number:04d}.parquet"
    files[games_file] = _write_games(directory, games_file, games)
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    for s in sources:
        s.update(part=part, ingested_at=stamp)
    new_meta = _meta(directory, expect, [*parts, part], games_file, games,
                     [*(meta["sources"] if meta else []), *sources], files)
    _write_json(directory / "meta.json", new_meta)
    # The previous games file stays until the next writer's `_tidy`: a reader that read the
    # previous meta.json may be about to open it (it then reads the store as it was, whole).
    return new_meta


def _meta(directory: Path, expect: _Expect, parts: list[str], games_file: str,
          games: pd.DataFrame, sources: list[dict], files: dict) -> dict:
    decisions = pd.concat(
        [pd.read_parquet(directory / p, columns=["action_type", "player_kind", "agent_label",
                                                 "applied"]) for p in parts],
        ignore_index=True)
    return {
        "format": STORE_FORMAT,
        "name": directory.name,
        "game": expect.game,
        "ruleset": expect.ruleset,
        "ruleset_sha256": expect.ruleset_sha256,
        "feature_names": list(expect.features or []),
        "parts": parts,
        "games_file": games_file,
        "sources": sources,
        "counts": _counts(decisions, games),
        "files": files,
    }


def _rebuild(directory: Path, meta: dict, problem: str, *, given: dict[str, Path]) -> dict:
    """Mine every source of a damaged corpus again into fresh parts (same grouping), or refuse
    naming the sources that cannot be found. Returns the new meta."""
    available: dict[str, Path] = {}
    missing = []
    for source in meta["sources"]:
        sha, recorded = source["sha256"], Path(source["path"])
        if sha in given:
            available[sha] = given[sha]
        elif recorded.is_file() and sha256_file(recorded) == sha:
            available[sha] = recorded
        else:
            missing.append(str(recorded))
    if missing or not meta["sources"]:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3
                                          else "")
        raise UserInputError(f"{problem}; corpus {directory.name} cannot be rebuilt: its source "
                             f"logs are gone or changed ({shown or 'none recorded'}); ingest "
                             "them again, or delete the corpus and record it again")
    notice.info("%s; rebuilding corpus %s from its %d source logs", problem, directory.name,
                len(meta["sources"]))
    expect = _Expect()
    known_ids: dict[str, str] = {}
    files: dict[str, dict] = {}
    games = []
    for part in meta["parts"]:
        mined = []
        for source in (s for s in meta["sources"] if s.get("part") == part):
            on_error: OnError = "skip" if source.get("skipped_lines") else "stop"
            mined += _mine_source(available[source["sha256"]], expect, known_ids, on_error,
                                  ReadReport())
        if not mined:
            raise UserInputError(f"{problem}; corpus {directory.name} cannot be rebuilt: no "
                                 f"source is recorded for {part}; delete the corpus and record "
                                 "it again")
        joined = concat(mined)
        files[part] = _write_part(directory, part, joined)
        games.append(joined.games)
    all_games = pd.concat(games, ignore_index=True)
    files[meta["games_file"]] = _write_games(directory, meta["games_file"], all_games)
    new_meta = _meta(directory, expect, list(meta["parts"]), meta["games_file"], all_games,
                     list(meta["sources"]), files)
    _write_json(directory / "meta.json", new_meta)
    return new_meta


def _read_games(directory: Path, meta: dict, columns: list[str] | None = None) -> pd.DataFrame:
    path = directory / meta["games_file"]
    try:
        games = pd.read_parquet(path, columns=columns)
    except (OSError, pa.ArrowException, ValueError, KeyError) as err:
        raise UserInputError(f"{path}: unreadable games file ({err})") from None
    if columns is None and "chance" not in games:  # a store from before logs named the rule
        games["chance"] = ""
    return games


READ_ATTEMPTS = 3
"""Reads of a corpus a writer committed to meanwhile, before a failed read is taken as damage."""


def load_corpus(name_or_dir: str | Path, *, root: Path | None = None) -> StoredCorpus:
    """Read a stored corpus (only its committed parts, checked against meta.json);
    `UserInputError` if missing, empty or damaged. A read that fails while a writer commits
    (meta.json changed under it) is read again from the new meta.json: a reader sees the store
    whole, before or after the commit, never as damaged."""
    directory = corpus_dir(name_or_dir, root=root)
    for attempt in range(READ_ATTEMPTS):
        meta = read_meta(directory)
        try:
            return _load(directory, meta)
        except UserInputError:
            if attempt + 1 == READ_ATTEMPTS or read_meta(directory) == meta:
                raise
    raise AssertionError("unreachable")


def _load(directory: Path, meta: dict | None) -> StoredCorpus:
    if meta is None:
        raise UserInputError(f"no corpus at {directory} (run `nlmcs corpus ingest` first)")
    if not meta["parts"] or meta["counts"]["decisions"] == 0:
        raise UserInputError(f"{directory}: the corpus is empty")
    problem = verify_files(directory, meta)
    if problem is not None:
        raise UserInputError(f"{problem}; ingest any of its logs again (`nlmcs corpus ingest "
                             f"LOG --name {directory.name}`) to rebuild it")
    width = len(meta["feature_names"])
    tables = []
    for part in meta["parts"]:
        try:
            table = pq.read_table(directory / part)
        except (OSError, pa.ArrowException) as err:
            raise UserInputError(f"{directory / part}: unreadable corpus part ({err})") from None
        bad = _part_problem(table, width)
        if bad is not None:
            raise UserInputError(f"{directory / part}: damaged ({bad})")
        tables.append(table)
    try:
        table = pa.concat_tables(tables)
    except pa.ArrowException as err:
        raise UserInputError(f"{directory}: parts do not fit together ({err})") from None
    states = _matrix(table["state"], width)
    actions = _matrix(table["action"], width)
    decisions = table.drop_columns(["state", "action"]).to_pandas()
    return StoredCorpus(
        name=directory.name, directory=directory, meta=meta, decisions=decisions,
        states=states, actions=actions, games=_read_games(directory, meta),
    )


def _part_problem(table: pa.Table, width: int) -> str | None:
    from corpus.mine import DECISION_COLUMNS

    missing = [c for c in (*DECISION_COLUMNS, "state", "action") if c not in table.column_names]
    if missing:
        return f"missing columns {', '.join(missing)}"
    for column in ("state", "action"):
        kind = table.schema.field(column).type
        if not (pa.types.is_fixed_size_list(kind) and kind.list_size == width):
            return f"column {column} is {kind}, not {width} numbers per row"
    return None


def _matrix(column: pa.ChunkedArray, width: int) -> np.ndarray:
    flat = np.concatenate([c.flatten().to_numpy(zero_copy_only=False) for c in column.chunks])
    return flat.astype(np.float32, copy=False).reshape(-1, width)
