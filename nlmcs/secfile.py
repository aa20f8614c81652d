"""FreeCiv's section-file format ("secfile"): the one parser of `*.ruleset`, `helpdata.txt` and
FreeCiv's other data files, for the readers on top of it (the manual pipeline's help text,
`manual_pipeline.freeciv`, and the ruleset converter's tables, `nlmcs.games.civ.freeciv_files`).

A section file has `[section]` headers and `key = value, value, ...` entries whose values are
integers, decimals, TRUE/FALSE, "strings", _("translatable strings") (FreeCiv's "?context:"
qualifier dropped, as FreeCiv drops it), $raw strings$, *file* names or `{ }` tables, with `;`
and `#` comments and `*include "file"` lines. Inside a string a backslash at the end of a line
joins it to the next and `\\n` is a newline; a comma at the end of a line continues the value list
on the next. The parser reads line by line and names the file and line of the first thing it
cannot read (a `UserInputError`, so the CLI prints that one line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from nlmcs.errors import UserInputError

_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
_BOOL_RE = re.compile(r"(?i)(TRUE|FALSE)\b")
_GETTEXT_RE = re.compile(r"(?:Q_|N_|_)\(\s*")
_QUALIFIER_RE = re.compile(r"^\?[^:]*:")


class SectionFileError(UserInputError):
    """A section file that does not parse; the message names the file and the line."""

    def __init__(self, path: object, line: int, problem: str) -> None:
        super().__init__(f"{path}: line {line}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


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

    def error(self, problem: str, line: int | None = None) -> SectionFileError:
        return SectionFileError(self.path, line or self.line, problem)

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
    """Entries of a FreeCiv section file in order; raise `SectionFileError` at the first error."""
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
