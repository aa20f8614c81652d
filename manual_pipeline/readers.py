"""Readers that turn a manual file into blocks of running text, lazily and in order.

A block is the unit the parser sees: a paragraph or one list item, tagged with the heading it sits
under. Headings name sections and are not blocks themselves, and every list item is its own block,
so neither glues onto the sentence that follows. Readers stream line by line (HTML chunk by chunk)
and hold at most one block, capped at MAX_BLOCK_CHARS, so memory stays bounded on huge files.
"""

from __future__ import annotations

import html
import re
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from itertools import islice
from pathlib import Path
from typing import Literal

from manual_pipeline.errors import ManualError
from manual_pipeline.textio import SourceFile, iter_lines, open_text

MAX_BLOCK_CHARS = 20_000
"""A paragraph longer than this is cut (at a sentence end where possible) into several blocks."""

MAX_SENTENCE_CHARS = 1_000
"""A run of text longer than this with no sentence end is cut between words before parsing: it is
not prose a parser can read, and the parser's memory grows with the length of what it is given."""

FORMATS = ("auto", "text", "lines", "markdown", "html", "freeciv")
Format = Literal["auto", "text", "lines", "markdown", "html", "freeciv"]

_EXTENSIONS = {
    ".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown",
    ".html": "html", ".htm": "html", ".xhtml": "html", ".ruleset": "freeciv",
}  # fmt: skip


@dataclass(frozen=True)
class Block:
    """A run of text that no sentence crosses.

    Fields:
        section: the heading (or help node / ruleset entry) the text belongs to; "" before any.
        text: the text, whitespace collapsed.
        kind: "paragraph", "item" (a list item) or "line" (a line of a one-sentence-a-line
            file: one sentence, as the file says, however the parser would split it).
    """

    section: str
    text: str
    kind: str = "paragraph"


def detect_format(path: Path) -> str:
    """The reader for `path` from its name: FreeCiv for directories, helpdata.txt and *.ruleset;
    a compressed file by the name under its `.gz`."""
    path = Path(path)
    if path.is_dir() or path.name == "helpdata.txt":
        return "freeciv"
    if path.suffix.lower() in (".gz", ".gzip"):
        path = path.with_suffix("")
    return _EXTENSIONS.get(path.suffix.lower(), "text")


LINES_SNIFF = 200
"""Lines looked at to tell a one-sentence-a-line file from running text."""


def looks_like_lines(source: SourceFile) -> bool:
    """Is a plain-text file one sentence a line (the 2011 release's manual format)? Yes when
    its first lines (at least 20) hold no blank line, nearly all of them end a sentence and few
    hold a sentence break inside: running text wraps mid-sentence and separates paragraphs with
    blank lines, and a file of one paragraph a line breaks sentences within its lines."""
    with open_text(source) as fh:
        lines = list(islice(iter_lines(fh), LINES_SNIFF))
    if len(lines) < 20 or any(not line.strip() for line in lines[:-1]):
        return False
    ends = sum(1 for line in lines if _SENTENCE_CLOSE.search(line.rstrip()))
    inside = sum(1 for line in lines if _SENTENCE_INSIDE.search(line.strip()))
    return ends >= 0.9 * len(lines) and inside <= 0.15 * len(lines)


def read_blocks(
    source: SourceFile, fmt: str, *, limit: int | None = None
) -> Generator[Block, None, None]:
    """Blocks of a text, one-sentence-a-line, Markdown or HTML file in document order (at most
    `limit` of them)."""
    readers = {"text": _text_blocks, "lines": _line_blocks, "markdown": _markdown_blocks,
               "html": _html_blocks}
    if fmt not in readers:
        raise ManualError(f"{source.path}: unknown format {fmt!r} for a single file")
    with open_text(source) as fh:
        yield from islice(readers[fmt](fh), limit)


