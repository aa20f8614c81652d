"""Silent replacement and silent damage: another file under a stored name needs --force; a data
file damaged after it was stored is named by `list`/`stats` and on load, and re-ingest repairs."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_support import (
    FIXTURES,
    assert_clean,
    assert_refused,
    assert_store_kept,
    hidden_leftovers,
    ordinary_mode,
    run,
    tree_digest,
)

from nlmcs.errors import UserInputError


@pytest.fixture(scope="module")
def guide_template(tmp_path_factory):
    """guide.md stored as manual `guide` by a real ingest, once per module."""
    data = tmp_path_factory.mktemp("template")
    env = {**os.environ, "NLMCS_DATA": str(data)}
    assert_clean(run("manual", "ingest", FIXTURES / "guide.md", "--name", "guide", env=env))
    return data / "manuals" / "guide"


@pytest.fixture
def stored_guide(data, guide_template):
    """A copy of the stored guide in this test's data folder."""
    target = data / "manuals" / "guide"
    shutil.copytree(guide_template, target)
    return target


def test_another_file_under_a_stored_manual_name_needs_force(env, data, stored_guide):
    assert_clean(run("manual", "ingest", FIXTURES / "guide.md", "--name", "guide", env=env))
    before = tree_digest(data)
    result = run("manual", "ingest", FIXTURES / "guide.txt", "--name", "guide", env=env)
    assert_refused(result, "guide", "holds another file", "--force")
    assert_store_kept(data, before)
    forced = run("manual", "ingest", FIXTURES / "guide.txt", "--name", "guide", "--force",
                 env=env)
    assert_clean(forced)
    meta = json.loads((stored_guide / "meta.json").read_text())
    assert meta["source"]["path"] == str((FIXTURES / "guide.txt").resolve())


def test_stored_manual_files_have_ordinary_permissions(guide_template):
    for path in guide_template.iterdir():
        assert path.stat().st_mode & 0o777 == ordinary_mode(), path


@pytest.mark.parametrize("damage", ["truncate", "fewer rows"])
def test_a_damaged_manual_is_named_and_repaired_by_re_ingest(damage, env, data, stored_guide):
    tokens = stored_guide / "tokens.parquet"
    if damage == "truncate":
        tokens.write_bytes(tokens.read_bytes()[:100])
    else:  # a valid parquet file with fewer rows
        table = pq.read_table(tokens)
        pq.write_table(table.slice(0, table.num_rows - 3), tokens)
    listing = run("manual", "list", env=env)
    assert_clean(listing)
    line = next(x for x in listing.out.splitlines() if x.startswith("guide"))
    assert "tokens.parquet" in line and "re-ingest" in line
    assert_refused(run("manual", "show", "guide", env=env), "tokens.parquet")
    repaired = run("manual", "ingest", FIXTURES / "guide.md", "--name", "guide", env=env)
    assert_clean(repaired)
    assert "stored" in repaired.out  # parsed again, not "unchanged"
    assert_clean(run("manual", "show", "guide", env=env))
    assert hidden_leftovers(data / "manuals") == []


@pytest.fixture
def stored_corpus(env, data, logs):
    log = logs(games=3)
    assert_clean(run("corpus", "ingest", log, "--name", "demo", env=env))
    return data / "corpora" / "demo", log


@pytest.mark.parametrize("target,damage", [
    ("decisions-0001.parquet", "truncate"), ("decisions-0001.parquet", "fewer rows"),
    ("games-0001.parquet", "delete"), ("decisions-0001.parquet", "delete")])
def test_a_damaged_corpus_is_named_and_repaired_by_re_ingest(target, damage, env, stored_corpus):
    directory, log = stored_corpus
    path = directory / target
    healthy = run("corpus", "stats", "demo", env=env).out
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:-50])
    elif damage == "delete":
        path.unlink()
    else:
        table = pq.read_table(path)
        pq.write_table(table.slice(0, table.num_rows - 5), path)
    assert_refused(run("corpus", "stats", "demo", env=env), target)
    listing = run("corpus", "list", env=env)
    assert_clean(listing)
    line = next(x for x in listing.out.splitlines() if x.split()[:1] == ["demo"])
    assert "damaged" in line and target in line
    assert_refused(run("corpus", "export", "demo", "--out", directory.parent / "copy", env=env),
                   target)
    repaired = run("corpus", "ingest", log, "--name", "demo", env=env)
    assert_clean(repaired)
    assert "rebuilding corpus demo" in repaired.err
    again = run("corpus", "stats", "demo", env=env)
    assert_clean(again)
    assert again.out == healthy


def test_a_corpus_whose_logs_are_gone_says_how_to_recover(env, stored_corpus, logs):
    directory, log = stored_corpus
    (directory / "decisions-0001.parquet").unlink()
    log.unlink()
    other = logs("other.jsonl", games=1, first=50)
    result = run("corpus", "ingest", other, "--name", "demo", env=env)
    assert_refused(result, "cannot be rebuilt", str(log))


@pytest.mark.parametrize("meta", ["[]", '"text"', "{}", '{"format": "nlmcs-corpus-store/1"}',
                                  '{"format": "nlmcs-corpus-store/1", "parts": 3}', "{not json"])
def test_a_corpus_meta_of_the_wrong_shape_is_one_line(meta, cli, stored_corpus):
    directory, log = stored_corpus
    (directory / "meta.json").write_text(meta)
    assert_refused(cli("corpus", "stats", "demo"), "meta.json")
    assert_refused(cli("corpus", "ingest", log, "--name", "demo"), "meta.json")
    listing = cli("corpus", "list")
    assert_clean(listing)
    assert "meta.json" in next(x for x in listing.out.splitlines() if x.split()[:1] == ["demo"])


