"""Full devices: every writer, refused room mid-write, ends with one line and exit status 1 and
keeps what was stored; an ablation leaves no half line and resumes to the right rows.

A kernel-level failure, not a mock: each command runs under a file-size limit (RLIMIT_FSIZE,
with SIGXFSZ ignored), so a write past it fails with EFBIG exactly where a full disk would fail
with ENOSPC (the CLI treats both, and EDQUOT, alike).
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess

from robust_support import (
    DEADLINE,
    FIXTURES,
    Result,
    assert_clean,
    assert_refused,
    assert_store_kept,
    hidden_leftovers,
    nlmcs_argv,
    run,
    tree_digest,
)

ABLATION = ["ablation", "run", "--methods", "uct,linear", "--games", "6", "--steps", "3",
            "--rollouts", "4", "--depth", "2", "--map", "tiny", "--workers", "1",
            "--no-progress"]  # fmt: skip


def run_limited(limit: int, *args, env: dict) -> Result:
    """`nlmcs ARGS` with no file allowed to grow past `limit` bytes."""
    def cap():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(nlmcs_argv(*args), env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=DEADLINE, preexec_fn=cap)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _rows(folder):
    lines = (folder / "games.jsonl").read_text().splitlines(keepends=True)
    assert all(x.endswith("\n") for x in lines)
    return sorted((r["arm"], r["game"], r["outcome"], r["score"], r["opponent_score"])
                  for r in map(json.loads, lines))


def test_an_ablation_on_a_full_disk_keeps_whole_rows_and_resumes(tmp_path, env):
    full, clean = tmp_path / "full", tmp_path / "clean"
    # The run without a cap first: it also leaves the compiled kernels' machine code cached,
    # which a cold cache would write (files past the cap) during the capped run.
    assert_clean(run(*ABLATION, "--out", clean, env=env))
    result = run_limited(8000, *ABLATION, "--out", full, env=env)
    assert_refused(result, "games.jsonl", "free space", code=1)
    stored = _rows(full)
    assert 0 < len(stored) < 12  # some games were stored whole, none by half
    assert_clean(run(*ABLATION, "--out", full, env=env))
    assert _rows(full) == _rows(clean)


def test_a_manual_store_on_a_full_disk_is_kept(env, data):
    assert_clean(run("manual", "ingest", FIXTURES / "guide.md", "--name", "kept", env=env))
    before = tree_digest(data)
    result = run_limited(2000, "manual", "ingest", FIXTURES / "guide.txt", "--name", "kept",
                         "--force", env=env)  # fmt: skip
    assert_refused(result, "free space", code=1)
    assert_store_kept(data, before)
    assert not hidden_leftovers(data / "manuals")


def test_a_corpus_on_a_full_disk_is_kept(env, data):
    assert_clean(run("corpus", "record", "--games", "1", "--preset", "tiny", "--max-turns", "3",
                     "--name", "kept", env=env))  # fmt: skip
    before = tree_digest(data / "corpora" / "kept")
    result = run_limited(3000, "corpus", "record", "--games", "2", "--preset", "tiny",
                         "--max-turns", "3", "--name", "kept", env=env)  # fmt: skip
    assert_refused(result, "free space", code=1)
    after = tree_digest(data / "corpora" / "kept")
    assert {k: v for k, v in after.items() if k in before} == before  # nothing stored changed


def test_a_report_on_a_full_disk_keeps_the_old_one(tmp_path, env):
    log, html = tmp_path / "d.jsonl", tmp_path / "r.html"
    assert_clean(run("play", "--method", "text", "--map", "tiny", "--steps", "2", "--rollouts",
                     "3", "--depth", "2", "--no-progress", "--log-decisions", log, env=env))
    html.write_text("old report")
    result = run_limited(20_000, "relevance", "report", log, "--html", html, env=env)
    assert_refused(result, "r.html", "free space", code=1)
    assert html.read_text() == "old report" and not hidden_leftovers(tmp_path)