def normalise(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return " ".join(text.split())


def split_long(text: str, limit: int = MAX_BLOCK_CHARS) -> list[str]:
    """Cut an over-long text into pieces under `limit`, preferring sentence ends, then spaces."""
    pieces = []
    while len(text) > limit:
        window = text[:limit]
        cut = max(window.rfind(". "), window.rfind("! "), window.rfind("? "))
        cut = cut + 1 if cut > limit // 2 else window.rfind(" ")
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        pieces.append(text)
    return pieces


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CLOSERS = "\"')]\u2019\u201d\u00bb"
"""What may follow a sentence's last stop: quotes (straight and curly) and brackets."""
_SENTENCE_CLOSE = re.compile(rf"[.!?:][{re.escape(_CLOSERS)}]*$")
_SENTENCE_INSIDE = re.compile(rf"[.!?][{re.escape(_CLOSERS)}]*\s+[\"(\u201c]?[A-Z]")


def parser_pieces(text: str, limit: int = MAX_SENTENCE_CHARS) -> list[str]:
    """`text` as the parser should see it: whole, unless a sentence in it runs past `limit`
    characters; then that sentence is cut between words and every piece is parsed on its own
    (the sentences around it stay together). Ordinary prose passes through unchanged."""
    if len(text) <= limit:
        return [text]
    sentences = _SENTENCE_END.split(text)
    if all(len(s) <= limit for s in sentences):
        return [text]
    pieces: list[str] = []
    held: list[str] = []
    for sentence in sentences:
        if len(sentence) <= limit:
            held.append(sentence)
            continue
        if held:
            pieces.append(" ".join(held))
            held = []
        pieces.extend(split_long(sentence, limit))
    if held:
        pieces.append(" ".join(held))
    return pieces


# A list item: "- x", "* x", "+ x", "• x", "1. x", "1) x", "(1) x", "a) x", "(a) x".
_ITEM_RE = re.compile(
    r"^(?:[-*+\u2022\u00b7\u2013]|\(?\d{1,3}[.)]|\(?[A-Za-z]\))\s+(?P<rest>\S.*)$"
)
_UNDERLINE_RE = re.compile(r"^(?:=+|-+)\s*$")


class _Paragraphs:
    """Accumulates the lines of one block and emits it with the current section."""

    def __init__(self, sep: str = " ") -> None:
        self.section = ""
        self.sep = sep
        self.lines: list[str] = []
        self.size = 0
        self.kind = "paragraph"

    def start(self, kind: str) -> Iterator[Block]:
        yield from self.flush()
        self.kind = kind

    def add(self, line: str) -> Iterator[Block]:
        self.lines.append(line)
        self.size += len(line) + 1
        if self.size > MAX_BLOCK_CHARS:
            yield from self.flush()

    def flush(self) -> Iterator[Block]:
        if not self.lines:
            return
        text = normalise(self.sep.join(self.lines))
        self.lines, self.size = [], 0
        kind, self.kind = self.kind, "paragraph"
        for piece in split_long(text):
            yield Block(self.section, piece, kind)


def _looks_like_heading(lines: list[str]) -> bool:
    """A lone short line without closing punctuation, in plain text, is taken as a heading."""
    if len(lines) != 1:
        return False
    line = lines[0].strip()
    return (0 < len(line.split()) <= 10 and line[-1] not in ".!?:;," + _CLOSERS
            and not _ITEM_RE.match(line))


def _is_caps_heading(line: str) -> bool:
    """An all-capitals short line ("UNITS AND CITIES") is a heading even without a blank after."""
    letters = [ch for ch in line if ch.isalpha()]
    return (
        len(letters) >= 3
        and all(ch.isupper() for ch in letters)
        and len(line.split()) <= 10
        and line[-1] not in ".!?,;"
    )


def _line_blocks(fh) -> Iterator[Block]:
    """One sentence a line: every line its own block (so no sentence runs into the next); an
    all-capitals line, with or without the release's detached " .", is a section heading."""
    section = ""
    for raw in iter_lines(fh):
        line = normalise(raw)
        if not any(ch.isalnum() for ch in line):
            continue
        bare = line.removesuffix(" .").strip()
        if _is_caps_heading(bare):
            section = bare
            continue
        for piece in split_long(line):
            yield Block(section, piece, "line")


def _text_blocks(fh) -> Iterator[Block]:
    para = _Paragraphs()
    for raw in iter_lines(fh):
        line = raw.strip()
        if not line:
            if para.kind == "paragraph" and _looks_like_heading(para.lines):
                para.section, para.lines, para.size = normalise(para.lines[0]), [], 0
            yield from para.flush()
            continue
        if _UNDERLINE_RE.match(line) and len(para.lines) == 1 and para.kind == "paragraph":
            para.section, para.lines, para.size = normalise(para.lines[0]), [], 0
            continue
        if _is_caps_heading(line):
            yield from para.flush()
            para.section = normalise(line)
            continue
        item = _ITEM_RE.match(line)
        if item:
            yield from para.start("item")
            line = item.group("rest")
        yield from para.add(line)
    if para.kind == "paragraph" and _looks_like_heading(para.lines):
        para.lines = []
    yield from para.flush()


_MD_HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?P<rest>\S.*)$")
_MD_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_MD_RULE_RE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_MD_TABLE_RULE_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_MD_LINKDEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+")
_MD_INLINE = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # image -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # link -> its text
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # reference link -> its text
    (re.compile(r"<(https?://[^>]+)>"), r"\1"),  # autolink
    (re.compile(r"<[^>\n]+>"), " "),  # inline HTML tag
    (re.compile(r"`+([^`]*)`+"), r"\1"),  # code span
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # strong
    (re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])"), r"\2"),  # emphasis
    (re.compile(r"~~(.+?)~~"), r"\1"),  # strike-through
    (re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])"), r"\1"),  # backslash escapes
)


