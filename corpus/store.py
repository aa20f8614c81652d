"""A stored corpus: mined decisions as columnar parquet parts plus a meta.json that commits them.

Layout of `<corpora_dir>/<name>/`:
- `decisions-NNNN.parquet`: one part per ingest; decision columns (see `corpus.mine`) plus `state`
  and `action`, fixed-size float32 lists in the frozen feature order kept in meta.json.
- `games-NNNN.parquet`: one row per game (ids, players, result, source file), rewritten whole at
  each ingest under a new number.
- `meta.json`: counts, the feature names, every source file with its sha256, and the list of parts.

meta.json is written last and atomically, so it is the commit point: a crash mid-ingest leaves an
unlisted part file that loading ignores and the next ingest removes; the corpus is never seen
half-written. Re-ingesting a file whose sha256 is already listed is a no-op; a game id already in
the corpus (or twice in the new logs) is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
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
from corpus.mine import Mined, concat, mine_game
from nlmcs.errors import UserInputError
from nlmcs.paths import corpora_dir

log = logging.getLogger(__name__)

STORE_FORMAT = "nlmcs-corpus-store/1"
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
    """A name maps to `<root or corpora_dir()>/<name>`; a path with a separator is used as is."""
    text = str(name_or_dir)
    if "/" in text or os.sep in text or Path(text).is_absolute():
        return Path(text)
    if not text or text.startswith("."):
        raise UserInputError(f"bad corpus name {text!r}")
    return (root or corpora_dir()) / text


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _atomic_write(path: Path, write) -> None:
    """Call `write(tmp_path)`, then rename the temporary file over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; stored artifacts are ordinary files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _write_json(path: Path, data: dict) -> None:
    _atomic_write(path, lambda tmp: tmp.write_text(json.dumps(data, indent=1, sort_keys=True)))


