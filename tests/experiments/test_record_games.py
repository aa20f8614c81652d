"""Corpus recording on the one job loop: an interrupted recording keeps its finished games and
plays only the rest; a lost worker is one line that counts what was kept."""

from __future__ import annotations

from concurrent.futures.process import BrokenProcessPool

import pytest

from nlmcs.errors import UserInputError
from nlmcs.experiments import record
from nlmcs.experiments.record import RecordConfig, record_games

CONFIG = RecordConfig(games=3, players=("builtin", "random"), preset="tiny", max_turns=4,
                      seed=6, workers=1, record_states=False)


def test_an_interrupted_recording_keeps_its_games_and_plays_only_the_rest(tmp_path, monkeypatch):
    real, played = record._play_job, []

    def interrupted_at_seed_7(job):
        if job[1] == 7:
            raise KeyboardInterrupt
        played.append(job[1])
        return real(job)

    monkeypatch.setattr(record, "_play_job", interrupted_at_seed_7)
    with pytest.raises(KeyboardInterrupt):
        record_games(out_dir=tmp_path, config=CONFIG)
    assert played == [6] and [p.name for p in tmp_path.iterdir()] == ["game-0000006.jsonl"]
    kept = (tmp_path / "game-0000006.jsonl").read_bytes()
    seen = []
    monkeypatch.setattr(record, "_play_job", lambda job: seen.append(job[1]) or real(job))
    paths = record_games(out_dir=tmp_path, config=CONFIG,
                         progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), 7, (2, 3), 8, (3, 3)]
    assert [p.name for p in paths] == [f"game-000000{s}.jsonl" for s in (6, 7, 8)]
    assert (tmp_path / "game-0000006.jsonl").read_bytes() == kept


def test_a_lost_worker_is_one_line_counting_the_kept_games(tmp_path, monkeypatch):
    real = record._play_job

    def lost_at_seed_7(job):
        if job[1] == 7:
            raise BrokenProcessPool("a worker died")
        return real(job)

    class Inline:  # an executor that runs each job at once, in this process
        def submit(self, fn, job):
            from concurrent.futures import Future

            future = Future()
            try:
                future.set_result(fn(job))
            except BaseException as err:
                future.set_exception(err)
            return future

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(record, "_play_job", lost_at_seed_7)
    monkeypatch.setattr(record, "local_pool", lambda workers: Inline())
    config = RecordConfig(**{**CONFIG.__dict__, "workers": 2})
    # every game that did end is kept before the lost one is acted on
    with pytest.raises(UserInputError, match="the 2 finished games are kept in"):
        record_games(out_dir=tmp_path, config=config)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-0000006.jsonl",
                                                          "game-0000008.jsonl"]
