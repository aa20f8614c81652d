"""Concurrent writers: a second writer of one store waits for the first (saying so in one line)
or refuses; the store ends consistent, holding what every successful writer reported."""

from __future__ import annotations

import threading

from robust_support import (
    DEADLINE,
    FIXTURES,
    assert_clean,
    assert_refused,
    finish,
    run,
    start,
    wait_for,
)


def _wait_for_note(proc, what: str):
    """Read the process's stderr (on a thread) until it says it waits for the lock; returns a
    function that awaits the process and gives its exit code and whole stderr."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")),
                              daemon=True)
    reader.start()
    wait_for(lambda: any("waiting for another nlmcs process" in line for line in lines),
             f"{what} to wait for the lock", proc)

    def finished() -> tuple[int, str]:
        code = proc.wait(timeout=DEADLINE)
        reader.join(timeout=DEADLINE)
        proc.stdout.read()
        return code, "".join(lines)

    return finished


def test_a_corpus_ingest_waits_while_another_writer_holds_the_corpus(env, data, logs):
    from corpus.store import load_corpus
    from nlmcs.locking import store_lock

    directory = data / "corpora" / "demo"
    with store_lock(directory, what="corpus demo"):
        proc = start("corpus", "ingest", logs(games=2), "--name", "demo", env=env)
        finished = _wait_for_note(proc, "the ingest")
        assert not (directory / "meta.json").exists()  # nothing written while it waits
    code, err = finished()
    assert code == 0 and "Traceback" not in err, err
    assert load_corpus(directory).meta["counts"]["games"] == 2


def test_simultaneous_corpus_ingests_all_land(env, data, logs):
    from corpus.store import load_corpus

    paths = [logs(f"log{i}.jsonl", games=2, first=10 * i) for i in range(3)]
    procs = [start("corpus", "ingest", p, "--name", "demo", env=env) for p in paths]
    for result in map(finish, procs):
        assert_clean(result)
    corpus = load_corpus(data / "corpora" / "demo")
    assert corpus.meta["counts"]["games"] == 6 and len(corpus.games) == 6
    assert sorted(corpus.games["game_id"]) == sorted(f"g{10 * i + j}" for i in range(3)
                                                     for j in range(2))
    assert_clean(run("corpus", "stats", "demo", env=env))


def test_a_reader_of_the_previous_commit_reads_the_corpus_whole(data, logs, monkeypatch):
    """Issue 60 class 5: while an ingest committed, a reader (`corpus stats`, an ablation worker
    loading the corpus) sometimes found the store damaged: the commit deleted the games file the
    reader's meta.json named."""
    from corpus import store
    from corpus.meta import read_meta

    directory = data / "corpora" / "demo"
    store.ingest([logs("a.jsonl", games=2)], name=directory)
    before = read_meta(directory)
    store.ingest([logs("b.jsonl", games=2, first=10)], name=directory)
    # a reader that read meta.json before the commit still reads the store whole, as it was
    assert len(store._load(directory, before).games) == 2
    # and one whose read fails while a writer commits reads the new store again
    real, calls = store._load, []

    def racing(folder, meta):
        calls.append(meta)
        if len(calls) == 1:
            store.ingest([logs("c.jsonl", games=1, first=20)], name=directory)
            raise store.UserInputError("unreadable games file (the writer's commit)")
        return real(folder, meta)

    monkeypatch.setattr(store, "_load", racing)
    assert len(store.load_corpus(directory).games) == 5
    assert len(calls) == 2 and calls[0] != calls[1]


def test_two_manual_ingests_of_different_files_under_one_name(env, data):
    from manual_pipeline.store import load_manual

    sources = [FIXTURES / "guide.md", FIXTURES / "guide.txt"]
    procs = [start("manual", "ingest", s, "--name", "guide", env=env) for s in sources]
    results = [finish(p) for p in procs]
    stored = [s for s, r in zip(sources, results, strict=True) if r.code == 0]
    refused = [r for r in results if r.code != 0]
    assert len(stored) == 1 and len(refused) == 1, results  # never "stored" twice
    assert_refused(refused[0], "holds another file", "--force")
    manual = load_manual(data / "manuals" / "guide")
    assert manual.meta["source"]["path"] == str(stored[0].resolve())


def test_a_manual_ingest_waits_while_another_writer_holds_the_name(env, data):
    from manual_pipeline.store import load_manual
    from nlmcs.locking import store_lock

    target = data / "manuals" / "guide"
    with store_lock(target, what="manual guide"):
        proc = start("manual", "ingest", FIXTURES / "guide.md", "--name", "guide", env=env)
        finished = _wait_for_note(proc, "the manual ingest")
        assert not target.exists()
    code, err = finished()
    assert code == 0 and "Traceback" not in err, err
    assert len(load_manual(target).sentences) > 0


def test_two_records_into_one_corpus_play_each_game_once(env, data):
    from corpus.store import load_corpus

    args = ("corpus", "record", "--name", "rec", "--games", "2", "--workers", "1",
            "--preset", "tiny", "--max-turns", "3")
    results = [finish(p) for p in [start(*args, env=env) for _ in range(2)]]
    for result in results:
        assert_clean(result)
    assert any("(2 were already recorded)" in r.out for r in results), results
    corpus = load_corpus(data / "corpora" / "rec")
    assert corpus.meta["counts"]["games"] == 2 and len(corpus.meta["sources"]) == 2


def test_a_run_folder_in_use_is_not_rewritten_by_a_second_command(env, tmp_path):
    """A second `ablation run` that needs no games, or an `ablation report`, while another
    process holds the run folder, is refused; the report files stay as they were."""
    from robust_support import tree_digest

    from nlmcs.experiments.ablation.store import locked

    folder = tmp_path / "run"
    argv = ["ablation", "run", "--methods", "uct", "--games", "1", "--steps", "1",
            "--rollouts", "2", "--depth", "1", "--map", "tiny", "--workers", "1",
            "--no-progress", "--out", folder]  # fmt: skip
    assert_clean(run(*argv, env=env))
    before = tree_digest(folder)
    with locked(folder):  # a first run, still writing
        assert_refused(run(*argv, env=env), "another nlmcs process is writing it")
        assert_refused(run("ablation", "report", folder, env=env), "another nlmcs process")
    assert tree_digest(folder) == before
