"""`nlmcs bench engine --out` and `nlmcs bench search --out`: rows with the machine's context,
appended run after run, and an --out file that is not such a table refused before any timing."""

from __future__ import annotations

import csv
import math

import pytest

from nlmcs.cli import main
from nlmcs.commands.game import ENGINE_OPTIONS
from nlmcs.commands.play import SEARCH_COLUMNS, step_columns
from nlmcs.experiments.bench_engine import FIGURES, bench_engine
from nlmcs.experiments.bench_record import CONTEXT_COLUMNS
from nlmcs.experiments.bench_step import LATER_PARTS, PARTS
from nlmcs.games.civ import CivConfig, CivGame

ENGINE = ["bench", "engine", "--rollouts", "2", "--depth", "2", "--midgame-turns", "3",
          "--map", "tiny"]
SEARCH = ["bench", "search", "--methods", "linear,uct", "--rollouts", "2", "--workers", "1",
          "--depth", "2", "--map", "tiny"]


@pytest.fixture(autouse=True)
def _data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path / "data"))


def _rows(path) -> tuple[list[str], list[dict]]:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_engine_figures_are_the_declared_columns():
    figures = bench_engine(game=CivGame(CivConfig.preset("tiny")), rollouts=1, depth=1,
                           midgame_turns=1)
    assert tuple(figures) == FIGURES


