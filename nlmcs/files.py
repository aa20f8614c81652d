"""Files the user names: checked before reading, written whole or not at all.

Reading: a path given on the command line may be missing, a folder, a FIFO that would block
forever, a device, a symbolic-link loop or far larger than any sane input. `check_input` says
which in one `UserInputError` line naming the path, before a byte is read.

Writing: an output appears only complete (a temporary file beside it, fsynced, then renamed
over it), with the permissions an ordinary file gets (0666 less the umask, where `mkstemp`
alone would leave 0600). `check_output` refuses an output that cannot be written before any
work is done, so a long run never fails at its last step on a bad path.

Stores (manuals, corpora) keep a `file_record` of each data file in their metadata, so a file
damaged after it was written is found before it is read.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import os
import signal
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import IO, BinaryIO

from nlmcs.errors import UserInputError

TEMP_SUFFIX = ".tmp"
"""Temporary outputs are hidden (`.NAME.XXXX.tmp`) and end with this."""
MAX_LINE_BYTES = 64_000_000
"""Longest line a JSON-lines reader takes (a state of the largest map is a few MB)."""


def _special_kind(mode: int) -> str | None:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return None


def _stat_problem(err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return "symbolic link loop"
    if err.errno == errno.ENOENT:
        return "no such file or directory"
    if err.errno == errno.ENOTDIR:
        return "a part of the path is not a directory"
    if err.errno == errno.EACCES:
        return "permission denied"
    if err.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return err.strerror or str(err)


def check_input(path: str | Path, *, what: str = "file", max_bytes: int | None = None,
                allow_dir: bool = False) -> os.stat_result:
    """Stat `path` (following links) and refuse what cannot be read as a regular `what`.

    Returns the stat result; raises `UserInputError` for a missing path, a link loop, a folder
    (unless `allow_dir`), a FIFO, socket or device, an unreadable file, or one over `max_bytes`.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as err:
        raise UserInputError(f"{path}: {_stat_problem(err)}") from None
    except ValueError:  # a NUL byte in the name
        raise UserInputError(f"{path!r}: not a valid file name") from None
    if stat.S_ISDIR(info.st_mode):
        if allow_dir:
            return info
        raise UserInputError(f"{path}: is a directory, expected a {what}")
    special = _special_kind(info.st_mode)
    if special is not None:
        raise UserInputError(f"{path}: is {special}, not a regular {what}")
    if not os.access(path, os.R_OK):
        raise UserInputError(f"{path}: permission denied")
    if max_bytes is not None and info.st_size > max_bytes:
        raise UserInputError(f"{path}: {info.st_size / 1e6:.1f} MB is over the "
                             f"{max_bytes / 1e6:g} MB limit for a {what}")
    return info


