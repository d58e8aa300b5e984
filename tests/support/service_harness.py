"""A real `rw serve` process on loopback for the service tests: start, wait until it answers, stop
or SIGKILL its whole process group; plus leaves that expire in real time (the server's clock is
the machine's, not the fixtures' NOW)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support.world import NOTE_ID, SLUG
from verifier.agentkit.objects import finding_file
from verifier.agentkit.scripted import ScriptedAgent
from verifier.client.http import Client
from verifier.formats.leaf import LeafContract
from verifier.state.layout import default_write_rules
from verifier.store.home import Home
from verifier.writes.project import add_leaf

RW = str(Path(sys.executable).parent / "rw")
ROOT = Path(__file__).resolve().parents[2]
KILL_ENV = "RW_TEST_KILL_AT"
START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    home: Path
    port: int
    proc: subprocess.Popen[bytes]
    log: Path
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, token: str | None = None, *, retry_for_s: float = 5.0) -> Client:
        return Client(self.url, token, retry_for_s=retry_for_s, timeout_s=30.0)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rw serve exited with {self.proc.returncode}:\n{self.output()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                                 "Connection: close\r\n\r\n".encode())
                    if sock.recv(64).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"rw serve did not answer within {START_TIMEOUT_S}s:\n{self.output()}")

    def stop(self) -> None:
        """A clean stop (SIGTERM), as a supervisor would."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.reap()

    def kill(self) -> None:
        """kill -9 of the whole server: the main process and its workers."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=20)
        self.reap()

    def reap(self) -> None:
        """Wait until no process of the server's group is left (workers exit when their parent dies)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def wait_dead(self, timeout: float = 30) -> None:
        self.proc.wait(timeout=timeout)
        self.reap()


def start(home: Path, *args: str, env: dict[str, str] | None = None, port: int | None = None,
          wait: bool = True) -> Server:
    port = port or free_port()
    log = home.parent / f"serve-{port}-{time.monotonic_ns()}.log"
    full_env = {**os.environ, "RW_HOME": str(home), **(env or {})}
    # A crash point is handed to the workers by a test-only server (tests.support.crash_server).
    command = [sys.executable, "-m", "tests.support.crash_server"] if env and KILL_ENV in env else [RW, "serve"]
    if not (env and KILL_ENV in env):
        full_env.pop(KILL_ENV, None)
    with log.open("wb") as out:
        proc = subprocess.Popen([*command, "--port", str(port), "--workers", "1", *args], env=full_env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
    server = Server(home, port, proc, log, args, env or {})
    if wait:
        server.wait_ready()
    return server


def restart(server: Server, *args: str, env: dict[str, str] | None = None) -> Server:
    return start(server.home, *(args or server.args), env=env, port=server.port)


def live_leaf(home: Home, leaf_id: str, *, expires_in: timedelta = timedelta(hours=1), kind: str = "extract",
              source_id: str | None = NOTE_ID, slug: str = SLUG, **inputs: object) -> LeafContract:
    """A leaf whose expiry is in real time (the server's clock)."""
    now = datetime.now(UTC).replace(microsecond=0)
    repo = home.project(slug)
    all_inputs: dict[str, object] = dict(inputs)
    if kind == "extract":
        all_inputs["source_id"] = source_id
    contract = LeafContract.model_validate({
        "leaf_id": leaf_id, "kind": kind, "inputs": all_inputs, "base_revision": repo.tip(),
        "may_write": [r.model_dump() for r in default_write_rules(kind)],  # type: ignore[arg-type]
        "check": kind, "created_at": now, "created_by": "planner", "expires_at": now + expires_in,
    })
    add_leaf(home, slug, contract, now=now, actor="planner",
             disjoint=False)  # replays leaves on one source one after another
    return contract


def raw_request(port: int, data: bytes, *, read_timeout: float = 10.0) -> bytes:
    """Send bytes as they are and read the answer (for what a well-behaved client never sends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                if b"\r\n\r\n" in b"".join(chunks) and b"connection: close" not in b"".join(chunks).lower():
                    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), None)
                    if length is not None and len(body) >= length:
                        break
        except TimeoutError:
            pass
        return b"".join(chunks)


def distinct_findings(agent: ScriptedAgent, leaf_id: str, first: int, count: int = 3, *,
                      source_id: str = NOTE_ID, slug: str = SLUG) -> dict[str, bytes]:
    """`count` findings quoting windows of six words of the source, numbered from `first`, so every
    call with other numbers makes findings no other call makes."""
    tip = agent.home.project(slug).tip()
    assert tip is not None
    text = agent.source_text(slug, source_id, tip)
    words = text.split(" ")
    files: dict[str, bytes] = {}
    for number in range(first, first + count):
        excerpt = " ".join(words[number * 6:(number + 1) * 6])
        assert excerpt, f"the source has fewer than {number + 1} six-word windows"
        path, data = finding_file(source_id=source_id, source_text=text, excerpt=excerpt,
                                  statement=f"Window {number} of the source says this.",
                                  limitation="Test finding: a window of words, not a claim.", leaf_id=leaf_id)
        files[path] = data
    return files
