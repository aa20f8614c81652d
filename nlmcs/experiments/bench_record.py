"""Benchmark figures as CSV rows that keep the machine's state beside the numbers.

Timings on a shared or virtual machine drift from hour to hour, so a figure means little without
when it was taken, on what, and how busy the machine was. `nlmcs bench engine`, `search` and
`step` print the load average around their run and, with `--out`, append one row per
measurement to a CSV with these columns first; runs made back to back (the only ones that
compare) then sit in one table.
"""

from __future__ import annotations

import csv
import os
import platform
import socket
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from nlmcs import __version__
from nlmcs.errors import UserInputError
from nlmcs.files import check_input, check_output, write_csv_rows
from nlmcs.locking import store_lock

CONTEXT_COLUMNS = ("recorded_at", "host", "cpus", "python", "version", "load_before",
                   "load_after")
"""Who and when: UTC time the measurement ended, host, CPUs, Python and nlmcs versions, and the
1-minute load average before and after it."""

MAX_BYTES = 64_000_000
"""A benchmark table grows by a row per measurement; anything far larger is not one."""


def load_average() -> float:
    """The 1-minute load average (NaN where the system does not report one)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def context(load_before: float) -> dict:
    """The context columns of a measurement that started at `load_before` and ends now."""
    return {
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "version": __version__,
        "load_before": load_before,
        "load_after": load_average(),
    }


class BenchTable:
    """An --out CSV, checked before anything is timed: a new file, or one this benchmark wrote
    (the same columns, in order, or the first of them: an older version's table). `append`
    reads it again and rewrites it atomically with one more row, under the file's lock, so an
    interrupted run keeps every finished measurement, never a half-written file, and two runs
    appending to one table lose no row."""

    def __init__(self, path: str | Path, columns: Sequence[str]):
        self.path = check_output(path, what="CSV file")
        self.columns = [*CONTEXT_COLUMNS, *columns]
        self._existing()

    def _existing(self) -> list[dict]:
        if not self.path.exists():
            return []
        check_input(self.path, what="CSV file", max_bytes=MAX_BYTES)
        try:
            with self.path.open(newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                header = reader.fieldnames
                rows = list(reader)
        except (UnicodeDecodeError, csv.Error) as err:
            raise UserInputError(f"{self.path}: not a CSV file ({err})") from None
        older = header is not None and len(header) < len(self.columns) and \
            header == self.columns[:len(header)]  # fmt: skip
        if header != self.columns and not older:
            raise UserInputError(f"{self.path}: its columns are not this benchmark's "
                                 "(another benchmark's table?); give a new --out file")
        if any(None in row or None in row.values() for row in rows):
            raise UserInputError(f"{self.path}: a row has more or fewer fields than the header")
        # A table an older version wrote, before columns were added at the end: its rows get
        # empty cells there.
        return [{c: row.get(c, "") for c in self.columns} for row in rows]

    def append(self, row: dict) -> None:
        if list(row) != self.columns:
            raise ValueError(f"row columns {list(row)} are not the table's {self.columns}")
        with store_lock(self.path, what=f"benchmark table {self.path}"):
            write_csv_rows(self.path, [*self._existing(), row])


class BenchLog:
    """Consecutive measurements of one benchmark run: each row gets its context (the load
    average the last one ended at, before; now, after) and goes to the --out table if any."""

    def __init__(self, out: str | Path | None, columns: Sequence[str]):
        self.table = None if out is None else BenchTable(out, columns)
        self.first_load = self.load = load_average()

    def record(self, fields: dict) -> dict:
        row = {**context(self.load), **fields}
        self.load = row["load_after"]
        if self.table is not None:
            self.table.append(row)
        return row

    def summary(self) -> str:
        """The load average around the run, and where its rows went."""
        text = f"load average {self.first_load} before, {self.load} after"
        if self.table is not None:
            text += f"; rows appended to {self.table.path}"
        return text
