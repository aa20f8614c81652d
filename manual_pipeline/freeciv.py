"""FreeCiv's own help text as a manual: `helpdata.txt` help nodes and `helptext` of `*.ruleset`.

Both are FreeCiv "section files": `[section]` headers, `key = value, value, ...` entries, values
that are integers, TRUE/FALSE, "strings", _("translatable strings"), $raw strings$ or `{ }` tables,
with `;` and `#` comments and `*include "file"` lines. Inside a string a backslash at the end of a
line joins it to the next and `\\n` is a newline; a comma at the end of a line continues the value
list on the next. The parser below reads that syntax line by line and names the file and line of
the first thing it cannot read. Each help node or helptext entry becomes one section of the manual;
the licence node of helpdata.txt is skipped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from manual_pipeline.errors import FreecivSyntaxError, ManualError
from manual_pipeline.readers import Block, blocks_from_strings
from manual_pipeline.textio import SourceFile, iter_lines, open_text

HELPDATA = "helpdata.txt"
LICENCE_NODES = frozenset(("help_copying",))
"""helpdata.txt sections that hold licence text, not game help."""

_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
_BOOL_RE = re.compile(r"(?i)(TRUE|FALSE)\b")
_GETTEXT_RE = re.compile(r"(?:Q_|N_|_)\(\s*")
_QUALIFIER_RE = re.compile(r"^\?[^:]*:")


@dataclass(frozen=True)
class Entry:
    """One `key = values` entry of a section file.

    Fields:
        section: the `[section]` it is in.
        key: the entry name.
        values: strings, ints, floats, bools, or (for a table) a list of rows.
        line: the line the entry starts on.
    """

    section: str
    key: str
    values: list
    line: int


class _Cursor:
    """The current line of a section file and a position in it; pulls lines on demand."""

    def __init__(self, lines: Iterable[str], path: object) -> None:
        self._lines = iter(lines)
        self.path = path
        self.text = ""
        self.pos = 0
        self.line = 0

    def next_line(self) -> bool:
        for text in self._lines:
            self.text, self.pos, self.line = text, 0, self.line + 1
            return True
        self.text, self.pos = "", 0
        return False

    def error(self, problem: str, line: int | None = None) -> FreecivSyntaxError:
        return FreecivSyntaxError(self.path, line or self.line, problem)

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\f\v":
            self.pos += 1

    def at_end(self) -> bool:
        """True at the end of the line or at a comment."""
        self.skip_spaces()
        return self.pos >= len(self.text) or self.text[self.pos] in "#;"

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def match(self, pattern: re.Pattern) -> re.Match | None:
        found = pattern.match(self.text, self.pos)
        if found:
            self.pos = found.end()
        return found

    def snippet(self) -> str:
        return self.text[self.pos : self.pos + 20].strip()


def parse_section_file(lines: Iterable[str], *, path: object = "<string>") -> Iterator[Entry]:
    """Entries of a FreeCiv section file in order; raise FreecivSyntaxError at the first error."""
    cur = _Cursor(lines, path)
    section = None
    while cur.next_line():
        if cur.at_end():
            continue
        if cur.text.startswith("*include"):
            _include(cur)
            continue
        if cur.peek() == "[":
            end = cur.text.find("]", cur.pos)
            if end < 0:
                raise cur.error("section header without a closing ']'")
            section = cur.text[cur.pos + 1 : end].strip()
            if not _NAME_RE.fullmatch(section):
                raise cur.error(f"bad section name {section!r}")
            cur.pos = end + 1
            if not cur.at_end():
                raise cur.error(f"unexpected {cur.snippet()!r} after the section header")
            continue
        start = cur.line
        name = cur.match(_NAME_RE)
        if not name:
            raise cur.error(f"expected an entry name, found {cur.snippet()!r}")
        cur.skip_spaces()
        if cur.peek() != "=":
            raise cur.error(f"expected '=' after {name.group()!r}")
        cur.pos += 1
        if section is None:
            raise cur.error(f"entry {name.group()!r} before any [section]")
        yield Entry(section, name.group(), _value_list(cur), start)


def _include(cur: _Cursor) -> None:
    found = re.fullmatch(r'\*include\s+"[^"]+"\s*(?:[#;].*)?', cur.text.rstrip())
    if not found:
        raise cur.error("malformed *include line (expected *include \"file\")")


def _value_list(cur: _Cursor) -> list:
    values = []
    start = cur.line
    while cur.at_end():  # the value may start on a later line ("flags =" then a table)
        if not cur.next_line():
            raise cur.error("missing value after '='", start)
    while True:
        values.append(_table(cur) if cur.peek() == "{" else _value(cur))
        if cur.at_end():
            return values
        if cur.peek() != ",":
            raise cur.error(f"expected ',' or end of line, found {cur.snippet()!r}")
        cur.pos += 1
        while cur.at_end():  # a trailing comma continues the list on the next line
            if not cur.next_line():
                raise cur.error("file ends after ','")


def _table(cur: _Cursor) -> list[list]:
    start = cur.line
    cur.pos += 1
    rows: list[list] = []
    row: list = []
    while True:
        if cur.at_end():
            if row:
                rows.append(row)
                row = []
            if not cur.next_line():
                raise cur.error("table '{' is never closed", start)
            continue
        if cur.peek() == "}":
            cur.pos += 1
            if row:
                rows.append(row)
            return rows
        row.append(_value(cur))
        cur.skip_spaces()
        if cur.peek() == ",":
            cur.pos += 1
        elif not (cur.at_end() or cur.peek() == "}"):
            raise cur.error(f"expected ',' in table row, found {cur.snippet()!r}")


def _value(cur: _Cursor):
    char = cur.peek()
    if char == '"':
        return _string(cur)
    if char == "$":
        return _raw_string(cur)
    if char == "*":  # *file* names a file whose contents are the value; keep the name
        end = cur.text.find("*", cur.pos + 1)
        if end < 0:
            raise cur.error("*file* value without a closing '*'")
        name = cur.text[cur.pos + 1 : end]
        cur.pos = end + 1
        return name
    if cur.match(_GETTEXT_RE):
        if cur.peek() != '"':
            raise cur.error("expected a string inside _( )")
        text = _string(cur)
        cur.skip_spaces()
        if cur.peek() != ")":
            raise cur.error("expected ')' to close _(\"...\")")
        cur.pos += 1
        return _QUALIFIER_RE.sub("", text)
    boolean = cur.match(_BOOL_RE)
    if boolean:
        return boolean.group(1).upper() == "TRUE"
    number = cur.match(_NUMBER_RE)
    if number:
        text = number.group()
        return float(text) if "." in text else int(text)
    raise cur.error(f"expected a value, found {cur.snippet()!r}")


def _string(cur: _Cursor) -> str:
    """A double-quoted string from the opening quote; it may run over several lines."""
    start = cur.line
    cur.pos += 1
    out: list[str] = []
    while True:
        text, pos = cur.text, cur.pos
        while pos < len(text):
            char = text[pos]
            if char == '"':
                out.append(text[cur.pos : pos])
                cur.pos = pos + 1
                return "".join(out).replace("\0", "")
            if char == "\\":
                out.append(text[cur.pos : pos])
                if pos + 1 == len(text):  # backslash-newline: the string goes on, no newline
                    cur.pos = pos = len(text)
                    break
                escaped = text[pos + 1]
                out.append("\n" if escaped == "n" else escaped)
                pos += 2
                cur.pos = pos
                continue
            pos += 1
        else:
            out.append(text[cur.pos :])
            out.append("\n")
        if not cur.next_line():
            raise cur.error("string is never closed", start)


def _raw_string(cur: _Cursor) -> str:
    """A $...$ string: no escapes, may run over several lines."""
    start = cur.line
    cur.pos += 1
    out: list[str] = []
    while True:
        end = cur.text.find("$", cur.pos)
        if end >= 0:
            out.append(cur.text[cur.pos : end])
            cur.pos = end + 1
            return "".join(out)
        out.append(cur.text[cur.pos :] + "\n")
        if not cur.next_line():
            raise cur.error("$-string is never closed", start)


def _strings(values: list) -> list[str]:
    return [v for v in values if isinstance(v, str)]


def _title(entries: dict[str, Entry], fallback: str) -> str:
    names = _strings(entries["name"].values) if "name" in entries else []
    return " ".join(names[0].split()) if names and names[0].strip() else fallback


def _sections(lines: Iterable[str], path: object) -> Iterator[tuple[str, dict[str, Entry]]]:
    """(section name, key -> entry) in file order."""
    current, entries = None, {}
    for entry in parse_section_file(lines, path=path):
        if entry.section != current:
            if current is not None:
                yield current, entries
            current, entries = entry.section, {}
        entries[entry.key] = entry
    if current is not None:
        yield current, entries


def help_blocks(lines: Iterable[str], *, path: object = HELPDATA) -> Iterator[Block]:
    """Blocks of helpdata.txt: one section per help node; generated tables and licence skipped."""
    for section, entries in _sections(lines, path):
        if not section.startswith("help_") or section in LICENCE_NODES or "text" not in entries:
            continue
        title = _title(entries, section.removeprefix("help_").replace("_", " "))
        paragraphs = [p for p in _strings(entries["text"].values) if not p.startswith("$")]
        yield from blocks_from_strings(title, paragraphs)


def helptext_blocks(lines: Iterable[str], *, path: object = "<ruleset>") -> Iterator[Block]:
    """Blocks of the `helptext` entries of a ruleset file, one section per entry."""
    for section, entries in _sections(lines, path):
        if "helptext" in entries:
            title = _title(entries, section)
            yield from blocks_from_strings(title, _strings(entries["helptext"].values))


def source_files(path: Path, *, ruleset: str | None = None) -> list[Path]:
    """The FreeCiv files a path stands for, in reading order.

    A file is itself; a directory gives its helpdata.txt and its *.ruleset files (sorted), plus
    the *.ruleset files of its subdirectory `ruleset` when one is named.
    """
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ManualError(f"{path}: no such file or directory")
    files = [path / HELPDATA] if (path / HELPDATA).is_file() else []
    files += sorted(path.glob("*.ruleset"))
    if ruleset is not None:
        sub = path / ruleset
        if not sub.is_dir() or not any(sub.glob("*.ruleset")):
            raise ManualError(f"{sub}: no FreeCiv ruleset there (no *.ruleset files)")
        files += sorted(sub.glob("*.ruleset"))
    if not files:
        raise ManualError(
            f"{path}: no manual in this directory (expected helpdata.txt or *.ruleset files, "
            "or a .txt/.md/.html file path)"
        )
    return files


def freeciv_blocks(sources: Iterable[SourceFile]) -> Generator[Block, None, None]:
    """Blocks of checked FreeCiv files: help nodes for helpdata.txt, helptext for the rest."""
    for source in sources:
        with open_text(source) as fh:
            lines = iter_lines(fh)
            if source.path.name == HELPDATA:
                yield from help_blocks(lines, path=source.path)
            else:
                yield from helptext_blocks(lines, path=source.path)


def combined_sha256(sources: Iterable[SourceFile], base: Path) -> str:
    """One digest for several files: their names relative to `base` and their own digests."""
    digest = hashlib.sha256()
    for source in sources:
        try:
            rel = source.path.relative_to(base)
        except ValueError:
            rel = source.path
        digest.update(f"{rel.as_posix()}\0{source.sha256}\n".encode())
    return digest.hexdigest()
