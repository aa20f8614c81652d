"""`nlmcs serve` and `--scheduler` without their optional extras say which to install."""

import socket
import sys

from nlmcs.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_without_the_serve_extra_names_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed
    assert main(["serve", "--port", str(_free_port())]) == 2
    err = capsys.readouterr().err
    assert "pip install 'nlmcs[serve]'" in err and "Traceback" not in err


def test_scheduler_without_the_dask_extra_names_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["ablation", "run", "--methods", "uct", "--games", "1", "--map", "tiny",
                 "--steps", "1", "--rollouts", "2", "--depth", "2", "--no-progress",
                 "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "run")]) == 2
    assert "pip install 'nlmcs[dask]'" in capsys.readouterr().err
