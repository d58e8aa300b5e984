"""Worker processes under a wall-clock limit (verifier.roles.processes) and what makes an agent's
run a crash (verifier.roles.agentworker.crash_reason): exit code, signal, limit, no transcript."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from verifier.roles.agentworker import AgentWorkerConfig, agent_env, crash_reason
from verifier.roles.processes import Finished, run_limited


def _gone(pid: int) -> bool:
    """The process has exited (no such pid, or a zombie nobody reaped yet)."""
    try:
        os.kill(pid, 0)
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return True


def _wait_until(condition: Callable[[], bool], deadline_s: float = 60.0) -> bool:
    """Wait for a state, not for a time: True as soon as `condition` holds, False at the deadline."""
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.slow  # a real process group, run to its wall-clock limit
def test_a_process_past_its_limit_is_stopped_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # The shell starts its child before anything else (milliseconds, far inside the limit) and
    # obeys SIGTERM; the child ignores it, so only the group's SIGKILL stops it.
    script = f"(trap '' TERM; exec sleep 120) & echo $! > {pid_file}; wait"
    finished = run_limited(["sh", "-c", script], cwd=tmp_path, env=dict(os.environ),
                           stdout=tmp_path / "out", stderr=tmp_path / "err", limit_s=5)
    assert finished.timed_out and finished.exit_code is None
    assert "stopped at the wall-clock limit of 5s" in (finished.failure() or "")
    child = int(pid_file.read_text())
    assert _wait_until(lambda: _gone(child)), f"child {child} outlived its group's limit"


def test_exit_codes_signals_and_silence_are_crashes_with_their_reason() -> None:
    assert crash_reason("claude", Finished(1, None, 0.5, 60), 10) == "agent claude exited with code 1"
    assert crash_reason("codex", Finished(-9, 9, 0.5, 60), 10) == "agent codex killed by signal 9 (SIGKILL)"
    assert "produced nothing" in (crash_reason("claude", Finished(0, None, 0.5, 60), 0) or "")
    assert crash_reason("claude", Finished(0, None, 0.5, 60), 10) is None


def test_the_agent_gets_the_token_in_its_environment_and_never_the_home_or_the_runners_copy() -> None:
    config = AgentWorkerConfig("claude", "http://127.0.0.1:1", "rwt_the-token")
    env = agent_env({"RW_HOME": "/home/rw", "RW_WORKER_TOKEN": "rwt_the-token", "PATH": "/usr/bin",
                     "ANTHROPIC_API_KEY": "k"}, config, "p", "extract-0123456789ab")
    assert env["RW_TOKEN"] == "rwt_the-token" and "RW_HOME" not in env and "RW_WORKER_TOKEN" not in env
    assert env["RW_LEAF"] == "extract-0123456789ab" and env["ANTHROPIC_API_KEY"] == "k"
    assert env["PATH"].endswith("/usr/bin") and env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
