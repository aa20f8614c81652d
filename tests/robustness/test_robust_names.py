"""Names and paths: every named store refuses a name that is a path, before anything is written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from robust_support import FIXTURES, assert_refused, assert_store_kept, run, tree_digest

from nlmcs.errors import UserInputError

BAD_NAMES = ["../../x", "../x", "ABSOLUTE", "a/b", ".hidden", "..", "", "x" * 101, "sp ace",
             "a\\b"]
"""ABSOLUTE stands for a path under the test's own folder."""


@pytest.mark.parametrize("name", BAD_NAMES)
def test_corpus_ingest_refuses_a_name_that_is_a_path(name, env, data, tmp_path, logs):
    log = logs()
    name = str(tmp_path / "elsewhere") if name == "ABSOLUTE" else name
    before = tree_digest(tmp_path)
    result = run("corpus", "ingest", log, "--name", name, env=env)
    # an empty value is refused for every option alike, before the name is looked at
    assert_refused(result, "--name: an empty value" if name == "" else "bad corpus name")
    assert_store_kept(tmp_path, before)  # nothing written, inside the store or out of it


@pytest.mark.parametrize("name", ["../../x", "ABSOLUTE", "a/b"])
def test_corpus_record_refuses_a_name_that_is_a_path(name, env, tmp_path):
    name = str(tmp_path / "elsewhere") if name == "ABSOLUTE" else name
    before = tree_digest(tmp_path)
    result = run("corpus", "record", "--name", name, "--games", "1", "--preset", "tiny",
                 "--workers", "1", env=env)
    assert_refused(result, "bad corpus name")
    assert_store_kept(tmp_path, before)


@pytest.mark.parametrize("name", ["../../x", "ABSOLUTE", "a/b", ".hidden"])
def test_manual_ingest_refuses_a_name_that_is_a_path(name, env, tmp_path):
    name = str(tmp_path / "elsewhere") if name == "ABSOLUTE" else name
    before = tree_digest(tmp_path)
    result = run("manual", "ingest", FIXTURES / "guide.txt", "--name", name, env=env)
    assert_refused(result, "bad manual name")
    assert_store_kept(tmp_path, before)


@given(st.text(max_size=120))
def test_an_accepted_name_stays_inside_the_store(name):
    from pathlib import PurePosixPath

    from nlmcs.paths import validate_store_name

    try:
        checked = validate_store_name(name, kind="corpus")
    except UserInputError as err:
        assert "\n" not in str(err)
        return
    path = PurePosixPath("/store") / checked
    assert path.parent == PurePosixPath("/store") and not checked.startswith(".")


def test_control_characters_and_huge_values_in_messages_are_shown_safely(cli, tmp_path):
    """Issue 60 class 9: a name with a terminal escape was echoed raw (the terminal acted on
    it), and a huge value was echoed whole."""
    result = cli("game", "render", tmp_path / "\x1b[2Jx\x07.json")
    assert result.code == 2 and "\x1b" not in result.err and "\x07" not in result.err
    assert "\\x1b[2Jx\\x07.json" in result.err and result.err.count("\n") == 1
    result = cli("game", "render", tmp_path / ("y" * 200_000))
    assert result.code == 2 and len(result.err) < 1200 and "characters not shown" in result.err


def test_a_log_compared_with_itself_is_refused(cli, tmp_path):
    """Issue 60 class 9: comparisons that compare nothing (a thing with itself)."""
    from relevance_records import records, write

    log = write(tmp_path / "a.jsonl", records())
    link = tmp_path / "b.jsonl"
    link.symlink_to(log)
    assert_refused(cli("relevance", "report", log, "--compare", link, "--html",
                       tmp_path / "r.html"), "the log itself")
    assert not (tmp_path / "r.html").exists()


def test_no_corpus_is_stored_under_the_shipped_corpus_s_name(cli, data, logs):
    """Issue 60 class 7: a corpus recorded as civ-sample silently hid the shipped one from every
    command that names it."""
    for args in (("corpus", "ingest", logs(), "--name", "civ-sample"),
                 ("corpus", "record", "--games", "1", "--name", "civ-sample", "--max-turns",
                  "2", "--preset", "tiny")):
        assert_refused(cli(*args), "is the shipped corpus's")
    assert not (data / "corpora" / "civ-sample").exists()
