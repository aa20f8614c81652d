"""A local, throwaway `freeciv-server` for one game.

It listens on 127.0.0.1 only, on a free port, reads a generated start script (ruleset, map size
and seeds, AI players and their skill, no turn timeout, no autosaves) and runs as an unprivileged
user when started by root (the server refuses root). Used as a context manager, it stops the
server, and everything the server started, on leaving: normally, on an error, or on Ctrl-C;
if our process is killed outright, the server quits by itself once its client is gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option
from nlmcs.games.freeciv.codec import ProtocolError

BINARY = "/usr/games/freeciv-server"
AI_LEVELS = ("novice", "easy", "normal", "hard")
QUIT_IDLE_SECONDS = 10
"""The server quits this long after its last connection closed: the guard for a client killed
outright (kill -9, or a worker killed by its pool), which cannot stop it."""


def find_binary(binary: str | None = None) -> str:
    """The server program, or one clear line on how to get it."""
    path = binary or shutil.which("freeciv-server") or BINARY
    if not Path(path).is_file() or not os.access(path, os.X_OK):
        raise UserInputError(
            f"{path}: no FreeCiv server there (install it: apt-get install freeciv-server)"
        )
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class ServerConfig:
    """The game the server sets up."""

    seed: int = option(0, low=0, high=2**31 - 2)
    """Map and game seed (both, as seed + 1: 0 is FreeCiv's "at random"), so a seed gives the
    same world; FreeCiv keeps a larger one as 0, a random world, so it is refused here."""
    ai_players: int = option(1, low=1, high=7)
    """FreeCiv AI players besides the one client."""
    ai_level: Literal["novice", "easy", "normal", "hard"] = "easy"
    """The AI players' skill (`AI_LEVELS`)."""
    xsize: int = option(40, low=16, high=200)
    """Map width in tiles (40 x 25 = 1,000, the papers' size)."""
    ysize: int = option(25, low=16, high=200)
    """Map height in tiles."""
    ruleset: str = "classic"
    """The server's ruleset directory."""
    end_turn: int = option(5000, low=1)
    """The server ends the game after this turn."""

    def __post_init__(self) -> None:
        check_fields(self, "freeciv server option")

    def script(self) -> str:
        lines = [
            f"rulesetdir {self.ruleset}",
            'set topology "WRAPX"',
            "set mapsize XYSIZE",
            f"set xsize {self.xsize}",
            f"set ysize {self.ysize}",
            f"set mapseed {self.seed + 1}",  # 0 means "pick one at random"
            f"set gameseed {self.seed + 1}",
            "set timeout 0",
            # A planner may think for minutes while the client answers no pings.
            "set pingtime 1800",
            "set pingtimeout 1800",
            'set autosaves ""',
            "set minplayers 1",
            f"set aifill {self.ai_players + 1}",
            f"set endturn {self.end_turn}",
            self.ai_level,
        ]
        return "\n".join(lines) + "\n"


class FreeCivServer:
    """`with FreeCivServer(config) as server:` ... `server.port`."""

    def __init__(self, config: ServerConfig | None = None, *, binary: str | None = None,
                 start_timeout: float = 30.0):
        self.config = config or ServerConfig()
        self.binary = find_binary(binary)
        self.start_timeout = start_timeout
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    @property
    def log_path(self) -> Path | None:
        return self.dir / "server.log" if self.dir else None

    def __enter__(self) -> FreeCivServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if isinstance(exc, ProtocolError):  # say what the server said, while its log exists
            exc.args = (f"{exc}; the server's log ends: {self.log_tail()}",)
        self.stop()

    def start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="nlmcs-freeciv-"))
        script = self.dir / "start.serv"
        script.write_text(self.config.script())
        script.chmod(0o644)
        log = open(self.dir / "server.log", "wb")  # noqa: SIM115 (handed to the child)
        # The unprivileged server only reads here (its log is the descriptor we hand it).
        self.dir.chmod(0o755)
        self.port = free_port()
        cmd = [self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--read",
               str(script), "--saves", str(self.dir), "--exit-on-end", "--quitidle",
               str(QUIT_IDLE_SECONDS),
               "--Announce", "none", "--debug", "normal"]  # fmt: skip
        if os.geteuid() == 0:
            cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log,
                                         stderr=subprocess.STDOUT, cwd=self.dir,
                                         start_new_session=True)  # fmt: skip
        finally:
            log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise UserInputError(f"freeciv-server exited at start (status "
                                     f"{self.proc.returncode}): {self.log_tail()}")
            # Ready when our own server says so: a port taken meanwhile by another process
            # (free_port releases it before the server binds) must not pass for ours.
            if f"connections on port {self.port}." in self.log_path.read_text(errors="replace"):
                return
            time.sleep(0.1)
        raise UserInputError(f"freeciv-server did not listen on port {self.port} within "
                             f"{self.start_timeout:.0f} s: {self.log_tail()}")

    def command(self, line: str) -> None:
        """A server console command (`set ...`, `start`, ...)."""
        if self.proc and self.proc.stdin and self.proc.poll() is None:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()

    def log_tail(self, lines: int = 5) -> str:
        path = self.log_path
        if not path or not path.exists():
            return "(no log)"
        text = path.read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:]) or "(empty log)"

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        try:
            if proc is not None and proc.poll() is None:
                try:
                    with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                        os.killpg(proc.pid, signal.SIGTERM)
                        proc.wait(timeout=5)
                finally:  # also when a second Ctrl-C or SIGTERM cuts the wait short
                    if proc.poll() is None:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
        finally:
            if proc is not None and proc.stdin:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
                self.dir = None
