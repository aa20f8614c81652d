"""Encoding, binary and size checks, and the bounded memory of streaming reads."""

from __future__ import annotations

import codecs
import hashlib
import tracemalloc

import pytest

from manual_pipeline.errors import ManualError
from manual_pipeline.readers import MAX_BLOCK_CHARS, read_blocks
from manual_pipeline.textio import inspect_file

TEXT = "Settlers found cities near rivers. Café owners irrigate the plains.\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8-sig"),
        (TEXT.encode("utf-16"), "utf-16"),
        (TEXT.encode("utf-16-le"), "utf-16-le"),
        (TEXT.encode("utf-16-be"), "utf-16-be"),
        (TEXT.encode("utf-32"), "utf-32"),
        (TEXT.replace("Café", "Caf\u00e9 \u201cquoted\u201d").encode("cp1252"), "cp1252"),
    ],
)
def test_encodings_are_detected_and_decode_to_the_same_text(tmp_path, data, encoding):
    path = tmp_path / "manual.txt"
    path.write_bytes(data)
    source = inspect_file(path)
    assert source.encoding == encoding
    blocks = list(read_blocks(source, "text"))
    assert blocks[0].text.startswith("Settlers found cities near rivers.")
    assert "Caf\u00e9" in blocks[0].text


def test_sha256_and_size(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"Build roads.\n")
    source = inspect_file(path)
    assert source.size == 13
    assert source.sha256 == hashlib.sha256(b"Build roads.\n").hexdigest()


def test_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with pytest.raises(ManualError, match="empty"):
        inspect_file(path)


@pytest.mark.parametrize("offset", [10, 3 * 1024 * 1024])
def test_nul_bytes_mean_binary(tmp_path, offset):
    path = tmp_path / "image.txt"
    path.write_bytes(b"a" * offset + b"\x00\x01\x02" + b"b" * 100)
    with pytest.raises(ManualError, match="binary"):
        inspect_file(path)


def test_undecodable_text_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "weird.txt"
    # invalid UTF-8 (0x81 cannot start a character) and 0x81 is unassigned in cp1252
    path.write_bytes(b"Settlers \x81\x8d build cities.\n")
    with pytest.raises(ManualError, match=r"not UTF-8 text \(invalid byte 0x81 at byte 9\)"):
        inspect_file(path)


def test_control_heavy_cp1252_is_not_taken_for_text(tmp_path):
    path = tmp_path / "controls.txt"
    path.write_bytes(bytes(range(1, 32)) * 20 + b"\xe9")
    with pytest.raises(ManualError, match="not UTF-8"):
        inspect_file(path)


def test_size_limit(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"Build roads. " * 1000)
    with pytest.raises(ManualError, match="over the 0.001 MB limit"):
        inspect_file(path, max_bytes=1000)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(ManualError, match="is a directory"):
        inspect_file(tmp_path)


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _peak_reading(path, fmt: str) -> int:
    def consume():
        source = inspect_file(path, max_bytes=None)
        for block in read_blocks(source, fmt):
            assert len(block.text) <= MAX_BLOCK_CHARS

    return _peak_bytes(consume)


def _write_markdown(path, sections: int) -> int:
    paragraph = ("Settlers should irrigate grassland beside a river. " * 6 + "\n") * 3 + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(sections):
            fh.write(f"## Section {i}\n\n- item {i}\n\n{paragraph}")
    return path.stat().st_size


def test_checking_and_reading_a_large_file_streams(tmp_path):
    small, large = tmp_path / "small.md", tmp_path / "large.md"
    _write_markdown(small, 1_000)
    size = _write_markdown(large, 4_000)
    assert size > 3_500_000
    peak_small, peak_large = _peak_reading(small, "markdown"), _peak_reading(large, "markdown")
    # memory does not grow with the file: 4x the text, about the same peak, far below the size
    assert peak_large < 1.25 * peak_small + 100_000
    assert peak_large < size / 3


def test_one_huge_line_is_read_in_bounded_pieces(tmp_path):
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    small.write_text("Build a road to the city. " * 25_000, encoding="utf-8")  # 0.65 MB, one line
    large.write_text("Build a road to the city. " * 100_000, encoding="utf-8")  # 2.6 MB, one line
    source = inspect_file(large, max_bytes=None)
    assert sum(len(b.text) for b in read_blocks(source, "text")) > 2_500_000
    peak_small, peak_large = _peak_reading(small, "text"), _peak_reading(large, "text")
    assert peak_large < 1.25 * peak_small + 100_000
    assert peak_large < large.stat().st_size / 2
