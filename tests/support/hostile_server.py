"""A hostile verifier service on loopback, for the tests of the agent's client: a real HTTP server
(a thread of the test process; `rw` runs as its own process against it) that answers `/whoami`,
the board, a claim, a leaf payload, a source's text, a submission and the messages with whatever
the test crafted, and serves a crafted git repository (built with the git CLI, links included)
over git's dumb HTTP protocol at /projects/SLUG.git/. Every submission body it receives is kept,
so a test can read exactly what the client sent."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from verifier.constants import SERVE_POLL_S

SLUG = "hostile-project"
LEAF = "extract-one"
SOURCE = "src_00112233445566aa"
SOURCE_TEXT = "The verification layer was bought by seven of eleven teams interviewed in March."


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def crafted_repository(where: Path, files: dict[str, bytes], links: dict[str, str] | None = None) -> tuple[Path, str]:
    """A bare repository of one commit holding `files` and the symbolic `links` (path -> target),
    ready for dumb HTTP; returns (its path, the commit id)."""
    work = where / "crafted-work"
    work.mkdir(parents=True)
    git(work, "init", "--quiet", "--initial-branch", "main")
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    for path, target in (links or {}).items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).symlink_to(target)
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "crafted")
    bare = where / "crafted.git"
    git(where, "clone", "--quiet", "--bare", "--no-local", str(work), str(bare))
    git(bare, "update-server-info")
    return bare, git(bare, "rev-parse", "main")


def contract(base: str, **changes: Any) -> dict[str, Any]:
    """A valid extract leaf contract of LEAF on `base`; `changes` override its fields."""
    body: dict[str, Any] = {
        "leaf_id": LEAF, "kind": "extract", "check": "extract", "inputs": {"source_id": SOURCE},
        "base_revision": base, "may_write": [{"op": "create", "path": "findings/*/fnd_*.yaml"}],
        "created_at": "2026-11-30T12:00:00Z", "created_by": "planner", "expires_at": "2099-01-01T00:00:00Z",
    }
    body.update(changes)
    return body


@dataclass
class Answers:
    """What the hostile service says; a test edits these before running `rw`."""

    whoami: dict[str, Any] = field(default_factory=lambda: {"agent": "outsider", "operator": "outside-op",
                                                              "type": "agent"})
    board: dict[str, Any] = field(default_factory=lambda: {"leaves": [{"leaf_id": LEAF, "kind": "extract",
                                                                       "state": "open", "warm": True}]})
    payload: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=lambda: {SOURCE: SOURCE_TEXT})
    verdict: dict[str, Any] = field(default_factory=lambda: {"outcome": "accepted", "summary": "1 finding",
                                                             "rejections": []})
    version: dict[str, Any] | None = None  # GET /version's answer; None: a service too old to have it (404)


@dataclass
class Hostile:
    url: str
    answers: Answers
    repository: Path
    base: str
    submissions: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def _answer(state: Hostile, path: str) -> dict[str, Any] | None:
    """The crafted JSON answer of a GET, or None for an unknown path."""
    prefix, answers = f"/projects/{SLUG}", state.answers
    if path == "/whoami":
        return answers.whoami
    if path == f"{prefix}/leaves":
        return answers.board
    if path.startswith(f"{prefix}/leaves/") and path.endswith("/payload"):
        return answers.payload
    if path.startswith(f"{prefix}/sources/") and path.endswith("/text"):
        return {"text": answers.texts.get(unquote(path.split("/")[4]), SOURCE_TEXT)}
    if path == "/messages":
        return {"messages": []}
    if path == "/version":
        return answers.version
    return None


class HostileHandler(BaseHTTPRequestHandler):
    state: Hostile  # set on the subclass `hostile_service` makes

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads `state.paths` instead."""

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, body: dict[str, Any], status: int = 200) -> None:
        self._send(status, json.dumps(body).encode(), "application/json")

    def _git(self, rest: str) -> None:
        # Dumb HTTP: the repository's files as they are (info/refs without the smart content
        # type makes git fall back to the dumb protocol).
        root = self.state.repository.resolve()
        target = (root / rest).resolve()
        if root not in target.parents or not target.is_file():
            self._send(404, b"", "text/plain")
        else:
            self._send(200, target.read_bytes(), "text/plain" if rest == "info/refs" else "application/octet-stream")

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.state.paths.append(f"GET {path}")
        if path.startswith(f"/projects/{SLUG}.git/"):
            self._git(path[len(f"/projects/{SLUG}.git/") :])
            return
        answer = _answer(self.state, path)
        self._json(answer if answer is not None else {"error": {"code": "not_found", "message": path}},
                   200 if answer is not None else 404)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        self.state.paths.append(f"POST {path}")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if path.endswith("/claim"):
            self._json({"claimed": True})
        elif path.endswith("/submissions"):
            self.state.submissions.append(body)
            self._json({"verdict": self.state.answers.verdict, "submission_id": f"sub_{len(self.state.submissions)}"})
        else:
            self._json({"error": {"code": "not_found", "message": path}}, 404)


@contextmanager
def hostile_service(where: Path, files: dict[str, bytes] | None = None,
                    links: dict[str, str] | None = None) -> Iterator[Hostile]:
    """The hostile service on a free loopback port, serving a repository of `files` and `links`
    (default: a README and an empty findings folder's marker) and a valid payload of LEAF on it."""
    repository, base = crafted_repository(where, files or {"README.md": b"# a project\n",
                                                           "findings/.keep": b""}, links)
    state = Hostile("", Answers(), repository, base)
    state.answers.payload = {"project": SLUG, "tip": base, "state": "open", "contract": contract(base),
                             "inputs": {"source": {"path": f"sources/00/{SOURCE}.yaml"}},
                             "field_guide": "# Field Guide\n", "at": "2026-11-30T12:00:00Z"}
    handler = type("Handler", (HostileHandler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SERVE_POLL_S},
                              name="hostile-service", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def fresh_payload(state: Hostile) -> dict[str, Any]:
    """A deep copy of the served payload, to edit into a hostile one."""
    return copy.deepcopy(state.answers.payload)


def snapshot(root: Path, *, skip: Path | None = None) -> dict[str, tuple[int, bytes]]:
    """Every entry under `root` (but `skip` and below) as (mode, contents or link target): what a
    test compares to say nothing was written outside the working folder."""
    seen: dict[str, tuple[int, bytes]] = {}
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        if skip is not None and (here == skip or skip in here.parents):
            dirs[:] = []
            continue
        for name in [*dirs, *names]:
            path = here / name
            if skip is not None and path == skip:
                continue
            info = path.lstat()
            if path.is_symlink():
                content = str(path.readlink()).encode()
            elif path.is_file():
                content = path.read_bytes()
            else:
                content = b""
            seen[path.relative_to(root).as_posix()] = (info.st_mode, content)
    return seen
