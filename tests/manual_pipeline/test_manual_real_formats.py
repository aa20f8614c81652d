"""The formats real manuals come in: gzip-compressed text (Debian ships FreeCiv's HOWTOPLAY so)
and the 2011 release's one sentence a line (a stand-in file here: the release's manual is not
ours to ship)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from manual_pipeline.errors import ManualError
from manual_pipeline.ingest import ingest
from manual_pipeline.readers import detect_format, looks_like_lines, read_blocks
from manual_pipeline.store import load_manual
from manual_pipeline.textio import inspect_file

PROSE = """Founding cities

Settlers found cities on grassland near rivers. Cities on hills are easier
to defend against an enemy attack.

Workers irrigate plains and build roads between cities.
"""

# One sentence a line, as the release's manual: headings in capitals with a detached stop, and
# one line holding two sentences that the file says are one.
LINES = "\n".join(
    ["BUILDING YOUR FIRST CITY ."]
    + [f"Settlers number {i} can found a city on grassland near a river." for i in range(12)]
    + ["To see the grid press G. Before you move, look at the terrain."]
    + ["COMBAT ."]
    + [f"A phalanx number {i} defends a city on hills against an attack." for i in range(12)]
) + "\n"


def test_a_gzip_file_is_read_through_its_text_whatever_its_name(tmp_path):
    plain = tmp_path / "guide.txt"
    plain.write_text(PROSE, encoding="utf-8")
    for name in ("HOWTOPLAY.gz", "no-suffix"):
        packed = tmp_path / name
        packed.write_bytes(gzip.compress(PROSE.encode("utf-8")))
        source = inspect_file(packed)
        assert source.compression == "gzip"
        assert source.size == packed.stat().st_size
        assert [b.text for b in read_blocks(source, "text")] == \
            [b.text for b in read_blocks(inspect_file(plain), "text")]


def test_a_gzip_manual_ingests_and_records_its_compression(tmp_path):
    packed = tmp_path / "HOWTOPLAY.de.gz"
    packed.write_bytes(gzip.compress(PROSE.encode("cp1252")))
    result = ingest(packed, root=tmp_path / "store")
    assert result.meta["name"] == "HOWTOPLAY.de"
    assert result.meta["source"]["format"] == "text"
    assert result.meta["source"]["files"][0]["compression"] == "gzip"
    assert result.meta["counts"]["sentences"] == 3  # the heading names a section


@pytest.mark.parametrize(("data", "message"), [
    (b"plain text, not compressed\n", "named .gz but not gzip-compressed"),
    (gzip.compress(PROSE.encode())[:30], "not a valid gzip file"),
    (gzip.compress(b"\x00\x01\x02binary"), "binary"),
    (gzip.compress(b""), "empty"),
])
def test_a_bad_gzip_is_refused_in_one_line_and_stores_nothing(tmp_path, data, message):
    path = tmp_path / "manual.gz"
    path.write_bytes(data)
    store = tmp_path / "store"
    with pytest.raises(ManualError, match=message) as err:
        ingest(path, name="m", root=store)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert not (store / "m").exists()


def test_a_gzip_bomb_is_refused_by_its_decompressed_size(tmp_path):
    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(b"Build roads. " * 200_000))
    with pytest.raises(ManualError, match="decompressed"):
        inspect_file(path, max_bytes=1_000_000)


def test_detect_format_looks_under_gz(tmp_path):
    assert detect_format(Path("guide.md.gz")) == "markdown"
    assert detect_format(Path("HOWTOPLAY.gz")) == "text"


def test_one_sentence_a_line_is_recognised_and_each_line_is_one_sentence(tmp_path):
    path = tmp_path / "civ_manual.txt"
    path.write_text(LINES, encoding="utf-8")
    prose = tmp_path / "prose.txt"
    prose.write_text(PROSE * 10, encoding="utf-8")
    assert looks_like_lines(inspect_file(path))
    assert not looks_like_lines(inspect_file(prose))
    paragraphs = tmp_path / "one-paragraph-a-line.txt"  # as word processors export text
    paragraphs.write_text("Settlers found cities. Workers build roads. Warriors defend them.\n"
                          * 30, encoding="utf-8")
    assert not looks_like_lines(inspect_file(paragraphs))
    result = ingest(path, name="lines", root=tmp_path / "store")
    assert result.meta["source"]["format"] == "lines"
    manual = load_manual("lines", root=tmp_path / "store")
    texts = list(manual.sentences["text"])
    # 25 sentence lines; the two headings are sections, not sentences
    assert len(texts) == 25
    assert "To see the grid press G. Before you move, look at the terrain." in texts
    assert list(manual.sentences["section"])[0] == "BUILDING YOUR FIRST CITY"
    assert list(manual.sentences["section"])[-1] == "COMBAT"
    # the same file read as running text runs its lines together into spaCy's sentences
    other = ingest(path, name="text", fmt="text", root=tmp_path / "store")
    assert other.meta["counts"]["sentences"] != 25


def test_a_line_closed_by_a_curly_quote_is_no_heading(tmp_path):
    path = tmp_path / "novel.txt"
    path.write_text("\u201cAh, you do not know what I suffer.\u201d\n\n"
                    "Mr. Bennet was so odd a mixture of quick parts.\n", encoding="utf-8")
    blocks = list(read_blocks(inspect_file(path), "text"))
    assert [b.text for b in blocks][0] == "\u201cAh, you do not know what I suffer.\u201d"
    assert all(b.section == "" for b in blocks)


def test_a_manual_too_small_to_read_is_named_with_what_min_count_would_keep(tmp_path, capsys):
    from manual_pipeline.store import vocabulary_warning
    from nlmcs.cli import main

    small = tmp_path / "tiny.txt"
    small.write_text(PROSE, encoding="utf-8")
    ingest(small, name="tiny", root=tmp_path / "store")
    warning = vocabulary_warning(load_manual("tiny", root=tmp_path / "store"), min_count=5)
    assert warning.startswith("warning: tiny: the text model keeps only 0 stems at --min-count 5")
    assert "--min-count 1 would keep" in warning
    assert main(["manual", "ingest", str(small), "--name", "tiny2"]) == 0
    assert "too few words to read much" in capsys.readouterr().err
    # the shipped guide is readable at the default
    from nlmcs.model.manuals import resolve_manual

    assert vocabulary_warning(resolve_manual("civ-guide"), min_count=5) is None