def file_version(st: os.stat_result) -> tuple[int, int, int, int]:
    """What says a file is still the one that was read: device, inode, size, modification time
    (a file rewritten, appended to or replaced by a rename changes one of them)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_unchanged(path: str | Path, version: tuple[int, int, int, int], *,
                    again: str) -> None:
    """Refuse a file that changed since `version` was taken (before it was read): what was read
    may be half of the old file and half of the new one. `again` says what to do."""
    try:
        now = file_version(os.stat(path))
    except OSError:
        now = None
    if now != version:
        raise UserInputError(f"{path}: changed while it was being read; {again} once it is "
                             "complete (nothing was stored)")


def read_document(path: str | Path, *, what: str, max_bytes: int, toml: bool = False) -> dict:
    """The JSON object (or, with `toml`, the TOML table) in a user's file, checked first
    (`check_input`); a file that holds none is one `UserInputError` naming it."""
    import json
    import tomllib

    check_input(path, what=what, max_bytes=max_bytes)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UserInputError(f"{path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text) if toml else json.loads(text)
    except json.JSONDecodeError as err:
        raise UserInputError(f"{path}: not valid JSON (line {err.lineno}: {err.msg})") from None
    except tomllib.TOMLDecodeError as err:
        raise UserInputError(f"{path}: not valid TOML ({err})") from None
    except RecursionError:
        raise UserInputError(f"{path}: not a {what} (nested too deeply)") from None
    if not isinstance(data, dict):
        raise UserInputError(f"{path}: expected a JSON object")
    return data


def check_output(path: str | Path, *, what: str = "file", make_parent: bool = False) -> Path:
    """Refuse an output file that cannot be written: a folder, a special file, a missing (unless
    `make_parent` creates it) or read-only parent folder. Called before the work that produces
    the output."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise UserInputError(f"{path}: {_stat_problem(err)}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise UserInputError(f"{path}: is a directory; give a {what} name")
    if info is not None and _special_kind(info.st_mode) is not None:
        raise UserInputError(f"{path}: is {_special_kind(info.st_mode)}; give a {what} name")
    parent = path.parent
    if make_parent and not parent.exists():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserInputError(f"{path}: cannot create folder {parent} "
                                 f"({_stat_problem(err)})") from None
    if not parent.is_dir():
        raise UserInputError(f"{path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserInputError(f"{path}: folder {parent} is not writable")
    return path


def check_distinct(inputs: dict[str, str | Path | None], outputs: dict[str, str | Path | None]
                   ) -> None:
    """Refuse, before any work, an output that is one of the inputs or another output, by any
    spelling of its path or through a link (`--html d.jsonl` once overwrote the log it was to
    report on), or that lies inside a folder read as input (`relevance report RUN --html
    RUN/games.jsonl` once replaced every stored game). Keys name the options in the message;
    None values are skipped."""
    seen: dict[object, str] = {}
    folders = [(option, Path(path)) for option, path in inputs.items()
               if path is not None and _is_dir(Path(path))]
    for role, named in (("input", inputs), ("output", outputs)):
        for option, path in named.items():
            if path is None:
                continue
            key = _identity(Path(path))
            if key in seen and role == "output":
                raise UserInputError(f"{path}: {option} would write over {seen[key]}; give "
                                     "another file name")
            if role == "output":
                for name, folder in folders:
                    if _inside(Path(path), folder):
                        raise UserInputError(f"{path}: {option} would write inside {folder}, "
                                             f"which {name} reads; write it outside that folder")
            seen.setdefault(key, f"{option} ({path})")


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file, by any spelling or through a link."""
    return _identity(Path(a)) == _identity(Path(b))


def _is_dir(path: Path) -> bool:
    """`Path.is_dir`, false for a path the system cannot look up (a name too long: the input
    check that follows names the problem)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it, by resolved paths (links followed)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def _identity(path: Path):
    """The same key for every spelling of one file: its inode where it exists, else its
    resolved path (links in the folders followed)."""
    try:
        info = path.stat()
        return ("inode", info.st_dev, info.st_ino)
    except OSError:
        pass
    try:
        return ("path", str(path.resolve()))
    except (OSError, RuntimeError):  # a link loop: the input check that follows names it
        return ("path", os.path.abspath(path))


@lru_cache(maxsize=1)
def _umask() -> int:
    # os.umask can only be read by setting it; done once, before any worker threads write.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """Permissions of a newly written ordinary file: 0666 less the process umask."""
    return 0o666 & ~_umask()


@contextlib.contextmanager
def held_interrupts() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block ends, then deliver them.

    An interrupt raised between creating a temporary and handing it to its owner (or between
    closing it and renaming it) would leave it behind; signal handlers run in the main thread
    only, so elsewhere this holds nothing and needs to hold nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous: dict[int, object] = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda s, _frame: held.append(s))
        yield
    finally:
        for signum, handler in previous.items():  # None: a handler not set from Python
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    if held:
        signal.raise_signal(held[0])  # now the restored handler raises it


def _temp_prefix(path: Path) -> str:
    """`.NAME.HOST-PID.`: the writer is named, so a later writer can tell a temporary whose
    process died (a SIGKILL leaves it) from one still being written."""
    return f".{path.name}.{_HOST}-{os.getpid()}."


_HOST = socket.gethostname().replace(".", "_").replace("-", "_")[:40] or "host"


def sweep_orphans(path: Path) -> list[Path]:
    """Remove the temporaries of `path` left by writers on this machine that no longer run;
    returns them. Another machine's (a shared folder) are left: their pids mean nothing here."""
    return _sweep(path.parent, path.name)


def sweep_folder(folder: Path) -> list[Path]:
    """`sweep_orphans` for every file of `folder` (a store whose workers were stopped)."""
    return _sweep(folder, None)


def _sweep(folder: Path, name_of: str | None) -> list[Path]:
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
            continue
        # `.NAME.HOST-PID.XXXX.tmp` (`_temp_prefix`): the host has no "-", mkstemp's XXXX no "."
        head, _, pid = name[:-len(TEMP_SUFFIX)].rsplit(".", 1)[0].rpartition("-")
        ours = (head.endswith(f".{_HOST}") and len(head) > len(_HOST) + 2 if name_of is None
                else head == f".{name_of}.{_HOST}")
        if not ours or not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


