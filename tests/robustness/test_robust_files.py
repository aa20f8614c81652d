"""Special files, sizes and messages: a FIFO, a device, a link loop, a folder or a huge file
named on the command line is refused in one line naming the user's path (never a hang, never
a hidden temporary's name), before any work is done; outputs get ordinary permissions."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_support import (
    FIXTURES,
    assert_clean,
    assert_refused,
    assert_store_kept,
    hidden_leftovers,
    ordinary_mode,
    run,
    tree_digest,
)

from manual_pipeline.readers import read_blocks
from manual_pipeline.textio import inspect_file, iter_lines

READERS = {
    "manual ingest": ("manual", "ingest", "PATH"),
    "game render": ("game", "render", "PATH"),
    "corpus ingest": ("corpus", "ingest", "PATH", "--name", "demo"),
    "corpus query": ("corpus", "query", "demo", "--state", "PATH", "--agent", "unit:1"),
    "relevance show": ("relevance", "show", "PATH"),
    "game play --ruleset": ("game", "play", "--ruleset", "PATH", "--turns", "1"),
    # a benchmark table is read before a row is appended to it
    "bench engine --out": ("bench", "engine", "--rollouts", "100000", "--map", "tiny", "--out",
                           "PATH"),
}


def _special(kind: str, tmp_path):
    path = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
        return path, "FIFO"
    if kind == "loop":
        os.symlink(tmp_path / "loop-b.json", path)
        os.symlink(path, tmp_path / "loop-b.json")
        return path, "symbolic link loop"
    if kind == "huge":
        with open(path, "wb") as fh:  # sparse: no disk space used
            fh.truncate(1_100_000_000)
        return path, " MB"
    if kind == "folder":
        path.mkdir()
        return path, "directory"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["fifo", "loop", "huge", "folder"])
@pytest.mark.parametrize("command", list(READERS))
def test_a_file_that_cannot_be_read_is_one_line(command, kind, env, tmp_path):
    if command == "game play --ruleset" and kind == "folder":
        pytest.skip("a folder named like a ruleset is looked up by name")
    path, needle = _special(kind, tmp_path)
    argv = [str(path) if a == "PATH" else a for a in READERS[command]]
    result = run(*argv, env=env)  # a hang would end in the run's deadline, failing the test
    assert_refused(result, str(path), needle)


def test_a_device_is_not_a_manual(env):
    assert_refused(run("manual", "ingest", "/dev/zero", env=env), "/dev/zero", "device")


WRITERS = {
    "play --log-decisions": ("play", "--method", "linear", "--map", "tiny", "--steps", "100000",
                             "--rollouts", "2", "--log-decisions", "OUT"),
    "game series --out": ("game", "series", "--games", "100000", "--map", "tiny", "--out",
                          "OUT"),
    "game play --save-state": ("game", "play", "--turns", "100000", "--map", "tiny",
                               "--save-state", "OUT"),
    "game render --png": ("game", "render", "STATE", "--png", "OUT"),
    "relevance report --html": ("relevance", "report", "STATE", "--html", "OUT"),
    "bench search --out": ("bench", "search", "--methods", "linear", "--rollouts", "100000",
                           "--workers", "1", "--map", "tiny", "--out", "OUT"),
    "bench step --out": ("bench", "step", "--method", "linear", "--rollouts", "100000",
                         "--map", "tiny", "--out", "OUT"),
}


@pytest.fixture(scope="module")
def state_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("state")
    state = folder / "state.json"
    result = run("game", "play", "--turns", "2", "--map", "tiny", "--save-state", state,
                 env={**os.environ, "NLMCS_DATA": str(folder / "data")})
    assert_clean(result)
    return state


@pytest.mark.parametrize("where", ["folder", "missing folder"])
@pytest.mark.parametrize("command", list(WRITERS))
def test_an_output_that_cannot_be_written_is_refused_first(command, where, env, tmp_path,
                                                           state_file):
    """Refused at once (with --steps 100000, a check after the game would never come)."""
    if where == "folder":
        out = tmp_path / "out"
        out.mkdir()
    else:
        out = tmp_path / "no-such-folder" / "sub" / "out.file"
        if command in ("game series --out", "game play --save-state"):
            pytest.skip("these create the output's folder")
    argv = [str(out) if a == "OUT" else str(state_file) if a == "STATE" else a
            for a in WRITERS[command]]
    result = run(*argv, env=env)
    assert_refused(result, str(out))
    assert ".tmp" not in result.err
    assert hidden_leftovers(tmp_path) == []


def test_outputs_have_ordinary_permissions(env, tmp_path, state_file):
    png = tmp_path / "map.png"
    assert_clean(run("game", "render", state_file, "--png", png, env=env))
    assert png.stat().st_mode & 0o777 == ordinary_mode()
    assert state_file.stat().st_mode & 0o777 == ordinary_mode()
    assert hidden_leftovers(tmp_path) == []


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)


@settings(deadline=None)
@given(words=st.lists(WORD, min_size=1, max_size=300), limit=st.integers(16, 80))
def test_a_long_line_is_cut_between_words(words, limit):
    line = " ".join(words)
    pieces = list(iter_lines(io.StringIO(line + "\nnext\n"), limit))
    assert pieces[-1] == "next"
    assert all(len(p) <= limit for p in pieces)
    assert " ".join(pieces[:-1]).split() == words  # no word cut in two


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_200000_word_line_keeps_every_word(fmt, tmp_path):
    words = [f"w{i}" for i in range(200_000)]  # 1.4 MB, no punctuation, no line end but one
    path = tmp_path / "long.txt"
    path.write_text(" ".join(words) + "\n")
    blocks = list(read_blocks(inspect_file(path), fmt))
    assert " ".join(b.text for b in blocks).split() == words


# --- fuzzing the readers of decision logs and run folders ----------------------------------------
def _mutate(lines: list[bytes], op: str, i: int, blob: bytes) -> list[bytes]:
    """One random damage of a JSON-lines file: a line deleted, duplicated, swapped with the
    next, retyped (a value replaced by the blob as JSON), or bytes inserted."""
    out = list(lines)
    i %= len(out)
    if op == "delete":
        del out[i]
    elif op == "duplicate":
        out.insert(i, out[i])
    elif op == "swap" and i + 1 < len(out):
        out[i], out[i + 1] = out[i + 1], out[i]
    elif op == "retype":
        import json as _json

        try:
            rec = _json.loads(out[i])
            key = sorted(rec)[len(blob) % len(rec)]
            rec[key] = blob.decode("latin-1")
            out[i] = (_json.dumps(rec) + "\n").encode()
        except (ValueError, TypeError, ZeroDivisionError):
            # not a JSON object on one line: a `key: value` or `key = value` line (a pretty
            # ruleset, a FreeCiv section file) gets the blob as its value, any other line
            # becomes the blob
            line = out[i]
            sep = next((s for s in (b": ", b" = ") if s in line), None)
            try:  # a blob that is JSON goes in as it is (a number, a list), else as a string
                _json.loads(blob)
                text = blob
            except ValueError:
                text = _json.dumps(blob.decode("latin-1")).encode()
            out[i] = (line.split(sep, 1)[0] + sep + text + b",\n") if sep else blob + b"\n"
    elif op == "insert":
        cut = len(blob) % max(1, len(out[i]))
        out[i] = out[i][:cut] + blob + out[i][cut:]
    return out


DAMAGE = {"op": st.sampled_from(["delete", "duplicate", "swap", "retype", "insert"]),
          "i": st.integers(0, 200), "blob": st.binary(min_size=1, max_size=12)}
VALUES = st.sampled_from([b"0", b"-1", b"-7", b"2", b"99999999", b"1e308", b"0.5", b"[]", b"{}",
                          b"null", b"true", b'""', b'"x"', b"[1, 2]"])
"""Values a retyped field of a ruleset gets besides random bytes: zeros, negatives, huge numbers,
empty containers, the wrong JSON types."""


@pytest.fixture(scope="module")
def logged_run(tmp_path_factory):
    """A finished ablation with kept decision logs (text and uct, two games)."""
    from nlmcs.cli import main

    folder = tmp_path_factory.mktemp("fuzz") / "run"
    assert main(["ablation", "run", "--methods", "text,uct", "--games", "2", "--steps", "2",
                 "--rollouts", "3", "--depth", "2", "--map", "tiny", "--workers", "1",
                 "--no-progress", "--log-decisions", "--out", str(folder)]) == 0  # fmt: skip
    return folder


def _one_line_or_success(cli_result) -> None:
    assert "Traceback" not in cli_result.err
    if cli_result.code != 0:
        errors = [x for x in cli_result.err.splitlines() if x.startswith("error: ")]
        assert cli_result.code == 2 and len(errors) == 1, cli_result


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(**DAMAGE)
def test_a_damaged_decision_log_is_shown_or_refused_in_one_line(logged_run, cli, tmp_path, op,
                                                                i, blob):
    source = logged_run / "decisions" / "text" / "game-00000.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    log = tmp_path / "d.jsonl"
    log.write_bytes(b"".join(_mutate(lines, op, i, blob)))
    _one_line_or_success(cli("relevance", "show", log, "-k", "1"))
    _one_line_or_success(cli("relevance", "report", log, "--html", tmp_path / "r.html"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(**DAMAGE)
def test_a_damaged_run_folder_is_reported_or_refused_in_one_line(logged_run, cli, tmp_path, op,
                                                                 i, blob):
    import shutil

    folder = tmp_path / f"run-{op}-{i}-{blob.hex()}"
    shutil.copytree(logged_run, folder, ignore=shutil.ignore_patterns(".lock"))
    lines = (folder / "games.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "games.jsonl").write_bytes(b"".join(_mutate(lines, op, i, blob)))
    stored = (folder / "games.jsonl").read_bytes()
    _one_line_or_success(cli("ablation", "report", folder))
    _one_line_or_success(cli("ablation", "status", folder))
    _one_line_or_success(cli("relevance", "report", folder, "--html", tmp_path / "r.html"))
    assert (folder / "games.jsonl").read_bytes() == stored  # a report never rewrites the games


# --- fuzzing the manual readers (text, Markdown, HTML, FreeCiv sections) and the ruleset reader -
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(["guide.md", "guide.txt", "guide.html", "rules.ruleset"]),
       **DAMAGE)
def test_a_damaged_manual_is_ingested_or_refused_and_the_stored_one_kept(cli, data, tmp_path,
                                                                         source, op, i, blob):
    """Whatever the damage, `manual ingest --force` stores the damaged manual or refuses it in
    one line; a refusal leaves the manual stored before byte-identical."""
    store = data / "manuals" / "demo"
    if not store.exists():
        assert cli("manual", "ingest", FIXTURES / "guide.md", "--name", "demo").code == 0
    before = tree_digest(store)
    lines = (FIXTURES / source).read_bytes().splitlines(keepends=True)
    damaged = tmp_path / f"damaged{Path(source).suffix}"
    damaged.write_bytes(b"".join(_mutate(lines, op, i, blob)))
    result = cli("manual", "ingest", damaged, "--name", "demo", "--force")
    _one_line_or_success(result)
    if result.code != 0:
        assert_store_kept(store, before)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(op=DAMAGE["op"], i=st.integers(0, 400), blob=DAMAGE["blob"] | VALUES)
def test_a_damaged_ruleset_plays_or_is_refused_in_one_line(cli, tmp_path, op, i, blob):
    """A JSON ruleset damaged line by line either loads and plays three turns, or is refused
    in one line naming the file; never a traceback from deep in the engine."""
    from nlmcs.paths import shipped_file

    lines = shipped_file("rulesets", "classic.json").read_bytes().splitlines(keepends=True)
    ruleset = tmp_path / "damaged.json"
    ruleset.write_bytes(b"".join(_mutate(lines, op, i, blob)))
    result = cli("game", "play", "--ruleset", ruleset, "--players", "builtin,random", "--map",
                 "tiny", "--turns", "3", "--seed", "1")
    _one_line_or_success(result)
    if result.code != 0:
        assert str(ruleset) in result.err or "ruleset" in result.err, result.err
