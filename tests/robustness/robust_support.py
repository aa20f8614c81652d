"""What the robustness tests share: running `nlmcs` in real processes, and the checks every
case makes (one `error:` line naming the problem, no traceback, the store kept), each counted in
`TALLY` for the suite's summary (`conftest.py`).

No test waits for a fixed time: processes are awaited, and polls wait for a condition, with a
generous deadline only so that a hang fails instead of blocking the suite.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "manuals"
DEADLINE = float(os.environ.get("NLMCS_TEST_DEADLINE", "300"))
"""Seconds before a poll or a process counts as hung (never reached by a working build)."""


def nlmcs_argv(*args) -> list[str]:
    return [sys.executable, "-m", "nlmcs.cli", *(str(a) for a in args)]


class Result:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Result(code={self.code}, err={self.err[-2000:]!r})"


def run(*args, env: dict, stdin=subprocess.DEVNULL, **kwargs) -> Result:
    """Run `nlmcs ARGS` to its end in a fresh process."""
    proc = subprocess.run(nlmcs_argv(*args), env=env, stdin=stdin, capture_output=True,
                          text=True, timeout=DEADLINE, **kwargs)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def start(*args, env: dict, **kwargs) -> subprocess.Popen:
    """Start `nlmcs ARGS` in its own process group (as a shell job is), output to pipes."""
    return subprocess.Popen(nlmcs_argv(*args), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)


def finish(proc: subprocess.Popen) -> Result:
    try:
        out, err = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        # a command that ignored the signal it was sent must not outlive its test
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the command did not end within {DEADLINE} s")
    return Result(proc.returncode, out, err)


def wait_for(condition: Callable[[], object], what: str, proc: subprocess.Popen | None = None):
    """Poll until `condition()` is true; fail (and stop `proc`) if it never becomes so."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"process ended ({proc.returncode}) before {what}: {err[-2000:]}")
        time.sleep(0.05)
    if proc is not None:
        proc.kill()
    pytest.fail(f"gave up waiting for {what}")


TALLY: Counter[str] = Counter()
"""What the checks below saw, over the whole run; printed after the tests (see
`pytest_terminal_summary`) for the counts the suite reports."""


def assert_refused(result: Result, *needles: str, code: int = 2) -> None:
    """One `error:` line naming what was wrong; no traceback."""
    if "Traceback" in result.err:
        TALLY["tracebacks"] += 1
    elif result.code == 0:
        TALLY["silent acceptances"] += 1
    assert result.code == code, result
    assert "Traceback" not in result.err, result
    errors = [line for line in result.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result
    for needle in needles:
        assert needle in errors[0], result
    TALLY["clean refusals"] += 1


def assert_clean(result: Result, code: int = 0) -> None:
    if "Traceback" in result.err:
        TALLY["tracebacks"] += 1
    assert result.code == code, result
    assert "Traceback" not in result.err, result


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under `root` (lock files aside)."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(".lock")}


def assert_store_kept(root: Path, before: dict[str, str]) -> None:
    """Every file under `root` is byte-identical to `before` (a `tree_digest`), none added."""
    after = tree_digest(root)
    if after != before:
        TALLY["data lost or changed"] += 1
    assert after == before, sorted(set(after.items()) ^ set(before.items()))
    TALLY["stores kept byte-identical"] += 1


def hidden_leftovers(folder: Path) -> list[str]:
    """Hidden entries other than lock files: what an unfinished write leaves."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.name.startswith(".") and not p.name.endswith(".lock"))


def ordinary_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
