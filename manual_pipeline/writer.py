"""Writing a stored manual: one writer per name, a complete artifact or none, crashes repaired.

`ArtifactWriter` writes into a hidden `.NAME.tmp-XXXX` directory beside the target, meta.json
last (so a temporary directory with a meta.json is complete), then swaps it in with two renames:
the old artifact to `.NAME.old-XXXX`, the new one to NAME. A process killed between the two
renames leaves no NAME at all; `recover`, run under the store lock by every writer and by a
reader that finds the name missing, moves the newest complete copy back and removes every other
leftover of killed runs. The lock (`nlmcs.locking`) keeps two writers of one name apart.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from manual_pipeline.artifact import (
    BOOL_COLUMNS,
    FORMAT,
    INT_COLUMNS,
    META_FILE,
    SENTENCE_COLUMNS,
    SENTENCES_FILE,
    TOKEN_COLUMNS,
    TOKENS_FILE,
)
from manual_pipeline.errors import ManualError
from nlmcs.errors import UserInputError
from nlmcs.files import file_record
from nlmcs.locking import store_lock, try_store_lock

notice = logging.getLogger("nlmcs.notice")

TMP_TAG = ".tmp-"
OLD_TAG = ".old-"


def leftovers(target: Path) -> list[Path]:
    """Hidden directories of unfinished writes of `target`, newest first."""
    target = Path(target)
    prefixes = (f".{target.name}{TMP_TAG}", f".{target.name}{OLD_TAG}")
    try:
        found = [p for p in target.parent.iterdir() if p.name.startswith(prefixes)]
    except OSError:
        return []
    return sorted(found, key=_mtime, reverse=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def recover(target: Path) -> Path | None:
    """Put back an artifact whose swap was cut short and remove other leftovers (the caller
    holds the store lock). Returns the directory restored, if any."""
    target = Path(target)
    found = leftovers(target)
    restored = None
    if not target.exists():
        # A temporary directory with its meta.json is the newer, complete artifact; an .old one
        # is the previous artifact. Prefer the newer.
        complete = [p for p in found if (p / META_FILE).is_file()]
        complete.sort(key=lambda p: (TMP_TAG in p.name, _mtime(p)), reverse=True)
        if complete:
            os.replace(complete[0], target)
            restored = complete[0]
            notice.info("restored %s (an earlier write was interrupted)", target)
    for path in found:
        if path != restored:
            shutil.rmtree(path, ignore_errors=True)
    return restored


@contextlib.contextmanager
def writing(target: Path) -> Iterator[None]:
    """Hold the lock of the manual at `target`, after repairing what killed writers left."""
    target = Path(target)
    try:
        with store_lock(target, what=f"manual {target.name}"):
            recover(target)
            yield
    except UserInputError as err:
        if isinstance(err, ManualError):
            raise
        raise ManualError(str(err)) from None


def restore_if_vanished(target: Path) -> None:
    """A reader's repair: if `target` is missing but a killed write left a copy, put it back."""
    target = Path(target)
    if target.exists() or not leftovers(target):
        return
    with writing(target):
        pass


def tidy(root: Path) -> None:
    """Repair every manual under `root` that a killed write left behind, skipping any that a
    running writer holds."""
    names = set()
    try:
        entries = list(Path(root).iterdir())
    except OSError:
        return
    for entry in entries:
        for tag in (TMP_TAG, OLD_TAG):
            if entry.name.startswith(".") and tag in entry.name:
                names.add(entry.name[1:].rsplit(tag, 1)[0])
    for name in sorted(names):
        lock = try_store_lock(Path(root) / name)
        if lock is None:
            continue
        try:
            recover(Path(root) / name)
        finally:
            lock.release()


class ArtifactWriter:
    """Write one stored manual into a temporary directory and swap it into place at the end.

    Use as a context manager: the store lock is held from construction to exit; on an
    exception the temporary directory is removed and whatever was stored at `target` before
    stays untouched. Parquet files are written in row groups, so memory stays bounded however
    long the manual is.
    """

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        _check_replaceable(self.target)
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(writing(self.target))
        parent = self.target.parent
        try:
            _check_replaceable(self.target)
            self.tmp = parent / f".{self.target.name}{TMP_TAG}{uuid.uuid4().hex[:8]}"
            self.tmp.mkdir()
        except OSError as err:
            self._stack.close()
            raise ManualError(f"cannot write under {parent}: {err.strerror or err}") from None
        except BaseException:
            self._stack.close()
            raise
        self._writers: dict[str, Any] = {}
        self._rows = {SENTENCES_FILE: 0, TOKENS_FILE: 0}

    def __enter__(self) -> ArtifactWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            for writer in self._writers.values():
                writer.close()
            self._writers.clear()
            if exc_type is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
        finally:
            self._stack.close()

    def append(self, sentences: Mapping[str, Sequence], tokens: Mapping[str, Sequence]) -> None:
        """Append a batch: column name -> values, for sentences and for their tokens."""
        self._append(SENTENCES_FILE, SENTENCE_COLUMNS, sentences)
        self._append(TOKENS_FILE, TOKEN_COLUMNS, tokens)

    def _append(self, file: str, columns: Sequence[str], batch: Mapping[str, Sequence]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = _schema(columns)
        table = pa.Table.from_pydict({c: batch[c] for c in columns}, schema=schema)
        if file not in self._writers:
            self._writers[file] = pq.ParquetWriter(self.tmp / file, schema, compression="zstd")
        self._writers[file].write_table(table)
        self._rows[file] += table.num_rows

    def commit(self, meta: Mapping[str, Any]) -> Path:
        """Close the parquet files, write meta.json with their checksums, move into place."""
        for file, columns in ((SENTENCES_FILE, SENTENCE_COLUMNS), (TOKENS_FILE, TOKEN_COLUMNS)):
            if file not in self._writers:
                self._append(file, columns, {c: [] for c in columns})
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        files = {f: file_record(self.tmp / f, rows) for f, rows in self._rows.items()}
        part = self.tmp / f"{META_FILE}.part"
        with open(part, "w", encoding="utf-8") as fh:
            json.dump({"format": FORMAT, **meta, "files": files}, fh, indent=2, sort_keys=False)
            fh.write("\n")
        os.replace(part, self.tmp / META_FILE)  # the temporary directory is complete from here
        _swap_into_place(self.tmp, self.target)
        return self.target


def _schema(columns: Sequence[str]):
    import pyarrow as pa

    def kind(column: str):
        if column in INT_COLUMNS:
            return pa.int64()
        if column in BOOL_COLUMNS:
            return pa.bool_()
        return pa.string()

    return pa.schema([(c, kind(c)) for c in columns])


def _check_replaceable(target: Path) -> None:
    """Refuse to replace a directory that holds something other than a stored manual."""
    if target.exists() and not target.is_dir():
        raise ManualError(f"{target}: exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not (target / META_FILE).is_file():
        raise ManualError(f"{target}: exists and is not a stored manual; choose another directory")


def _swap_into_place(tmp: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = target.parent / f".{target.name}{OLD_TAG}{uuid.uuid4().hex[:8]}"
        os.replace(target, old)
    try:
        os.replace(tmp, target)
    except OSError:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
