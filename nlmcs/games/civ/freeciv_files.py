"""A reader for FreeCiv's `*.ruleset` files (the "secfile" format).

The format is INI-like: `[section]` headers, `key = value` entries whose value may be a number, a
string (`"..."` or translatable `_("...")`), `TRUE`/`FALSE`, a comma-separated list that can run
over several lines, or a table `{ "col", ... \n row ... }`. Comments start with `;` or `#` outside
strings.
Only what the ruleset converter needs is supported; anything else raises `UserInputError` naming
the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from nlmcs.errors import UserInputError

_NUMBER = re.compile(r"-?\d+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class _Lexer:
    """Turns the text into (kind, value, line) tokens; kinds: sec, id, str, num, bool, sym, nl."""

    def __init__(self, text: str, path: Path):
        self.text = text
        self.path = path

    def error(self, line: int, what: str) -> UserInputError:
        return UserInputError(f"{self.path}:{line}: {what}")

    def tokens(self) -> list[tuple[str, object, int]]:
        text, out, i, line, n = self.text, [], 0, 1, len(self.text)
        while i < n:
            c = text[i]
            if c == "\n":
                out.append(("nl", None, line))
                line += 1
                i += 1
            elif c in " \t\r":
                i += 1
            elif c in ";#" or (c == "*" and text.startswith("*include", i)):
                # Comments; `*include` pulls in files the converter never needs, so skip it too.
                while i < n and text[i] != "\n":
                    i += 1
            elif c == "[" and (not out or out[-1][0] == "nl"):
                end = text.find("]", i)
                if end < 0:
                    raise self.error(line, "unterminated section header")
                out.append(("sec", text[i + 1 : end].strip(), line))
                i = end + 1
            elif c == '"' or text.startswith('_("', i):
                start_line = line
                translated = c == "_"
                i += 3 if translated else 1
                buf = []
                while True:
                    if i >= n:
                        raise self.error(start_line, "unterminated string")
                    ch = text[i]
                    if ch == "\\" and i + 1 < n:
                        if text[i + 1] == "\n":
                            line += 1
                        else:
                            buf.append(text[i + 1])
                        i += 2
                        continue
                    if ch == '"':
                        i += 1
                        break
                    if ch == "\n":
                        line += 1
                    buf.append(ch)
                    i += 1
                if translated:
                    while i < n and text[i] in " \t":
                        i += 1
                    if i >= n or text[i] != ")":
                        raise self.error(start_line, "translated string without ')'")
                    i += 1
                out.append(("str", "".join(buf), start_line))
            elif c == "*":
                # `*file*` stands for the contents of a file; keep the name as a string.
                end = text.find("*", i + 1)
                if end < 0 or "\n" in text[i:end]:
                    raise self.error(line, "unterminated *file* reference")
                out.append(("str", text[i + 1 : end], line))
                i = end + 1
            elif c in "=,{}":
                out.append(("sym", c, line))
                i += 1
            else:
                m = _NUMBER.match(text, i)
                if m:
                    out.append(("num", int(m.group()), line))
                    i = m.end()
                    continue
                m = _IDENT.match(text, i)
                if not m:
                    raise self.error(line, f"unexpected character {c!r}")
                word = m.group()
                if word in ("TRUE", "FALSE"):
                    out.append(("bool", word == "TRUE", line))
                else:
                    out.append(("id", word, line))
                i = m.end()
        out.append(("nl", None, line))
        return out


def parse_secfile(path: Path) -> dict[str, dict[str, object]]:
    """Read one ruleset file into {section: {key: value}}; lists stay lists, tables are lists of
    row dicts keyed by the header names."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserInputError(f"{path}: not UTF-8 text ({err.reason})") from err
    lexer = _Lexer(text, path)
    toks = lexer.tokens()
    sections: dict[str, dict[str, object]] = {}
    current: dict[str, object] | None = None
    i = 0

    def skip_nl(j: int) -> int:
        while toks[j][0] == "nl":
            j += 1
        return j

    while i < len(toks):
        kind, value, line = toks[i]
        if kind == "nl":
            i += 1
        elif kind == "sec":
            current = sections.setdefault(str(value), {})
            i += 1
        elif kind == "id":
            if current is None:
                raise lexer.error(line, f"entry {value!r} before any [section]")
            if i + 1 >= len(toks) or toks[i + 1][1] != "=":
                raise lexer.error(line, f"expected '=' after {value!r}")
            i = skip_nl(i + 2)
            if toks[i][1] == "{":
                current[str(value)], i = _table(toks, i + 1, lexer)
            else:
                items, i = _values(toks, i, lexer)
                current[str(value)] = items[0] if len(items) == 1 else items
        else:
            raise lexer.error(line, f"unexpected {value!r}")
    return sections


def _values(toks, i, lexer) -> tuple[list[object], int]:
    """A comma-separated value list; a trailing comma continues on the next line."""
    items: list[object] = []
    while True:
        kind, value, line = toks[i]
        if kind not in ("str", "num", "bool", "id"):
            if kind == "nl" and not items:
                return [""], i + 1
            raise lexer.error(line, f"expected a value, found {value!r}")
        items.append(value)
        i += 1
        if toks[i][1] == ",":
            i += 1
            while toks[i][0] == "nl":
                i += 1
            continue
        if toks[i][0] != "nl":
            raise lexer.error(toks[i][2], f"unexpected {toks[i][1]!r} after a value")
        return items, i + 1


def _table(toks, i, lexer) -> tuple[list[dict[str, object]], int]:
    rows: list[list[object]] = []
    row: list[object] = []
    while True:
        kind, value, line = toks[i]
        if kind == "sym" and value == "}":
            if row:
                rows.append(row)
            i += 1
            break
        if kind == "nl":
            if row:
                rows.append(row)
                row = []
        elif kind == "sym" and value == ",":
            pass
        elif kind in ("str", "num", "bool", "id"):
            row.append(value)
        else:
            raise lexer.error(line, f"unexpected {value!r} in a table")
        i += 1
        if i >= len(toks):
            raise lexer.error(line, "unterminated table")
    if not rows:
        return [], i
    header = [str(h) for h in rows[0]]
    return [dict(zip(header, r, strict=False)) for r in rows[1:]], i