def test_bench_engine_appends_a_row_per_run(tmp_path, capsys):
    out = tmp_path / "engine.csv"
    assert main([*ENGINE, "--out", str(out)]) == 0
    assert main([*ENGINE, "--seed", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "load average" in printed and f"rows appended to {out}" in printed
    header, rows = _rows(out)
    assert header == [*CONTEXT_COLUMNS, *ENGINE_OPTIONS, *FIGURES]
    assert [r["seed"] for r in rows] == ["0", "4"]
    for r in rows:
        assert r["map"] == "tiny" and r["ruleset"] == "classic" and int(r["cpus"]) >= 1
        assert float(r["turns_per_second"]) > 0 and float(r["peak_rss_mib"]) > 0
        assert float(r["state_vector_us"]) > 0 and float(r["recorded_decisions_per_second"]) > 0
        assert r["recorded_at"].startswith("20") and r["version"]
        load = float(r["load_before"])
        assert math.isnan(load) or load >= 0


def test_a_table_from_before_new_columns_gains_them_and_keeps_its_rows(tmp_path, capsys):
    out = tmp_path / "engine.csv"
    assert main([*ENGINE, "--out", str(out)]) == 0
    header, rows = _rows(out)
    old = header[:header.index("legal_us_reference")]  # what the last version wrote
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, old)
        writer.writeheader()
        writer.writerow({k: rows[0][k] for k in old})
    assert main([*ENGINE, "--seed", "4", "--out", str(out)]) == 0
    header, rows = _rows(out)
    assert header == [*CONTEXT_COLUMNS, *ENGINE_OPTIONS, *FIGURES]
    assert [r["seed"] for r in rows] == ["0", "4"]
    assert rows[0]["legal_us_compiled"] == "" and float(rows[1]["legal_us_compiled"]) > 0
    with out.open("w", newline="") as fh:  # not a prefix: another benchmark's table
        csv.writer(fh).writerows([[*old[:3], "other"], ["1", "2", "3", "4"]])
    assert main([*ENGINE, "--out", str(out)]) == 2
    assert "columns are not this benchmark's" in capsys.readouterr().err


def test_bench_search_appends_a_row_per_timing(tmp_path, capsys):
    out = tmp_path / "search.csv"
    assert main([*SEARCH, "--out", str(out)]) == 0
    assert main([*SEARCH[:3], "linear", *SEARCH[4:], "--backends", "numba", "--steps", "2",
                 "--out", str(out)]) == 0
    assert f"rows appended to {out}" in capsys.readouterr().out
    header, rows = _rows(out)
    assert header == [*CONTEXT_COLUMNS, *SEARCH_COLUMNS]
    assert [(r["method"], r["backend"], r["steps"]) for r in rows] == [
        ("linear", "numpy", "1"), ("linear", "numba", "1"), ("uct", "-", "1"),
        ("linear", "numba", "2")]
    # the compiled row of a run that also timed the reference carries the speed-up
    assert float(rows[1]["x_ref"]) > 0 and rows[0]["x_ref"] == rows[3]["x_ref"] == ""
    assert rows[3]["warm_seconds"] and not rows[0]["warm_seconds"]
    assert all(r["release_seconds"] == "" for r in rows)  # depth 2: no release figure
    assert all(float(r["seconds"]) > 0 and r["map"] == "tiny" for r in rows)


@pytest.mark.slow
def test_bench_step_appends_a_row_per_timed_step(tmp_path, capsys):
    out = tmp_path / "step.csv"
    step = ["bench", "step", "--rollouts", "3", "--depth", "2", "--map", "tiny", "--out", str(out)]
    assert main([*step, "--method", "linear", "--steps", "2"]) == 0
    assert main([*step, "--method", "text", "--steps", "1"]) == 0
    assert f"rows appended to {out}" in capsys.readouterr().out
    header, rows = _rows(out)
    assert header == [*CONTEXT_COLUMNS, *step_columns(PARTS, LATER_PARTS)]
    assert header[-5:] == ["board_seconds", "board_calls", "turn_seconds", "turn_calls",
                           "path"]  # after the older columns
    # each times its steps from the tables, then per signature
    assert [(r["method"], r["step"], r["path"]) for r in rows] == [
        ("linear", "1", "tables"), ("linear", "2", "tables"), ("linear", "1", "signatures"),
        ("linear", "2", "signatures"), ("text", "1", "tables"), ("text", "1", "signatures")]
    for r in rows:
        parts = sum(float(r[f"{name}_seconds"]) for name in PARTS)
        # the parts and the rest make up the step, and the replayed sweeps end on its weights
        assert parts + float(r["rest_seconds"]) == pytest.approx(float(r["seconds"]))
        assert int(r["learn_calls"]) == 3
        # the tables' path chooses whole turns in compiled code, the path before agent by agent
        if r["path"] == "tables":
            assert int(r["turn_calls"]) > 0 and int(r["agent_q_calls"]) == 0
        else:
            assert int(r["agent_q_calls"]) > 0 and int(r["turn_calls"]) == 0
        assert r["replay_same"] == "True"


@pytest.mark.parametrize("content", [
    "a,b\n1,2\n",  # another table
    None,  # engine columns given to the search benchmark, below
    b"\x93\xff\x00binary",
])  # fmt: skip
def test_a_foreign_out_file_is_refused_and_kept(content, tmp_path, capsys):
    out = tmp_path / "table.csv"
    if content is None:
        assert main([*ENGINE, "--out", str(out)]) == 0
        capsys.readouterr()
    elif isinstance(content, bytes):
        out.write_bytes(content)
    else:
        out.write_text(content)
    before = out.read_bytes()
    assert main([*SEARCH, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and str(out) in err[0]
    assert "method" not in captured.out  # refused before the table's header, nothing timed
    assert out.read_bytes() == before


def test_out_must_be_a_writable_file_name(tmp_path, capsys):
    assert main([*ENGINE, "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main([*ENGINE, "--out", str(tmp_path / "no" / "x.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_ragged_table_is_refused(tmp_path, capsys):
    out = tmp_path / "engine.csv"
    assert main([*ENGINE, "--out", str(out)]) == 0
    capsys.readouterr()
    with out.open("a") as fh:
        fh.write("1,2,3\n")
    before = out.read_bytes()
    assert main([*ENGINE, "--out", str(out)]) == 2
    assert "more or fewer fields" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_rows_appended_meanwhile_by_another_run_are_kept(tmp_path):
    from nlmcs.experiments.bench_record import BenchTable, context

    out = tmp_path / "t.csv"
    first, second = BenchTable(out, ["x"]), BenchTable(out, ["x"])
    first.append({**context(0.0), "x": 1})
    second.append({**context(0.0), "x": 2})
    first.append({**context(0.0), "x": 3})
    assert [r["x"] for r in _rows(out)[1]] == ["1", "2", "3"]
