"""FreeCiv's `*.ruleset` files as the ruleset converter reads them: {section: {key: value}}.

The files are FreeCiv section files, parsed by the one section-file parser (`nlmcs.secfile`);
this reader only shapes its entries: a single value stands alone, several make a list, and a
table becomes a list of row dicts keyed by its header row. Anything that does not parse raises
`UserInputError` naming the file and line ("FILE:LINE: problem", where the parser's "X is never
closed" reads "unterminated X", as the converter has always said).
"""

from __future__ import annotations

import re
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.secfile import SectionFileError, parse_section_file


def parse_secfile(path: Path) -> dict[str, dict[str, object]]:
    """Read one ruleset file into {section: {key: value}}; lists stay lists, tables are lists of
    row dicts keyed by the header names. A section named twice is one section; a key named
    twice keeps its last value."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserInputError(f"{path}: not UTF-8 text ({err.reason})") from err
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    sections: dict[str, dict[str, object]] = {}
    try:
        for entry in parse_section_file(lines, path=path):
            values = [_rows(v) if _is_table(v) else v for v in entry.values]
            body = sections.setdefault(entry.section, {})
            body[entry.key] = values[0] if len(values) == 1 else values
    except SectionFileError as err:
        problem = _NEVER_CLOSED.sub(r"unterminated \1", err.problem)
        raise UserInputError(f"{err.path}:{err.line}: {problem}") from None
    return sections


_NEVER_CLOSED = re.compile(r"^(.+) is never closed$")


def _is_table(value: object) -> bool:
    return isinstance(value, list)


def _rows(table: list[list]) -> list[dict[str, object]]:
    """A `{ }` table's rows after its header row, as dicts keyed by the header."""
    if not table:
        return []
    header = [str(h) for h in table[0]]
    return [dict(zip(header, row, strict=False)) for row in table[1:]]