@pytest.mark.parametrize("meta", ["[]", "{}", '{"format": "nlmcs-manual/1", "counts": []}',
                                  '{"format": "nlmcs-manual/1", "files": {"a": 1}}'])
def test_a_manual_meta_of_the_wrong_shape_is_one_line(meta, cli, stored_guide):
    (stored_guide / "meta.json").write_text(meta)
    assert_refused(cli("manual", "show", "guide"), "meta.json")
    listing = cli("manual", "list")
    assert_clean(listing)
    assert "meta.json" in next(x for x in listing.out.splitlines() if x.startswith("guide"))


def test_a_head_index_outside_its_sentence_is_refused(cli, stored_guide):
    import pyarrow as pa

    tokens = stored_guide / "tokens.parquet"
    table = pq.read_table(tokens)
    head = table["head"].to_pylist()
    head[0] = 10_000
    pq.write_table(table.set_column(table.schema.get_field_index("head"), "head",
                                    pa.array(head, pa.int64())), tokens)
    meta = json.loads((stored_guide / "meta.json").read_text())
    meta.pop("files")  # as an artifact from before the checksums: only the parse can tell
    (stored_guide / "meta.json").write_text(json.dumps(meta))
    assert_refused(cli("manual", "show", "guide"), "head 10000")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


@pytest.fixture(scope="module")
def corpus_template(tmp_path_factory):
    """A corpus of two games stored by the library, once per module."""
    from corpus_logs import game_lines, write_log

    from corpus.store import ingest

    folder = tmp_path_factory.mktemp("corpus")
    log = write_log(folder / "a.jsonl", [game_lines(f"g{i}", seed=i) for i in range(2)])
    return ingest([log], name="demo", root=folder / "store").directory


def _mutate_meta(template, key: str, value, tmp: str):
    """A copy of the store at `template` with meta.json's `key` set to `value` (a dotted key
    reaches into an object)."""
    copy = Path(tmp) / template.name
    shutil.copytree(template, copy)
    meta = json.loads((copy / "meta.json").read_text())
    *outer, last = key.split(".")
    inner = meta
    for part in outer:
        inner = inner[part]
    inner[last] = value
    (copy / "meta.json").write_text(json.dumps(meta))
    return copy


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(["format", "name", "game", "ruleset", "feature_names", "parts",
                            "games_file", "sources", "counts", "counts.games",
                            "counts.decisions", "counts.agents", "files", "ruleset_sha256"]),
       value=JSON)
def test_any_corpus_meta_field_is_loaded_or_refused(corpus_template, key, value):
    from corpus.store import load_corpus

    with tempfile.TemporaryDirectory() as tmp:
        copy = _mutate_meta(corpus_template, key, value, tmp)
        try:
            load_corpus(copy)
        except UserInputError as err:
            assert "\n" not in str(err) and str(copy) in str(err)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(["format", "name", "source", "counts", "counts.sentences",
                            "counts.tokens", "files", "parser", "random"]),
       value=JSON)
def test_any_manual_meta_field_is_loaded_or_refused(guide_template, key, value):
    from manual_pipeline.store import list_manuals, load_manual

    with tempfile.TemporaryDirectory() as tmp:
        copy = _mutate_meta(guide_template, key, value, tmp)
        try:
            load_manual(copy)
        except UserInputError as err:
            assert "\n" not in str(err) and str(copy) in str(err)
        for name, meta, problem in list_manuals(root=Path(tmp)):
            assert name == copy.name and (meta is None) == (problem is not None)


# --- derived artifacts: a twin belongs to its manual as it is now ------------------------------
TWIN_GAME = ["play", "--method", "random-text", "--map", "tiny", "--steps", "1", "--rollouts",
             "2", "--depth", "2", "--no-progress"]  # fmt: skip


def test_a_twin_is_shuffled_again_when_its_manual_is_ingested_again(cli, data):
    from manual_pipeline.store import read_meta

    assert_clean(cli("manual", "ingest", FIXTURES / "guide.md", "--name", "g"))
    assert_clean(cli(*TWIN_GAME, "--manual", "g"))  # builds g-random
    first = read_meta(data / "manuals" / "g-random")["random"]["source_sha256"]
    assert_clean(cli("manual", "ingest", FIXTURES / "guide.txt", "--name", "g", "--force"))
    assert_clean(cli(*TWIN_GAME, "--manual", "g"))
    now = read_meta(data / "manuals" / "g")["source"]["sha256"]
    twin = read_meta(data / "manuals" / "g-random")["random"]
    assert first != now and twin["source_sha256"] == now and twin["seed"] == 0


def test_a_manual_named_like_a_twin_is_refused(cli, data):
    assert_clean(cli("manual", "ingest", FIXTURES / "guide.md", "--name", "g"))
    before = tree_digest(data)
    for name in ("g-random", "g-random-7"):
        assert_refused(cli("manual", "ingest", FIXTURES / "guide.txt", "--name", name),
                       name, "twins' names")
    assert_store_kept(data, before)
    # one put there by hand (a copy of a manual) is not read as g's twin
    shutil.copytree(data / "manuals" / "g", data / "manuals" / "g-random")
    assert_refused(cli(*TWIN_GAME, "--manual", "g"), "g-random", "not the random-text twin")
