"""FreeCiv section-file syntax, help extraction, and the installed FreeCiv data when present."""

from __future__ import annotations

import pytest
from manual_fixtures import FIXTURES, FREECIV_DIR

from manual_pipeline.errors import FreecivSyntaxError, ManualError
from manual_pipeline.freeciv import (
    freeciv_blocks,
    help_blocks,
    helptext_blocks,
    parse_section_file,
    source_files,
)
from manual_pipeline.textio import inspect_file


def _entries(text: str):
    return list(parse_section_file(text.splitlines(), path="test.ruleset"))


def _file_entries(path):
    with open(path, encoding="utf-8") as fh:
        return list(parse_section_file(fh.read().splitlines(), path=path))


def test_fixture_ruleset_values():
    entries = {(e.section, e.key): e for e in _file_entries(FIXTURES / "rules.ruleset")}
    settlers = "unit_settlers"
    assert entries[(settlers, "name")].values == ["Settlers"]
    assert entries[(settlers, "attack")].values == [0]
    assert entries[(settlers, "cost")].values == [-30]
    assert entries[(settlers, "ratio")].values == [1.5]
    assert entries[(settlers, "veteran")].values == [True]
    assert entries[(settlers, "flags")].values == ["Settlers", "NonMil", "AddToCity"]
    help_ = entries[(settlers, "helptext")]
    assert help_.line == 30
    assert help_.values == [
        "Settlers are one of the key units in the game; they found new cities.",
        "Settlers can also irrigate and mine:\n - Irrigate grassland.\n - Mine hills.",
        'A plain "quoted" string with a backslash \\ inside.',
    ]
    assert entries[("unit_warriors", "name")].values == ["Warriors"]  # ?unit: qualifier dropped
    assert entries[("unit_warriors", "helptext")].values == [
        "Warriors are the weakest unit.\nA raw newline is kept as a line break."
    ]
    assert entries[("control", "flags")].values == [
        [["name", "helptxt"], ["Airbase", "Can fly."], ["Plain", "Nothing special"]]
    ]
    assert entries[("terrain_hills", "raw")].values == ['a raw string with "quotes" and \\n kept']


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('[a]\nx = "never closed\n\n', 2, "string is never closed"),
        ("[a]\nx = 1\ny 2\n", 3, "expected '=' after 'y'"),
        ("[a] junk\n", 1, "after the section header"),
        ("[a\n", 1, "without a closing ']'"),
        ("x = 1\n[a]\n", 1, "before any [section]"),
        ("[a]\n; fine\nt = { \"a\"\n 1\n", 3, "table '{' is never closed"),
        ("[a]\nx = 1,\n", 2, "file ends after ','"),
        ("[a]\nx = 1 2\n", 2, "expected ',' or end of line"),
        ("[a]\nx = bare\n", 2, "expected a value"),
        ('[a]\nx = _("s"\n', 2, "expected ')'"),
        ('*include nothing\n', 1, "malformed *include"),
    ],
)
def test_syntax_errors_name_the_line(text, line, problem):
    with pytest.raises(FreecivSyntaxError) as info:
        _entries(text)
    assert info.value.line == line
    assert problem in str(info.value)
    assert str(info.value).startswith(f"test.ruleset: line {line}: ")


def test_bad_fixture_names_the_line_where_the_string_starts():
    with pytest.raises(FreecivSyntaxError, match=r"bad.ruleset: line 5: string is never closed"):
        list(freeciv_blocks([inspect_file(FIXTURES / "bad.ruleset")]))


def test_help_nodes_skip_licence_and_generated_tables():
    blocks = list(freeciv_blocks([inspect_file(p) for p in source_files(FIXTURES / "freeciv")]))
    sections = [b.section for b in blocks]
    assert sections[0] == "Overview"  # "?help:" qualifier removed
    assert "Combat" in sections  # leading nesting spaces removed
    assert "Copying" not in sections
    texts = [b.text for b in blocks]
    assert not any("LICENSE" in t or "licence" in t for t in texts)
    assert not any(t.startswith("$") or "GENERATED" in t for t in texts)
    assert "Choosing the first city site." in texts  # "0." marker stripped, own block
    assert "Shift-click: select a unit" in texts and "Ctrl-click: goto" in texts  # hard breaks
    assert not any("===" in t for t in texts)
    # helpdata.txt first, then the directory's *.ruleset helptext
    assert sections[-2:] == ["Phalanx", "Catapult"]


def test_helptext_items_and_sections():
    with open(FIXTURES / "rules.ruleset", encoding="utf-8") as fh:
        blocks = list(helptext_blocks(fh.read().splitlines()))
    assert [b.section for b in blocks].count("Settlers") == 5
    assert [b.text for b in blocks if b.kind == "item"] == ["Irrigate grassland.", "Mine hills."]


def test_source_files_for_directories(tmp_path):
    files = source_files(FIXTURES / "freeciv")
    assert [f.name for f in files] == ["helpdata.txt", "units.ruleset"]
    with pytest.raises(ManualError, match="no manual in this directory"):
        source_files(tmp_path)
    with pytest.raises(ManualError, match="no FreeCiv ruleset"):
        source_files(FIXTURES / "freeciv", ruleset="nonexistent")


needs_freeciv = pytest.mark.skipif(
    not (FREECIV_DIR / "helpdata.txt").is_file(), reason="freeciv-data is not installed"
)


@needs_freeciv
def test_installed_helpdata_reads_without_the_licence():
    source = inspect_file(FREECIV_DIR / "helpdata.txt")
    with open(source.path, encoding="utf-8") as fh:
        blocks = list(help_blocks(fh.read().splitlines()))
    sections = {b.section for b in blocks}
    assert {"Overview", "Strategy and Tactics", "Terrain", "Combat"} <= sections
    assert "Copying" not in sections
    assert not any("GNU GENERAL PUBLIC LICENSE" in b.text for b in blocks)
    assert len(blocks) > 200


@needs_freeciv
@pytest.mark.parametrize("ruleset", ["civ2", "classic"])
def test_installed_rulesets_parse_and_give_unit_help(ruleset):
    directory = FREECIV_DIR / ruleset
    if not directory.is_dir():
        pytest.skip(f"{directory} not installed")
    files = source_files(directory)
    assert len(files) >= 8
    for path in files:
        assert _file_entries(path)  # every installed ruleset file parses
    blocks = list(freeciv_blocks([inspect_file(p) for p in files]))
    sections = {b.section for b in blocks}
    assert {"Settlers", "Warriors", "Phalanx", "Barracks", "Grassland"} <= sections
