"""`nlmcs serve` as a real process: it serves, records a game played over HTTP, and on SIGTERM
or Ctrl-C shuts down gracefully, ingests the finished game and exits like every command
(143 after SIGTERM, 130 after Ctrl-C)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_serve_records_a_game_and_ingests_it_at_shutdown(sig, status):
    from corpus.store import load_corpus

    port, corpus = free_port(), f"serve-proc-{uuid.uuid4().hex[:8]}"
    # The child must act on SIGINT even where the test runner's own shell ignores it.
    server = subprocess.Popen(
        [sys.executable, "-m", "nlmcs.cli", "serve", "--port", str(port), "--map", "tiny",
         "--max-turns", "2", "--corpus", corpus],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
        deadline = time.monotonic() + 60
        while True:
            try:
                client.get("/api/games")
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr
                time.sleep(0.1)
        view = client.post("/api/games", json={"seed": 1}).json()
        for turn in (0, 1):
            view = client.post(f"/api/games/{view['id']}/end-turn", json={"turn": turn}).json()
        assert view["over"]
        server.send_signal(sig)
        out, err = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == status, err
    assert out.startswith("serving on http://127.0.0.1:")
    assert f"note: corpus {corpus}: +1 games" in err
    assert "Traceback" not in err
    assert len(load_corpus(corpus).games) == 1
    assert os.environ["NLMCS_DATA"] in out
