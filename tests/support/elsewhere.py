"""People on their own machines, for the token, invite and git-over-HTTP tests: a real `rw`
process run with only a client folder (no RW_HOME), real git against the service, raw requests."""

from __future__ import annotations

import http.client
import os
import subprocess
from pathlib import Path

from tests.support.service_harness import RW


def elsewhere_env(client_home: Path, **extra: str) -> dict[str, str]:
    """The environment of a second machine: a HOME and a client folder of its own, no RW_HOME, no
    RW_SERVER or RW_TOKEN; git never prompts."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("RW_HOME", "RW_SERVER", "RW_TOKEN", "RW_AGENT", "RW_CLIENT_HOME")}
    client_home.mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(client_home), "RW_CLIENT_HOME": str(client_home / "rw"), "GIT_TERMINAL_PROMPT": "0",
                "GIT_CONFIG_NOSYSTEM": "1", **extra})
    return env


def rw(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RW, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=120)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None,
        token: str | None = None) -> subprocess.CompletedProcess[str]:
    base = env or {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    auth = ["-c", f"http.extraHeader=Authorization: Bearer {token}"] if token else []
    return subprocess.run(["git", *auth, *args], cwd=cwd, env=base, capture_output=True, text=True, check=False,
                          timeout=120)


def clone_and_commit(url: str, dest: Path, name: str, env: dict[str, str] | None = None) -> Path:
    """A clone of `url` at `dest` with one new commit adding `name`."""
    done = git(dest.parent, "clone", "--quiet", url, dest.name, env=env)
    assert done.returncode == 0, done.stderr
    (dest / name).write_text(f"a person's note in {name}\n")
    assert git(dest, "add", name, env=env).returncode == 0
    done = git(dest, "-c", "user.name=P", "-c", "user.email=p@example.org", "commit", "--quiet", "-m",
               f"add {name}", env=env)
    assert done.returncode == 0, done.stderr
    return dest


def get_status(port: int, path: str, token: str) -> tuple[int, str]:
    """A GET with `Authorization: Bearer` as git sends it (User-Agent git/...): status and body text."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}", "User-Agent": "git/2.39.5"})
        answer = conn.getresponse()
        return answer.status, answer.read().decode("utf-8", "replace")
    finally:
        conn.close()
