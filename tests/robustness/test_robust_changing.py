"""Files that change while they are read (issue 60, class 9): an ingest hashes its file and then
reads it again to parse or mine it, so a file still being written could be stored as a mix of
two versions under the hash of one. One check (`nlmcs.files.check_unchanged`, against the
version taken before hashing) refuses that in one line, and nothing is stored."""

from __future__ import annotations

import pytest

from nlmcs.errors import UserInputError


def test_a_manual_written_to_while_it_is_parsed_is_not_stored(tmp_path, monkeypatch):
    from manual_pipeline import ingest as manual_ingest

    source = tmp_path / "guide.txt"
    source.write_text("Build a city on a river. Settlers found cities.\n\n" * 20)
    real = manual_ingest.read_blocks

    def growing(checked, fmt):
        for k, block in enumerate(real(checked, fmt)):
            if k == 1:
                with open(source, "a") as fh:
                    fh.write("A sentence the writer added meanwhile.\n")
            yield block

    monkeypatch.setattr(manual_ingest, "read_blocks", growing)
    with pytest.raises(UserInputError, match="guide.txt: changed while it was being read"):
        manual_ingest.ingest(source, name="guide", root=tmp_path / "store")
    assert not (tmp_path / "store" / "guide" / "meta.json").exists()
    monkeypatch.setattr(manual_ingest, "read_blocks", real)  # complete now: it ingests
    assert manual_ingest.ingest(source, name="guide", root=tmp_path / "store").meta


def test_a_corpus_log_appended_to_while_it_is_mined_is_not_stored(tmp_path, monkeypatch, logs):
    from corpus import store

    log = logs("a.jsonl", games=2)
    real = store._mine_source

    def appended(path, *args):
        mined = real(path, *args)
        with open(path, "ab") as fh:
            fh.write(b"\n")
        return mined

    monkeypatch.setattr(store, "_mine_source", appended)
    with pytest.raises(UserInputError, match="a.jsonl: changed while it was being read"):
        store.ingest([log], name="c", root=tmp_path / "corpora")
    assert not (tmp_path / "corpora" / "c" / "meta.json").exists()
