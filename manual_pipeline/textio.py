"""Checking a manual file before anything reads it: size, binary content, encoding, sha256.

One streaming pass over the bytes (bounded memory) hashes the file and settles its encoding:
UTF-8 first, then a byte-order mark (UTF-8/UTF-16/UTF-32) or BOM-less UTF-16, then Windows-1252
only when it decodes cleanly to mostly printable text. Anything else is refused with a message
naming the file, so a reader never meets undecodable bytes half way through.

A gzip-compressed file (known by its first bytes, whatever its name; Debian ships FreeCiv's
HOWTOPLAY and its translations so) is checked and read through its decompressed text; its sha256
stays that of the file itself. A file named `.gz` that is not gzip is refused.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import unicodedata
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from manual_pipeline.errors import ManualError
from nlmcs.errors import UserInputError
from nlmcs.files import check_input, file_version

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
GZIP_MAGIC = b"\x1f\x8b"
_GZIP_SUFFIXES = (".gz", ".gzip")


@dataclass(frozen=True)
class SourceFile:
    """A checked input file.

    Fields:
        path: the file.
        size: its size in bytes.
        sha256: hex digest of its bytes.
        encoding: the Python codec that decodes it (e.g. "utf-8", "utf-16", "cp1252").
        compression: "gzip" for a gzip-compressed file (read through its decompressed bytes),
            else None.
    """

    path: Path
    size: int
    sha256: str
    encoding: str
    compression: str | None = None
    version: tuple = ()
    """`nlmcs.files.file_version` before it was hashed: a parse checks it still is this file."""


def inspect_file(path: Path, *, max_bytes: int | None = None) -> SourceFile:
    """Hash `path` and settle its encoding; raise ManualError for empty, huge or binary files."""
    path = Path(path)
    try:
        # Refuses folders, FIFOs (which would block the read forever), devices and link loops.
        before = check_input(path, what="manual file")
    except UserInputError as err:
        raise ManualError(str(err)) from None
    size, version = before.st_size, file_version(before)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as err:
        raise ManualError(f"{path}: cannot read ({err.strerror or err})") from None
    if size == 0:
        raise ManualError(f"{path}: file is empty")
    _check_size(path, size, max_bytes)
    compression = "gzip" if head.startswith(GZIP_MAGIC) else None
    if compression is None and path.suffix.lower() in _GZIP_SUFFIXES:
        raise ManualError(f"{path}: named {path.suffix} but not gzip-compressed (it does not "
                          "start with gzip's magic bytes); rename it or compress it")
    if compression is not None:
        head = _gzip_head(path, max_bytes)
        if not head:
            raise ManualError(f"{path}: file is empty (gzip holding no bytes)")
    encoding = _bom_encoding(head) or _bomless_utf16(head)
    if encoding is None and b"\0" in head:
        raise ManualError(f"{path}: binary file (contains NUL bytes), not a manual")
    digest, problem = _hash_and_decode(path, encoding or "utf-8", compression)
    if problem == _NUL:
        raise ManualError(f"{path}: binary file (contains NUL bytes), not a manual")
    if problem is None:
        return SourceFile(path, size, digest, encoding or "utf-8", compression, version)
    if encoding is not None:
        raise ManualError(f"{path}: not valid {encoding} text ({problem})")
    _, cp_problem = _hash_and_decode(path, "cp1252", compression)
    if cp_problem is None:
        return SourceFile(path, size, digest, "cp1252", compression, version)
    raise ManualError(
        f"{path}: not UTF-8 text ({problem}) and not recognisable as another text encoding; "
        "convert it to UTF-8"
    )


def _check_size(path: Path, size: int, max_bytes: int | None, what: str = "") -> None:
    if max_bytes is not None and size > max_bytes:
        raise ManualError(
            f"{path}: {size / 1e6:.1f} MB{what} is over the {max_bytes / 1e6:g} MB limit for a "
            "manual (raise it with --max-mb; the file is streamed, but parsing takes about a "
            "minute per 5 MB)"
        )


def _gzip_head(path: Path, max_bytes: int | None) -> bytes:
    """The first 4 KB of a gzip file's text, after one pass that checks the whole stream
    decompresses (a damaged file is refused here, not half way through a parse) and that its
    text is within `max_bytes`."""
    total = 0
    head = b""
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(CHUNK_BYTES):
                if not head:
                    head = chunk[:4096]
                total += len(chunk)
                _check_size(path, total, max_bytes, " of decompressed text")
    except (OSError, EOFError, zlib.error) as err:
        raise ManualError(f"{path}: not a valid gzip file ({err})") from None
    return head


def _raw(path: Path, compression: str | None):
    """The file's bytes, decompressed if it is compressed."""
    return gzip.open(path, "rb") if compression == "gzip" else open(path, "rb")


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


def _hash_and_decode(path: Path, encoding: str,
                     compression: str | None = None) -> tuple[str, str | None]:
    """(sha256 of the file, problem): decode the whole (decompressed) text in chunks; problem
    is None if it is clean text."""
    if compression is not None:
        with open(path, "rb") as fh:
            file_digest = hashlib.file_digest(fh, "sha256").hexdigest()
        return file_digest, _hash_and_decode_stream(path, encoding, compression)[1]
    return _hash_and_decode_stream(path, encoding, None)


def _hash_and_decode_stream(path: Path, encoding: str,
                            compression: str | None) -> tuple[str, str | None]:
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    offset = 0
    controls = chars = 0
    check_controls = encoding == "cp1252"
    problem = None
    with _raw(path, compression) as fh:
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
    if source.compression == "gzip":
        return gzip.open(source.path, "rt", encoding=source.encoding, newline=None)
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
