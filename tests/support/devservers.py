"""Real servers on loopback for development, tests and benchmarks beyond one machine: an
S3-compatible server (moto in server mode, its own process), a throwaway PostgreSQL cluster and
git's own `git daemon`. Each starts in a temporary folder and stops when its block ends;
`Unavailable` names why one cannot start (the tests turn it into a skip, scripts into an exit)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn


class Unavailable(RuntimeError):  # noqa: N818 - names the condition the caller reports
    """A server cannot be started on this machine (not installed, no user to run it as)."""


def unavailable(reason: str) -> NoReturn:
    raise Unavailable(reason)

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], *, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {seconds} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def s3_server() -> Iterator[str]:
    """An S3-compatible server (moto, a separate process speaking HTTP); yields its endpoint URL."""
    port = free_port()
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


PG_DIRS = ("/usr/local/bin", *sorted(str(p) for p in Path("/usr/lib/postgresql").glob("*/bin")))


def pg_binary(name: str) -> str | None:
    """initdb / pg_ctl from PATH, /usr/local/bin or Debian's /usr/lib/postgresql/*/bin."""
    found = shutil.which(name)
    if found:
        return found
    for folder in PG_DIRS:
        if (Path(folder) / name).is_file():
            return str(Path(folder) / name)
    return None


def _as_cluster_owner() -> list[str]:
    """initdb refuses root: run the cluster as the `postgres` (or `nobody`) user then."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    if runuser is None:
        unavailable("running as root and no runuser to start PostgreSQL as another user")
    for user in ("postgres", "nobody"):
        if subprocess.run(["id", "-u", user], capture_output=True, check=False).returncode == 0:
            return [runuser, "-u", user, "--"]
    unavailable("running as root and no postgres/nobody user to own a PostgreSQL cluster")


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster in a fresh folder under the system's temporary folder (which
    any user can reach, so a cluster owner other than root can too) on a loopback port; yields its
    connection string. The cluster and its folder are removed afterwards."""
    initdb, pg_ctl = pg_binary("initdb"), pg_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        unavailable("PostgreSQL is not installed (no initdb/pg_ctl on PATH, /usr/local/bin, /usr/lib/postgresql)")
    prefix = _as_cluster_owner()
    tmp = Path(tempfile.mkdtemp(prefix="rw-pg-"))
    if prefix:
        shutil.chown(tmp, user=prefix[2])
    data, port = tmp / "data", free_port()
    try:
        subprocess.run([*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "rw", "--no-sync"],
                       check=True, capture_output=True)
        options = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(tmp / "pg.log"), "-w", "start"],
                       check=True, capture_output=True)
        yield f"host=127.0.0.1 port={port} user=rw dbname=postgres"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                       check=False, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """git's own server (`git daemon`, pushes enabled) serving the bare repositories under `base` on
    a loopback port; yields the URL prefix (`git://127.0.0.1:PORT`); a repository is PREFIX/NAME."""
    if shutil.which("git") is None:
        unavailable("git is not installed")
    port = free_port()
    process = subprocess.Popen(["git", "daemon", "--reuseaddr", f"--base-path={base}", "--export-all",
                                "--enable=receive-pack", "--listen=127.0.0.1", f"--port={port}", str(base)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        try:
            wait_for_port(port, process, seconds=15)
        except RuntimeError as exc:
            unavailable(f"git daemon cannot start: {exc}")
        yield f"git://127.0.0.1:{port}"
    finally:
        _stop(process)