def strip_markdown_inline(text: str) -> str:
    """Plain text of one line of Markdown: links, emphasis, code spans and tags removed."""
    for pattern, replacement in _MD_INLINE:
        text = pattern.sub(replacement, text)
    return html.unescape(text)


def _markdown_blocks(fh) -> Iterator[Block]:
    para = _Paragraphs()
    fence = None
    for raw in iter_lines(fh):
        if fence is not None:
            if raw.strip().startswith(fence):
                fence = None
            continue
        opening = _MD_FENCE_RE.match(raw)
        if opening:
            yield from para.flush()
            fence = opening.group(1)
            continue
        line = raw.strip()
        while line.startswith(">"):
            line = line[1:].strip()
        if not line or _MD_LINKDEF_RE.match(line):
            yield from para.flush()
            continue
        heading = _MD_HEADING_RE.match(line)
        if heading:
            yield from para.flush()
            para.section = normalise(strip_markdown_inline(heading.group(2)))
            continue
        if _UNDERLINE_RE.match(line) and len(para.lines) == 1 and para.kind == "paragraph":
            para.section, para.lines, para.size = normalise(para.lines[0]), [], 0
            continue
        if _MD_RULE_RE.match(line):
            yield from para.flush()
            continue
        if line.startswith("|"):
            yield from para.flush()
            if not _MD_TABLE_RULE_RE.match(line):
                cells = [strip_markdown_inline(c).strip() for c in line.strip("|").split("|")]
                yield from para.start("item")
                yield from para.add(", ".join(c for c in cells if c))
                yield from para.flush()
            continue
        item = _MD_ITEM_RE.match(raw)
        if item:
            yield from para.start("item")
            line = item.group("rest")
        yield from para.add(strip_markdown_inline(line))
    yield from para.flush()


_HTML_BLOCK_TAGS = frozenset(
    (
        "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "div", "dl",
        "dt", "figcaption", "footer", "form", "header", "hr", "li", "main", "nav", "ol", "p",
        "pre", "section", "table", "td", "th", "tr", "ul",
    )  # fmt: skip
)
_HTML_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6", "title"))
_HTML_ITEM_TAGS = frozenset(("li", "dt", "dd"))
_HTML_SKIP_TAGS = frozenset(("script", "style", "noscript", "template", "svg", "math"))


class _HTMLBlocks(HTMLParser):
    """Collects blocks from HTML as it is fed; `take()` hands over the ones finished so far."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.para = _Paragraphs(sep="")
        self.done: list[Block] = []
        self.skip_depth = 0
        self.heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _HTML_SKIP_TAGS:
            self.skip_depth += 1
        elif tag in _HTML_HEADING_TAGS:
            self.done.extend(self.para.flush())
            self.heading = []
        elif tag in _HTML_ITEM_TAGS:
            self.done.extend(self.para.start("item"))
        elif tag in _HTML_BLOCK_TAGS:
            self.done.extend(self.para.flush())

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag in _HTML_BLOCK_TAGS:
            self.done.extend(self.para.flush())

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIP_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag in _HTML_HEADING_TAGS and self.heading is not None:
            title = normalise(" ".join(self.heading))
            if title:
                self.para.section = title
            self.heading = None
        elif tag in _HTML_BLOCK_TAGS or tag in _HTML_ITEM_TAGS:
            self.done.extend(self.para.flush())

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.heading is not None:
            self.heading.append(data)
        else:
            self.done.extend(self.para.add(data))

    def take(self) -> list[Block]:
        done, self.done = self.done, []
        return done


def _html_blocks(fh) -> Iterator[Block]:
    parser = _HTMLBlocks()
    while chunk := fh.read(1 << 16):
        parser.feed(chunk)
        yield from parser.take()
    parser.close()
    parser.done.extend(parser.para.flush())
    yield from parser.take()


def blocks_from_strings(section: str, paragraphs: Iterable[str]) -> Iterator[Block]:
    """Blocks from already-extracted paragraphs (FreeCiv help text), one per line.

    FreeCiv wraps its help strings itself, so an explicit newline in one is a hard break (a list
    item, a table row, a key binding): every line becomes its own block, list markers stripped,
    and lines with no letter or digit (rules like "=====") are dropped.
    """
    for paragraph in paragraphs:
        for raw in paragraph.split("\n"):
            line = normalise(raw)
            if not any(ch.isalnum() for ch in line):
                continue
            item = _ITEM_RE.match(line)
            kind = "item" if item else "paragraph"
            for piece in split_long(item.group("rest") if item else line):
                yield Block(section, piece, kind)
