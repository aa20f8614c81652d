"""Smoke runs of `nlmcs play` and `nlmcs bench search` on the tiny civ map with tiny budgets."""

import json

import pytest

from nlmcs.cli import main


@pytest.mark.parametrize("method", ["uct", "linear"])
def test_play_runs_and_logs_decisions(method, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    log = tmp_path / "decisions.jsonl"
    code = main(["play", "--method", method, "--map", "tiny", "--steps", "2", "--rollouts", "3",
                 "--depth", "2", "--no-progress", "--log-decisions", str(log)])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert f"method {method}" in out and "seconds/step" in out
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert {r["step"] for r in records} == {0, 1}
    assert all(r["candidates"] and "q" in r["candidates"][0] for r in records)


def test_play_rejects_bad_options(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    assert main(["play", "--method", "nope", "--map", "tiny", "--steps", "1", "--no-progress"]) == 2
    assert "unknown method" in capsys.readouterr().err
    assert main(["play", "--rollouts", "0", "--map", "tiny", "--no-progress"]) == 2
    assert main(["play", "--method", "text", "--manual", "missing-manual", "--map", "tiny",
                 "--steps", "1", "--no-progress"]) == 2  # fmt: skip
    assert "error:" in capsys.readouterr().err


def test_bench_search_prints_a_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLMCS_DATA", str(tmp_path))
    code = main(["bench", "search", "--methods", "linear,uct", "--rollouts", "2", "--workers", "1",
                 "--depth", "2", "--map", "tiny"])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    header = ["method", "rollouts", "workers", "sec/step", "cpu", "s", "peak", "MB"]
    assert lines[0].split() == header
    assert [ln.split()[0] for ln in lines[1:]] == ["linear", "uct"]
