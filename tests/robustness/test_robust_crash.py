"""Crash windows: a process killed (SIGKILL) at the worst moment of a write loses nothing that
was stored, and the next run puts back or cleans up what it left; workers die with the command.

The kills are real: a small driver runs the command in a fresh process with one function
wrapped so that the process kills itself at the chosen point.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import psutil
from robust_support import (
    DEADLINE,
    assert_clean,
    assert_store_kept,
    hidden_leftovers,
    run,
    start,
    tree_digest,
    wait_for,
)

DRIVER = """
import os, signal, sys
{patch}
from nlmcs.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_killed(patch: str, *args, env: dict) -> int:
    """Run `nlmcs ARGS` with `patch` applied first; returns the exit status (-9 if killed)."""
    code = DRIVER.format(patch=textwrap.dedent(patch))
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=DEADLINE)
    return proc.returncode


KILL_BETWEEN_RENAMES = """
from manual_pipeline import writer
real = os.replace
def replace(src, dst):
    real(src, dst)
    if ".old-" in str(dst):  # the old artifact is aside, the new one not yet in place
        os.kill(os.getpid(), signal.SIGKILL)
writer.os.replace = replace
"""

KILL_MID_WRITE = """
from manual_pipeline import writer
real = writer.ArtifactWriter.append
def append(self, *args):
    real(self, *args)
    os.kill(os.getpid(), signal.SIGKILL)
writer.ArtifactWriter.append = append
"""

KILL_BEFORE_CORPUS_COMMIT = """
import nlmcs.files
real = os.replace
def replace(src, dst):
    if str(dst).endswith("meta.json"):  # parts written, the commit point not reached
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
nlmcs.files.os.replace = replace
"""


def _twin(env, seed: int):
    assert_clean(run("manual", "shuffle", "guide", "--seed", seed, env=env))


def _stored_guide(env):
    from robust_support import FIXTURES

    assert_clean(run("manual", "ingest", FIXTURES / "guide.md", "--name", "guide", env=env))


def test_a_kill_between_the_two_renames_loses_no_manual(env, data):
    import json

    _stored_guide(env)
    _twin(env, 1)
    manuals = data / "manuals"
    assert run_killed(KILL_BETWEEN_RENAMES, "manual", "shuffle", "guide", "--seed", "2",
                      env=env) == -signal.SIGKILL
    assert not (manuals / "guide-random").exists()  # the window the issue describes
    shown = run("manual", "show", "guide-random", env=env)
    assert_clean(shown)
    assert "restored" in shown.err
    meta = json.loads((manuals / "guide-random" / "meta.json").read_text())
    assert meta["random"]["seed"] == 2  # the newer, complete copy
    assert hidden_leftovers(manuals) == []


def test_a_killed_write_leaves_the_old_manual_and_its_temporary_is_cleaned(env, data):
    _stored_guide(env)
    _twin(env, 1)
    manuals = data / "manuals"
    before = tree_digest(manuals / "guide-random")
    assert run_killed(KILL_MID_WRITE, "manual", "shuffle", "guide", "--seed", "2",
                      env=env) == -signal.SIGKILL
    assert any(".tmp-" in name for name in hidden_leftovers(manuals))
    assert_store_kept(manuals / "guide-random", before)
    assert_clean(run("manual", "list", env=env))
    assert hidden_leftovers(manuals) == []
    assert_store_kept(manuals / "guide-random", before)


def test_a_killed_corpus_ingest_leaves_the_committed_corpus(env, data, logs):
    from corpus.store import load_corpus

    directory = data / "corpora" / "demo"
    assert_clean(run("corpus", "ingest", logs("a.jsonl", games=2), "--name", "demo", env=env))
    more = logs("b.jsonl", games=2, first=10)
    assert run_killed(KILL_BEFORE_CORPUS_COMMIT, "corpus", "ingest", more, "--name", "demo",
                      env=env) == -signal.SIGKILL
    assert hidden_leftovers(directory)  # the temporary meta.json
    assert_clean(run("corpus", "stats", "demo", env=env))  # still the committed corpus
    assert load_corpus(directory).meta["counts"]["games"] == 2
    assert_clean(run("corpus", "ingest", more, "--name", "demo", env=env))
    assert hidden_leftovers(directory) == []
    corpus = load_corpus(directory)
    assert corpus.meta["counts"]["games"] == 4
    listed = {*corpus.meta["parts"], corpus.meta["games_file"], "meta.json"}
    # no stale part left; the previous commit's games file stays for a reader of the previous
    # meta.json (the next writer removes it)
    kept = {p.name for p in directory.glob("games-*.parquet")} - listed
    assert len(kept) <= 1 and {p.name for p in directory.iterdir()} == listed | kept


def _workers(proc) -> list[psutil.Process]:
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [c for c in children if "spawn_main" in " ".join(c.cmdline())]


def _gone(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_corpus_record_workers_die_with_a_killed_command(env, data):
    logs_dir = data / "corpora" / "rec" / "logs"
    proc = start("corpus", "record", "--name", "rec", "--games", "40", "--workers", "2",
                 "--preset", "default", env=env)
    workers = wait_for(lambda: len(_workers(proc)) == 2 and _workers(proc), "two workers", proc)
    before = set(logs_dir.glob("game-*.jsonl"))
    proc.kill()  # SIGKILL: no clean-up of any kind runs in the command
    proc.communicate(timeout=DEADLINE)
    wait_for(lambda: all(_gone(w) for w in workers), "the workers to die")
    # A worker that outlived its command would have finished its game and written its log.
    assert set(logs_dir.glob("game-*.jsonl")) == before


def test_play_workers_die_with_a_killed_command(env):
    proc = start("play", "--method", "linear", "--map", "small", "--steps", "100000",
                 "--rollouts", "8", "--depth", "2", "--workers", "2", env=env)
    workers = wait_for(lambda: len(_workers(proc)) == 2 and _workers(proc),
                       "two roll-out workers", proc)
    proc.kill()
    proc.communicate(timeout=DEADLINE)
    wait_for(lambda: all(_gone(w) for w in workers), "the workers to die")


KILL_BEFORE_LOG_COMMIT = """
import nlmcs.files
real = nlmcs.files.AtomicFile.commit
def commit(self):
    if self.path.name == "d.jsonl":  # the game played, its log not yet in place
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self)
nlmcs.files.AtomicFile.commit = commit
"""


def test_a_killed_play_leaves_a_temporary_the_next_writer_removes(env, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    argv = ["play", "--method", "uct", "--map", "tiny", "--steps", "1", "--rollouts", "2",
            "--depth", "1", "--no-progress", "--log-decisions", out / "d.jsonl"]  # fmt: skip
    assert run_killed(KILL_BEFORE_LOG_COMMIT, *argv, env=env) == -signal.SIGKILL
    assert len(hidden_leftovers(out)) == 1 and not (out / "d.jsonl").exists()
    assert_clean(run(*argv, env=env))
    assert hidden_leftovers(out) == [] and (out / "d.jsonl").is_file()
