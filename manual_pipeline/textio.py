"""Checking a manual file before anything reads it: size, binary content, encoding, sha256.

One streaming pass over the bytes (bounded memory) hashes the file and settles its encoding:
UTF-8 first, then a byte-order mark (UTF-8/UTF-16/UTF-32) or BOM-less UTF-16, then Windows-1252
only when it decodes cleanly to mostly printable text. Anything else is refused with a message
naming the file, so a reader never meets undecodable bytes half way through.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from manual_pipeline.errors import ManualError
from nlmcs.errors import UserInputError
from nlmcs.files import check_input

CHUNK_BYTES = 1 << 18
"""Bytes read per step of the checking pass."""

MAX_LINE_CHARS = 1 << 16
"""Longest piece of a line a reader holds at once; longer lines arrive in pieces, cut between
words."""

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SPACES = "\t\n\r\f"
_NUL = "contains NUL characters"
_MAX_CONTROL_FRACTION = 0.005
"""A cp1252 reading with more control characters than this is not text."""


@dataclass(frozen=True)
class SourceFile:
    """A checked input file.

    Fields:
        path: the file.
        size: its size in bytes.
        sha256: hex digest of its bytes.
        encoding: the Python codec that decodes it (e.g. "utf-8", "utf-16", "cp1252").
    """

    path: Path
    size: int
    sha256: str
    encoding: str


def inspect_file(path: Path, *, max_bytes: int | None = None) -> SourceFile:
    """Hash `path` and settle its encoding; raise ManualError for empty, huge or binary files."""
    path = Path(path)
    try:
        # Refuses folders, FIFOs (which would block the read forever), devices and link loops.
        size = check_input(path, what="manual file").st_size
    except UserInputError as err:
        raise ManualError(str(err)) from None
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as err:
        raise ManualError(f"{path}: cannot read ({err.strerror or err})") from None
    if size == 0:
        raise ManualError(f"{path}: file is empty")
    if max_bytes is not None and size > max_bytes:
        raise ManualError(
            f"{path}: {size / 1e6:.1f} MB is over the {max_bytes / 1e6:g} MB limit for a manual "
            "(raise it with --max-mb; the file is streamed, but parsing takes about a minute "
            "per 5 MB)"
        )
    encoding = _bom_encoding(head) or _bomless_utf16(head)
    if encoding is None and b"\0" in head:
        raise ManualError(f"{path}: binary file (contains NUL bytes), not a manual")
    digest, problem = _hash_and_decode(path, encoding or "utf-8")
    if problem == _NUL:
        raise ManualError(f"{path}: binary file (contains NUL bytes), not a manual")
    if problem is None:
        return SourceFile(path, size, digest, encoding or "utf-8")
    if encoding is not None:
        raise ManualError(f"{path}: not valid {encoding} text ({problem})")
    _, cp_problem = _hash_and_decode(path, "cp1252")
    if cp_problem is None:
        return SourceFile(path, size, digest, "cp1252")
    raise ManualError(
        f"{path}: not UTF-8 text ({problem}) and not recognisable as another text encoding; "
        "convert it to UTF-8"
    )


def _bom_encoding(head: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    return None


def _bomless_utf16(head: bytes) -> str | None:
    """UTF-16 without a BOM shows as ASCII text with a NUL in every other byte."""
    sample = head[: len(head) - len(head) % 2]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    if even.count(0) > 0.9 * len(even) and odd.count(0) == 0:
        return "utf-16-be"
    if odd.count(0) > 0.9 * len(odd) and even.count(0) == 0:
        return "utf-16-le"
    return None


def _hash_and_decode(path: Path, encoding: str) -> tuple[str, str | None]:
    """(sha256, problem): decode the whole file in chunks; problem is None if it is clean text."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    offset = 0
    controls = chars = 0
    check_controls = encoding == "cp1252"
    problem = None
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            digest.update(chunk)
            if problem is None:
                try:
                    text = decoder.decode(chunk)
                except UnicodeDecodeError as err:
                    bad = err.object[err.start]
                    problem = f"invalid byte 0x{bad:02x} at byte {offset + err.start}"
                    continue
                if "\0" in text:
                    problem = _NUL
                    continue
                chars += len(text)
                if check_controls:
                    controls += sum(
                        1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in _SPACES
                    )
            offset += len(chunk)
    if problem is None:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            problem = "truncated character at the end"
    if problem is None and check_controls and controls > _MAX_CONTROL_FRACTION * max(chars, 1):
        problem = f"{controls} control characters in {chars}"
    return digest.hexdigest(), problem


def open_text(source: SourceFile) -> io.TextIOWrapper:
    """Open a checked file for reading as text with universal newlines."""
    return open(source.path, encoding=source.encoding, newline=None)


def iter_lines(fh: io.TextIOBase, limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """Lines of `fh` without their newline. A line longer than `limit` comes in pieces of at
    most `limit` characters, each cut after its last whitespace so no word is split (a piece
    without any whitespace is cut where it ends)."""
    carry = ""  # the words after the last cut, always shorter than `limit`
    while chunk := fh.readline(limit - len(carry)):
        text = carry + chunk
        if text.endswith("\n"):
            carry = ""
            yield text[:-1]
            continue
        if len(text) < limit:  # end of file without a newline
            carry = ""
            yield text
            continue
        cut = max(text.rfind(" "), text.rfind("\t"))
        if cut <= 0:
            carry = ""
            yield text
        else:
            carry = text[cut + 1:]
            yield text[:cut]
    if carry:
        yield carry
