"""`nlmcs serve` at the command line: bad options are one line and exit status 2, before any
server starts."""

from __future__ import annotations

import socket

import pytest

from nlmcs.cli import main


@pytest.fixture(autouse=True)
def _no_server(monkeypatch):
    """A check that lets a bad option through fails the test instead of serving forever."""
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda *a, **k: pytest.fail("the server started"))


@pytest.mark.parametrize("argv, words", [
    (["--opponent", "chess-master"], "unknown opponent 'chess-master'"),
    (["--opponent", "builtin:godlike"], "unknown AI level"),
    (["--corpus", "../elsewhere"], "bad corpus name"),
    (["--port", "0"], "--port must be between 1 and 65535"),
    (["--port", "http"], "--port"),
    (["--map", "huge"], "invalid choice"),
    (["--advice-rollouts", "0"], "--advice-rollouts must be at least 1"),
    (["--host", "no.such.host.invalid"], "--host"),
    (["--manual", "nonexistent"], "nonexistent"),
    (["--opponent", "text", "--manual", "nonexistent"], "nonexistent"),
])
def test_bad_options_are_one_line(capsys, argv, words):
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and err.count("\n") == 1, err


def test_a_port_in_use_is_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: already in use" in err


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit) as done:
        main(["serve", "--help"])
    assert done.value.code == 0
    assert "example:\n  nlmcs serve" in capsys.readouterr().out
