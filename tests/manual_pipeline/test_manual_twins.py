"""Twins by seed (NAME-random-SEED): the stored twin's content, kept in the store as a small word
order only, read back rather than drawn again, rebuilt when the manual's words change."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from manual_pipeline import twins
from manual_pipeline.shipped import load_or_build
from manual_pipeline.shuffle import make_random_twin
from manual_pipeline.store import list_manuals
from manual_pipeline.twins import order_path, parse_seeded, seeded_name, seeded_twin


@pytest.fixture
def root(stored_root, tmp_path):
    """A private copy of the manuals root holding `guide`."""
    copy = tmp_path / "manuals"
    shutil.copytree(stored_root / "guide", copy / "guide")
    return copy


def test_a_seeded_twin_is_the_twin_that_seed_stores(root, guide):
    stored = make_random_twin("guide", seed=7, root=root)
    seeded = seeded_twin(guide, 7, root=root)
    assert seeded.name == "guide-random-7" == seeded_name("guide", 7)
    pd.testing.assert_frame_equal(seeded.tokens, stored.tokens)
    pd.testing.assert_frame_equal(seeded.sentences, stored.sentences)
    assert seeded.meta["random"]["seed"] == 7 and seeded.meta["random"]["source"] == "guide"
    assert seeded.meta["counts"] == guide.meta["counts"] and "files" not in seeded.meta
    other = seeded_twin(guide, 8, root=root)
    assert (other.tokens["text"] != seeded.tokens["text"]).any()


def test_the_store_keeps_only_a_small_word_order_and_reads_it_back(root, guide, monkeypatch):
    seeded_twin(guide, 3, root=root)
    path = order_path("guide", 3, root=root)
    twin_bytes = sum(p.stat().st_size for p in (root / "guide").iterdir())
    words = int((~guide.tokens["is_punct"]).sum())
    assert path.is_file() and path.stat().st_size < 2 * words + 1024 < twin_bytes
    assert [name for name, _, _ in list_manuals(root=root)] == ["guide"]  # hidden from listings

    def no_draw(tokens, seed):
        raise AssertionError("the stored order should have been read")

    first = seeded_twin(guide, 3, root=root)
    monkeypatch.setattr(twins, "word_order", no_draw)
    again = seeded_twin(guide, 3, root=root)
    pd.testing.assert_frame_equal(again.tokens, first.tokens)


def test_an_order_of_other_words_or_a_damaged_one_is_drawn_again(root, guide):
    first = seeded_twin(guide, 5, root=root)
    path = order_path("guide", 5, root=root)
    good = path.read_bytes()
    for damaged in (b"not an npz", good[: len(good) // 2]):  # garbage, and a cut-off zip
        path.write_bytes(damaged)
        pd.testing.assert_frame_equal(seeded_twin(guide, 5, root=root).tokens, first.tokens)
    changed = guide.tokens.copy()
    changed.loc[changed.index[0], "text"] = "Zanzibar"  # the manual re-ingested with a new word
    edited = type(guide)(guide.name, guide.directory, guide.meta, guide.sentences, changed)
    twin = seeded_twin(edited, 5, root=root)
    assert "Zanzibar" in set(twin.tokens["text"])
    with np.load(path) as data:  # the store now holds the order of the new words
        assert str(data["digest"]) == twins.words_digest(changed)


def test_a_seeded_twin_resolves_by_name(root, guide):
    assert parse_seeded("guide-random-12") == ("guide", 12)
    assert parse_seeded("guide-random") is None and parse_seeded("guide-random-x") is None
    twin = load_or_build("guide-random-12", root=root)
    assert twin.name == "guide-random-12" and twin.meta["random"]["seed"] == 12
    pd.testing.assert_frame_equal(twin.tokens, seeded_twin(guide, 12, root=root).tokens)
