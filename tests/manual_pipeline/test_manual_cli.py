"""`nlmcs manual ...` end to end, and every kind of bad input: exit 2, one line, nothing written."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from manual_fixtures import FIXTURES, FREECIV_DIR

from nlmcs.cli import build_parser


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes (hidden temporaries included)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_ingest_prints_summary_then_no_op(data_root, cli):
    code, out, err = cli("manual", "ingest", FIXTURES / "guide.md")
    assert code == 0, err
    assert f"stored {data_root / 'manuals' / 'guide'}" in out
    for label in ("sentences", "words per sentence", "vocabulary", "tokens", "seconds"):
        assert any(line.startswith(label) for line in out.splitlines()), label
    code, out, _ = cli("manual", "ingest", FIXTURES / "guide.md")
    assert code == 0 and "unchanged since" in out


def test_list_show_and_shuffle(data_root, cli):
    cli("manual", "ingest", FIXTURES / "guide.html", "--name", "html-guide")
    code, out, _ = cli("manual", "list")
    assert code == 0
    assert "html-guide" in out and "sentences" in out.splitlines()[0]
    code, out, _ = cli("manual", "show", "html-guide", "--grep", "Phalanx", "--limit", "1")
    assert code == 0
    first = out.splitlines()
    assert first[0].startswith("#") and "phalanx" in first[1].lower()
    assert first[2].split() == ["i", "token", "lemma", "stem", "pos", "tag", "dep", "head", "flags"]
    code, out, _ = cli("manual", "show", "html-guide", "--sentence", "0")
    assert code == 0 and out.startswith("#0  [Early Game]\nFound your first city")
    code, out, _ = cli("manual", "show", "html-guide", "--grep", "zeppelin")
    assert code == 1 and "no sentence contains" in out
    code, out, _ = cli("manual", "shuffle", "html-guide", "--seed", "5")
    assert code == 0 and "random twin of      html-guide (seed 5)" in out
    code, out, _ = cli("manual", "list")
    assert "random twin of html-guide (seed 5)" in out


def test_freeciv_fixture_directory_ingests(data_root, cli):
    code, out, err = cli("manual", "ingest", FIXTURES / "freeciv", "--name", "mini-freeciv")
    assert code == 0, err
    assert "(freeciv)" in out


@pytest.mark.skipif(not (FREECIV_DIR / "civ2").is_dir(), reason="freeciv-data is not installed")
def test_installed_freeciv_ruleset_ingests_shuffles_shows(data_root, cli):
    code, out, err = cli("manual", "ingest", FREECIV_DIR / "civ2", "--name", "civ2")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("sentences"))
    sentences = int(line.split()[1].replace(",", ""))
    assert sentences > 200
    assert cli("manual", "shuffle", "civ2")[0] == 0
    code, out, _ = cli("manual", "show", "civ2-random", "--sentence", "3")
    assert code == 0 and out.startswith("#3")


def test_bench_prints_figures(data_root, cli):
    code, out, err = cli("bench", "manual", "--sentences", "40", "--source", FIXTURES / "guide.md")
    assert code == 0, err
    assert "sentences per second (parse)" in out and "peak memory (MB RSS)" in out
    assert "model load (s)" in out
    count = int(next(line for line in out.splitlines() if line.startswith("sentences ")).split()[1])
    assert count >= 40


def test_every_subcommand_help_ends_with_an_example(capsys):
    parser = build_parser()
    for args in (["manual"], ["manual", "ingest"], ["manual", "shuffle"], ["manual", "show"],
                 ["manual", "list"], ["bench", "manual"]):  # fmt: skip
        with pytest.raises(SystemExit):
            parser.parse_args([*args, "--help"])
        out = capsys.readouterr().out
        assert "example:\n  nlmcs " in out, args


def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (extra CLI args, expected message part). All try to overwrite manual 'guide'."""
    (tmp / "empty.txt").write_bytes(b"")
    (tmp / "blank.md").write_text("\n\n   \n# Only a heading\n\n", encoding="utf-8")
    (tmp / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (tmp / "latin.txt").write_bytes(b"Settlers \x81\x8d build cities.\n")
    (tmp / "nomanual").mkdir()
    (tmp / "nomanual" / "notes.bin").write_bytes(b"x")
    (tmp / "big.txt").write_text("Build roads near the river. " * 400, encoding="utf-8")
    return {
        "empty": ([str(tmp / "empty.txt")], "file is empty"),
        "no text": ([str(tmp / "blank.md")], "no sentences found"),
        "binary": ([str(tmp / "binary.txt")], "binary file"),
        "encoding": ([str(tmp / "latin.txt")], "not UTF-8 text (invalid byte 0x81"),
        "empty dir": ([str(tmp / "nomanual")], "no manual in this directory"),
        "syntax": ([str(FIXTURES / "bad.ruleset")], "bad.ruleset: line 5: string is never closed"),
        "huge": ([str(tmp / "big.txt"), "--max-mb", "0.001"], "over the 0.001 MB limit"),
        "missing": ([str(tmp / "nothere.txt")], "no such file or directory"),
        "text format on a dir": ([str(tmp / "nomanual"), "--format", "text"], "is a directory"),
    }


BAD = ["empty", "no text", "binary", "encoding", "empty dir", "syntax", "huge", "missing",
       "text format on a dir"]  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_line_exit_2_and_nothing_changes(
    data_root, cli, tmp_path, monkeypatch, case
):
    assert cli("manual", "ingest", FIXTURES / "guide.txt", "--name", "guide")[0] == 0
    before = _snapshot(data_root)

    def no_spacy(*args, **kwargs):
        raise AssertionError("bad input must be refused before the model loads")

    monkeypatch.setattr("manual_pipeline.ingest.load_model", no_spacy)
    args, message = _bad_inputs(tmp_path)[case]
    code, out, err = cli("manual", "ingest", *args, "--name", "guide")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert "Traceback" not in err and out == ""
    assert _snapshot(data_root) == before  # stored manual untouched, no temporaries left


@pytest.mark.parametrize("name", ["a/b", "../escape", "a\\b", ".."])
def test_names_with_path_separators_are_refused(data_root, cli, name):
    code, out, err = cli("manual", "ingest", FIXTURES / "guide.txt", "--name", name)
    assert code == 2 and err.startswith("error: bad manual name") and err.count("\n") == 1
    assert not data_root.exists() or not any(data_root.rglob("*.parquet"))


def test_target_under_a_file_is_refused(data_root, cli, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    code, _, err = cli("manual", "ingest", FIXTURES / "guide.txt", "--out", blocker / "guide")
    assert code == 2 and err.startswith("error: cannot write under") and err.count("\n") == 1
    assert blocker.read_text() == "not a directory"


def test_out_onto_a_foreign_directory_is_refused(data_root, cli, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    code, _, err = cli("manual", "ingest", FIXTURES / "guide.txt", "--out", foreign)
    assert code == 2 and "is not a stored manual" in err
    assert (foreign / "keep.txt").read_text() == "precious"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only directories")
def test_read_only_target_directory_is_refused(data_root, cli, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, _, err = cli("manual", "ingest", FIXTURES / "guide.txt", "--out", locked / "guide")
    finally:
        locked.chmod(0o755)
    assert code == 2 and err.startswith("error: cannot write under") and err.count("\n") == 1
    assert list(locked.iterdir()) == []


def test_utf16_and_cp1252_files_ingest(data_root, cli, tmp_path):
    text = "Settlers found cities near rivers. The caf\u00e9 sells \u201cwine\u201d.\n"
    (tmp_path / "u16.txt").write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    (tmp_path / "win.txt").write_bytes(text.encode("cp1252"))
    for name in ("u16", "win"):
        code, out, err = cli("manual", "ingest", tmp_path / f"{name}.txt")
        assert code == 0, err
        code, out, _ = cli("manual", "show", name, "--sentence", "1")
        assert "caf\u00e9" in out and "\u201cwine\u201d" in out


def test_show_and_shuffle_of_unknown_or_corrupt_manual(data_root, cli):
    code, _, err = cli("manual", "show", "nothing")
    assert code == 2 and err.startswith("error: ") and "no stored manual" in err
    code, _, err = cli("manual", "shuffle", "nothing")
    assert code == 2 and err.count("\n") == 1
    broken = data_root / "manuals" / "broken"
    broken.mkdir(parents=True)
    (broken / "meta.json").write_text("[1, 2")
    code, _, err = cli("manual", "show", "broken")
    assert code == 2 and "corrupt metadata" in err
    code, out, _ = cli("manual", "list")
    assert code == 0 and "unreadable" in out
    code, _, err = cli("manual", "show", "nothing", "--limit", "0")
    assert code == 2 and "--limit" in err