class AtomicFile:
    """A temporary file beside `path` that replaces `path` on `commit()` (fsynced first) and
    disappears on `discard()`. Either is final; a later call does nothing. Creating, committing
    and discarding hold interrupts, and a temporary still open at exit is removed, so no
    interrupt, wherever it lands, leaves a hidden temporary behind."""

    def __init__(self, path: str | Path, *, binary: bool = False, newline: str | None = None):
        self.path = Path(path)
        self.done = True  # nothing to commit or discard until the temporary exists
        sweep_orphans(self.path)
        try:
            with held_interrupts():
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=_temp_prefix(self.path),
                                           suffix=TEMP_SUFFIX)
                self.tmp = Path(tmp)
                self.file: IO = os.fdopen(fd, "wb" if binary else "w",
                                          encoding=None if binary else "utf-8", newline=newline)
                self.done = False
                _OPEN.add(self)
                os.fchmod(fd, file_mode())
        except BaseException:
            self.discard()  # an interrupt held during creation: the temporary goes with it
            raise

    def commit(self) -> Path:
        """Rename the finished file over `path`. The content was complete when this was called,
        so an interrupt (Ctrl-C, SIGTERM) arriving meanwhile is delivered after the rename, and
        neither the output nor a hidden temporary is lost; an I/O error discards it."""
        if not self.done:
            with held_interrupts():
                try:
                    self.file.flush()
                    os.fsync(self.file.fileno())
                except BaseException:
                    self.discard()
                    raise
                self.done = True
                _OPEN.discard(self)
                self.file.close()
                os.replace(self.tmp, self.path)
        return self.path

    def discard(self) -> None:
        if not self.done:
            with held_interrupts():
                self.done = True
                _OPEN.discard(self)
                with contextlib.suppress(OSError):  # a full disk fails the close's flush too
                    self.file.close()
                with contextlib.suppress(FileNotFoundError):
                    self.tmp.unlink()


_OPEN: set[AtomicFile] = set()
"""Temporaries neither committed nor discarded. One left at exit was never handed to its owner
(an interrupt landed between creating it and the owner's `try`), so it is removed."""


@atexit.register
def _discard_orphans() -> None:
    for orphan in list(_OPEN):
        orphan.discard()


def remove_open_temporaries() -> None:
    """Unlink every temporary still being written, for a process about to die of a signal
    (a worker's SIGTERM runs no atexit). Only unlinks: closing a file from a handler that
    interrupted its own write would fail."""
    for orphan in list(_OPEN):
        with contextlib.suppress(OSError):
            orphan.tmp.unlink()


@contextlib.contextmanager
def atomic_output(path: str | Path, *, binary: bool = False, newline: str | None = None):
    """`with atomic_output(p) as fh:` writes `p` whole when the block ends, or not at all."""
    out = None
    try:
        out = AtomicFile(path, binary=binary, newline=newline)
        yield out.file
        out.commit()
    except OSError as err:
        if out is not None:
            out.discard()
        if err.filename is None:  # a write into the open file names none: say which output
            raise type(err)(err.errno, err.strerror, str(path)) from err
        raise
    except BaseException:
        if out is not None:
            out.discard()
        raise


def bounded_lines(handle: BinaryIO, max_bytes: int = MAX_LINE_BYTES
                  ) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of a file opened in binary mode, streamed. A line longer than
    `max_bytes` comes as None and is skipped in bounded memory, so a file without line ends
    (a disk image, a gigabyte of zeros) cannot fill the memory."""
    number = 0
    while raw := handle.readline(max_bytes + 1):
        number += 1
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = handle.readline(1 << 20)
            yield number, None
        else:
            yield number, raw


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Replace `path` with `data` by way of a temporary file in the same folder."""
    with atomic_output(path, binary=isinstance(data, bytes)) as fh:
        fh.write(data)
    return Path(path)


def write_csv_rows(path: str | Path, rows: list[dict], columns: tuple[str, ...] = ()) -> Path:
    """Replace `path` with a CSV of `rows` (columns: `columns`, then every other key in order
    of first use; a table without rows still has its header)."""
    import csv

    keys: list[str] = list(columns)
    for row in rows:
        keys += [k for k in row if k not in keys]
    with atomic_output(path, newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    return Path(path)


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in blocks (bounded memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def file_record(path: str | Path, rows: int) -> dict:
    """What a store's metadata keeps about one of its data files: sha256, size and rows."""
    return {"sha256": sha256_file(path), "bytes": os.stat(path).st_size, "rows": int(rows)}


def recorded_file_problem(path: str | Path, record: dict | None, *, hashes: bool = True
                          ) -> str | None:
    """Why `path` no longer matches its `file_record` (missing, resized, rewritten), or None.
    Without a record (a store from before the checksums) only its presence is checked;
    `hashes=False` compares sizes only, for a quick look."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return f"{path}: missing"
    except OSError as err:
        return f"{path}: {err.strerror or err}"
    if record is not None:
        if size != record["bytes"]:
            return f"{path}: damaged ({size} bytes, meta.json says {record['bytes']})"
        if hashes and sha256_file(path) != record["sha256"]:
            return f"{path}: damaged (its sha256 differs from meta.json)"
    return None


def parquet_rows(path: str | Path) -> int | None:
    """The row count in a parquet file's footer; None when it is not a readable parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException, ValueError):
        return None
