"""Corpus recording on the one job loop: an interrupted recording keeps its finished games and
plays only the rest; a lost worker is one line that counts what was kept."""

from __future__ import annotations

from concurrent.futures.process import BrokenProcessPool

import pytest

from nlmcs.errors import UserInputError
from nlmcs.experiments import record
from nlmcs.experiments.record import RecordConfig, record_games
from nlmcs.seeds import game_seed

CONFIG = RecordConfig(games=3, players=("builtin", "random"), preset="tiny", max_turns=4,
                      seed=6, workers=1, record_states=False)
S0, S1, S2 = (game_seed(6, i) for i in range(3))  # game i of the run


def test_an_interrupted_recording_keeps_its_games_and_plays_only_the_rest(tmp_path, monkeypatch):
    real, played = record._play_job, []

    def interrupted_at_seed_7(job):
        if job[1] == S1:
            raise KeyboardInterrupt
        played.append(job[1])
        return real(job)

    monkeypatch.setattr(record, "_play_job", interrupted_at_seed_7)
    with pytest.raises(KeyboardInterrupt):
        record_games(out_dir=tmp_path, config=CONFIG)
    assert played == [S0] and [p.name for p in tmp_path.iterdir()] == [f"game-{S0:07d}.jsonl"]
    kept = (tmp_path / f"game-{S0:07d}.jsonl").read_bytes()
    seen = []
    monkeypatch.setattr(record, "_play_job", lambda job: seen.append(job[1]) or real(job))
    paths = record_games(out_dir=tmp_path, config=CONFIG,
                         progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), S1, (2, 3), S2, (3, 3)]
    assert [p.name for p in paths] == [f"game-{s:07d}.jsonl" for s in (S0, S1, S2)]
    assert (tmp_path / f"game-{S0:07d}.jsonl").read_bytes() == kept


def test_a_lost_worker_is_one_line_counting_the_kept_games(tmp_path, monkeypatch):
    real = record._play_job

    def lost_at_seed_7(job):
        if job[1] == S1:
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
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"game-{S0:07d}.jsonl",
                                                                 f"game-{S2:07d}.jsonl"])


def test_recorded_games_name_their_chance_rule_and_replay_with_it(tmp_path):
    import dataclasses
    import json

    from corpus.store import ingest, load_corpus
    from nlmcs.games import make_game
    from nlmcs.net.features import Encoder, layout_for
    from nlmcs.net.samples import replay_corpus
    from nlmcs.seeds import CHANCE_RULE

    config = RecordConfig(**{**CONFIG.__dict__, "games": 2, "max_turns": 6})
    paths = record_games(out_dir=tmp_path / "logs", config=config)
    header = json.loads(paths[0].read_text().splitlines()[0])
    assert header["chance"] == CHANCE_RULE and header["seed"] == S0
    ingest(paths, name="rec", root=tmp_path / "store")
    stored = load_corpus("rec", root=tmp_path / "store")
    assert stored.games["chance"].tolist() == [CHANCE_RULE] * 2
    game = make_game("civ", preset="tiny", max_turns=6)
    _, report = replay_corpus(stored, Encoder(layout_for(game)))
    assert report.replayed == 2 and not report.skipped
    # the same logs read as the legacy rule's (a header naming none) no longer replay
    legacy = dataclasses.replace(stored, games=stored.games.assign(chance=""))
    with pytest.raises(UserInputError, match="moves differ from the record"):
        replay_corpus(legacy, Encoder(layout_for(game)))


def test_a_folder_of_games_recorded_by_the_earlier_seed_rule_is_refused(tmp_path):
    import json

    old = tmp_path / "game-0000006.jsonl"  # seed + i and default_rng: the header names no rule
    old.write_text(json.dumps({"type": "game", "seed": 6}) + "\n")
    with pytest.raises(UserInputError, match="earlier seed rule"):
        record_games(out_dir=tmp_path, config=CONFIG)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-0000006.jsonl"]


def test_games_of_the_howto_player_are_recorded_and_replay_for_cloning(tmp_path):
    from corpus.store import ingest, load_corpus
    from nlmcs.games import make_game
    from nlmcs.net.features import Encoder, layout_for
    from nlmcs.net.samples import replay_corpus

    config = RecordConfig(**{**CONFIG.__dict__, "games": 1, "max_turns": 8,
                             "players": ("howto", "builtin")})
    paths = record_games(out_dir=tmp_path / "logs", config=config)
    ingest(paths, name="howto", root=tmp_path / "store")
    stored = load_corpus("howto", root=tmp_path / "store")
    game = make_game("civ", preset="tiny", max_turns=8)
    samples, report = replay_corpus(stored, Encoder(layout_for(game)))
    assert report.replayed == 1 and not report.skipped
    assert len(samples) == 16  # 8 turns x 2 players, howto's moves among them


def test_a_drawn_game_replays_for_cloning_with_its_half_value(tmp_path):
    """The games table stores a draw as winner -1, which the replay read as player -1 and
    skipped every drawn game ("winner differs from the record")."""
    from corpus.mine import NO_WINNER
    from corpus.store import ingest, load_corpus
    from nlmcs.games import make_game
    from nlmcs.net.features import Encoder, layout_for
    from nlmcs.net.samples import replay_corpus

    config = RecordConfig(**{**CONFIG.__dict__, "games": 1, "max_turns": 2,
                             "players": ("builtin", "builtin")})
    ingest(record_games(out_dir=tmp_path / "logs", config=config), name="d",
           root=tmp_path / "store")
    stored = load_corpus("d", root=tmp_path / "store")
    assert stored.games["winner"].tolist() == [NO_WINNER]  # two turns: equal scores
    samples, report = replay_corpus(stored, Encoder(layout_for(make_game(
        "civ", preset="tiny", max_turns=2))))
    assert report.replayed == 1 and not report.skipped
    assert set(samples.value.tolist()) == {0.5}
