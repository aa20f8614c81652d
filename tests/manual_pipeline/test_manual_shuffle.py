"""The random-text twin keeps lengths, the word multiset and the parse shape, and is seeded."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from manual_pipeline.errors import ManualError
from manual_pipeline.shuffle import join_tokens, make_random_twin, shuffle_tokens
from manual_pipeline.store import load_manual, vocabulary


@pytest.fixture(scope="module")
def twin(stored_root):
    return make_random_twin("guide", seed=7, root=stored_root)


def test_every_sentence_keeps_its_length(guide, twin):
    before = guide.tokens.groupby("sentence_id").size()
    after = twin.tokens.groupby("sentence_id").size()
    assert before.tolist() == after.tolist()
    words_before = guide.tokens[~guide.tokens["is_punct"]].groupby("sentence_id").size()
    words_after = twin.tokens[~twin.tokens["is_punct"]].groupby("sentence_id").size()
    assert words_before.tolist() == words_after.tolist()


def test_document_keeps_its_multiset_of_words(guide, twin):
    for column in ("text", "lower", "lemma", "stem"):
        assert Counter(guide.tokens[column]) == Counter(twin.tokens[column])
    assert vocabulary(guide, min_count=1) == vocabulary(twin, min_count=1)
    assert twin.meta["counts"] == guide.meta["counts"]


def test_content_actually_changes_and_words_stay_whole(guide, twin):
    moved = (guide.tokens["text"] != twin.tokens["text"]).mean()
    assert moved > 0.5
    changed = (guide.sentences["text"] != twin.sentences["text"]).mean()
    assert changed > 0.8
    pairs = set(zip(guide.tokens["text"], guide.tokens["lemma"], guide.tokens["stem"], strict=True))
    for row in twin.tokens.itertuples():
        assert (row.text, row.lemma, row.stem) in pairs  # a word moves with its own lemma/stem


def test_parse_structure_and_punctuation_stay(guide, twin):
    for column in ("sentence_id", "token_index", "pos", "tag", "dep", "head", "is_punct"):
        pd.testing.assert_series_equal(guide.tokens[column], twin.tokens[column])
    punct = guide.tokens["is_punct"]
    assert (guide.tokens.loc[punct, "text"] == twin.tokens.loc[punct, "text"]).all()
    assert guide.sentences["section"].tolist() == twin.sentences["section"].tolist()


def test_seed_reproducible_and_different_seeds_differ(guide):
    a = shuffle_tokens(guide.tokens, seed=3)
    b = shuffle_tokens(guide.tokens, seed=3)
    c = shuffle_tokens(guide.tokens, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert (a["text"] != c["text"]).any()


def test_twin_is_stored_with_seed_and_source(stored_root, twin, guide):
    assert twin.name == "guide-random"
    assert twin.directory == stored_root / "guide-random"
    loaded = load_manual("guide-random", root=stored_root)
    assert loaded.meta["random"]["seed"] == 7
    assert loaded.meta["random"]["source"] == "guide"
    assert loaded.meta["random"]["source_sha256"] == guide.meta["source"]["sha256"]
    assert loaded.meta["source"] == guide.meta["source"]
    assert loaded.sentences["text"].tolist() == twin.sentences["text"].tolist()


def test_same_seed_rewrites_the_same_twin(stored_root, twin):
    again = make_random_twin("guide", seed=7, root=stored_root)
    pd.testing.assert_frame_equal(again.tokens, twin.tokens)
    pd.testing.assert_frame_equal(again.sentences, twin.sentences)


def test_twin_of_twin_is_refused(stored_root, twin):
    with pytest.raises(ManualError, match="already a random-text twin"):
        make_random_twin("guide-random", root=stored_root)


def test_join_tokens_spacing():
    assert join_tokens(["Build", "a", "city", ",", "then", "(", "walls", ")", "."]) == (
        "Build a city, then (walls)."
    )
