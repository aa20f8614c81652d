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
