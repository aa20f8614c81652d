"""FreeCiv's own help text as a manual: `helpdata.txt` help nodes and `helptext` of `*.ruleset`.

Both are FreeCiv "section files", read by the one section-file parser (`nlmcs.secfile`, which
names the file and line of the first thing it cannot read). Each help node or helptext entry
becomes one section of the manual; the licence node of helpdata.txt is skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path

from manual_pipeline.errors import FreecivSyntaxError, ManualError
from manual_pipeline.readers import Block, blocks_from_strings
from manual_pipeline.textio import SourceFile, iter_lines, open_text
from nlmcs import secfile
from nlmcs.secfile import Entry, SectionFileError

HELPDATA = "helpdata.txt"
LICENCE_NODES = frozenset(("help_copying",))
"""helpdata.txt sections that hold licence text, not game help."""


def parse_section_file(lines: Iterable[str], *, path: object = "<string>") -> Iterator[Entry]:
    """Entries of a FreeCiv section file in order (`nlmcs.secfile`); a syntax error is the
    manual's `FreecivSyntaxError`."""
    try:
        yield from secfile.parse_section_file(lines, path=path)
    except SectionFileError as err:
        raise FreecivSyntaxError(err.path, err.line, err.problem) from None


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
