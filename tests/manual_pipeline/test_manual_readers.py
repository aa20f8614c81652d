"""Readers: headings become sections, list items stand alone, markup is stripped."""

from __future__ import annotations

import pytest
from manual_fixtures import FIXTURES

from manual_pipeline.readers import (
    Block,
    detect_format,
    parser_pieces,
    read_blocks,
    split_long,
)
from manual_pipeline.textio import inspect_file


def _blocks(name: str) -> list[Block]:
    source = inspect_file(FIXTURES / name)
    return list(read_blocks(source, detect_format(source.path)))


def _texts(blocks: list[Block]) -> list[str]:
    return [b.text for b in blocks]


@pytest.mark.parametrize("name", ["guide.md", "guide.html", "guide.txt"])
def test_headings_name_sections_and_never_glue_onto_text(name):
    blocks = _blocks(name)
    sections = [b.section for b in blocks]
    assert sections[0].lower() == "early game"
    assert "Settlers" in sections and "Defending Cities" in sections
    for block in blocks:
        assert not block.text.lower().startswith(("early game", "defending cities"))
        assert block.text != "Settlers"
    first = blocks[0].text
    assert first.startswith("Found your first city")


@pytest.mark.parametrize("name", ["guide.md", "guide.html", "guide.txt"])
def test_list_items_are_blocks_of_their_own(name):
    blocks = _blocks(name)
    items = [b.text for b in blocks if b.kind == "item"]
    assert "Irrigate grassland next to a river" in items
    assert "Mine the hills for extra shields" in items
    settlers = next(b for b in blocks if b.text.startswith("Settlers found new cities"))
    assert settlers.text == "Settlers found new cities and improve the land around them."


def test_markdown_inline_markup_code_and_tables():
    blocks = _blocks("guide.md")
    texts = _texts(blocks)
    assert (
        "Workers can also irrigate, but they cannot found cities. See the rules page for all "
        "numbers and build road for the command." in texts
    )
    assert "Build a road between two cities" in texts  # numbered item, marker stripped
    assert "Veteran units fight better than green ones." in texts  # blockquote marker stripped
    assert not any("code block" in t for t in texts)
    assert "Warriors, 1, 1" in texts and not any("---" in t for t in texts)
    assert texts[-1] == "Attack only when the odds favour you."
    assert next(b for b in blocks if b.text.startswith("Fortify")).section == "Defending Cities"


def test_html_skips_scripts_keeps_entities_and_splits_at_br():
    texts = _texts(_blocks("guide.html"))
    assert not any("script text" in t or "color" in t for t in texts)
    assert (
        "Workers can also irrigate, but they cannot found cities & towns. A phalanx defends."
        in texts
    )
    assert "Fortify a phalanx in every city." in texts
    assert "Walls triple the defence against land attacks." in texts


def test_plain_text_joins_wrapped_lines():
    texts = _texts(_blocks("guide.txt"))
    assert "Settlers found new cities and improve the land around them." in texts


def test_format_detection(tmp_path):
    assert detect_format(FIXTURES / "guide.md") == "markdown"
    assert detect_format(FIXTURES / "guide.html") == "html"
    assert detect_format(FIXTURES / "guide.txt") == "text"
    assert detect_format(FIXTURES / "rules.ruleset") == "freeciv"
    assert detect_format(FIXTURES / "freeciv" / "helpdata.txt") == "freeciv"
    assert detect_format(FIXTURES / "freeciv") == "freeciv"
    assert detect_format(tmp_path / "notes.unknown") == "text"


def test_split_long_prefers_sentence_ends():
    text = "Build roads. " * 50
    pieces = split_long(text.strip(), limit=100)
    assert all(len(p) <= 100 for p in pieces)
    assert all(p.endswith(".") for p in pieces)
    assert " ".join(pieces) == text.strip()


def test_prose_reaches_the_parser_whole():
    text = " ".join(["Settlers found cities near rivers, where food grows fast."] * 60)
    assert parser_pieces(text, limit=100) == [text]


def test_a_sentence_without_end_is_cut_between_words_and_its_neighbours_stay_together():
    long = " ".join(f"word{i}" for i in range(200))  # ~1,400 characters, no sentence end
    text = f"Build roads first. Then irrigate. {long}. Warriors defend. Cities grow."
    pieces = parser_pieces(text, limit=100)
    assert pieces[0] == "Build roads first. Then irrigate."
    assert pieces[-1] == "Warriors defend. Cities grow."
    middle = pieces[1:-1]
    assert len(middle) > 10 and all(len(p) <= 100 for p in middle)
    assert " ".join(middle) == long + "."  # every word, in order, none split


def test_limit_stops_early():
    source = inspect_file(FIXTURES / "guide.md")
    assert len(list(read_blocks(source, "markdown", limit=2))) == 2


def test_html_item_with_inner_paragraph_and_split_word(tmp_path):
    path = tmp_path / "nested.html"
    path.write_text(
        "<ul><li><p>Build <b>c</b>ities now.</p></li><li>Second</li></ul><p>After.</p>",
        encoding="utf-8",
    )
    blocks = list(read_blocks(inspect_file(path), "html"))
    assert [(b.text, b.kind) for b in blocks] == [
        ("Build cities now.", "item"),
        ("Second", "item"),
        ("After.", "paragraph"),
    ]