def _read_meta(directory: Path) -> dict | None:
    path = directory / "meta.json"
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserInputError(f"{path}: corrupt corpus metadata ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != STORE_FORMAT:
        raise UserInputError(f"{path}: not an nlmcs corpus (format {meta.get('format')!r})")
    return meta


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
    """Mine log files into corpus `name`, creating it or appending a new part to it."""
    directory = corpus_dir(name, root=root)
    meta = _read_meta(directory)
    summary = IngestSummary(directory=directory)
    known_sha = {s["sha256"] for s in meta["sources"]} if meta else set()
    known_ids: dict[str, str] = {}
    if meta:
        old_games = pq.read_table(directory / meta["games_file"], columns=["game_id", "source"])
        known_ids = dict(zip(old_games["game_id"].to_pylist(), old_games["source"].to_pylist(),
                             strict=True))
    expect = _Expect(meta["game"], meta["ruleset"], meta["feature_names"]) if meta else _Expect()
    parts: list[Mined] = []
    sources: list[dict] = []
    for path in log_files(list(paths)):
        if not path.is_file():
            raise UserInputError(f"{path}: no such log file")
        sha = sha256_file(path)
        if sha in known_sha:
            summary.already_ingested.append(str(path))
            log.info("%s already ingested (sha256 %s)", path, sha[:12])
            continue
        known_sha.add(sha)
        report = ReadReport()
        mined_here = _mine_source(path, expect, known_ids, on_error, report)
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
    _commit(directory, meta, new, sources, game=expect.game, ruleset=expect.ruleset,
            features=expect.features)
    summary.new_games = len(new.games)
    summary.new_decisions = len(new)
    final = _read_meta(directory)
    summary.total_games = final["counts"]["games"]
    summary.total_decisions = final["counts"]["decisions"]
    return summary


@dataclass
class _Expect:
    """What every game of one corpus must share; set by the first game when the corpus is new."""

    game: str | None = None
    ruleset: str | None = None
    features: list[str] | None = None


def _mine_source(path: Path, expect: _Expect, known_ids: dict[str, str], on_error: OnError,
                 report: ReadReport) -> list[Mined]:
    mined = []
    for record in read_games(path, on_error=on_error, expect_game=expect.game,
                             expect_ruleset=expect.ruleset, report=report):
        header, where = record.header, f"{path}:{record.line}"
        if expect.features is None:
            expect.game, expect.ruleset = header["game"], header["ruleset"]
            expect.features = list(header["state_features"])
        if (header["game"], header["ruleset"]) != (expect.game, expect.ruleset):
            raise UserInputError(f"{where}: log is for {header['game']!r} with ruleset "
                                 f"{header['ruleset']!r}; the corpus holds {expect.game!r} with "
                                 f"ruleset {expect.ruleset!r}")
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


def _commit(directory: Path, meta: dict | None, new: Mined, sources: list[dict], *, game: str,
            ruleset: str, features: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    listed = set(meta["parts"]) if meta else set()
    for stale in [*directory.glob("decisions-*.parquet"), *directory.glob("games-*.parquet")]:
        if stale.name not in listed and (not meta or stale.name != meta["games_file"]):
            stale.unlink()  # left by an interrupted ingest, never committed
    number = len(listed) + 1
    part = f"decisions-{number:04d}.parquet"
    _atomic_write(directory / part, lambda tmp: pq.write_table(_part_table(new), tmp, **PARQUET))
    games = new.games
    if meta:
        games = pd.concat([pd.read_parquet(directory / meta["games_file"]), games],
                          ignore_index=True)
    games_file = f"games-{number:04d}.parquet"
    _atomic_write(directory / games_file, lambda tmp: games.to_parquet(tmp, index=False))
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    for s in sources:
        s.update(part=part, ingested_at=stamp)
    parts = [*meta["parts"], part] if meta else [part]
    decisions = pd.concat(
        [pd.read_parquet(directory / p, columns=["action_type", "player_kind", "agent_label",
                                                 "applied"]) for p in parts],
        ignore_index=True)
    new_meta = {
        "format": STORE_FORMAT,
        "name": directory.name,
        "game": game,
        "ruleset": ruleset,
        "feature_names": list(features),
        "parts": parts,
        "games_file": games_file,
        "sources": [*(meta["sources"] if meta else []), *sources],
        "counts": _counts(decisions, games),
    }
    _write_json(directory / "meta.json", new_meta)
    if meta:
        (directory / meta["games_file"]).unlink()


def load_corpus(name_or_dir: str | Path, *, root: Path | None = None) -> StoredCorpus:
    """Read a stored corpus (only its committed parts); `UserInputError` if missing or empty."""
    directory = corpus_dir(name_or_dir, root=root)
    meta = _read_meta(directory)
    if meta is None:
        raise UserInputError(f"no corpus at {directory} (run `nlmcs corpus ingest` first)")
    if not meta["parts"] or meta["counts"]["decisions"] == 0:
        raise UserInputError(f"{directory}: the corpus is empty")
    width = len(meta["feature_names"])
    tables = []
    for part in meta["parts"]:
        try:
            tables.append(pq.read_table(directory / part))
        except (OSError, pa.ArrowInvalid) as err:
            raise UserInputError(f"{directory / part}: unreadable corpus part ({err})") from None
    table = pa.concat_tables(tables)
    states = _matrix(table["state"], width)
    actions = _matrix(table["action"], width)
    decisions = table.drop_columns(["state", "action"]).to_pandas()
    return StoredCorpus(
        name=directory.name, directory=directory, meta=meta, decisions=decisions,
        states=states, actions=actions, games=pd.read_parquet(directory / meta["games_file"]),
    )


def _matrix(column: pa.ChunkedArray, width: int) -> np.ndarray:
    flat = np.concatenate([c.flatten().to_numpy(zero_copy_only=False) for c in column.chunks])
    return flat.astype(np.float32, copy=False).reshape(-1, width)
