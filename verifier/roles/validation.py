"""The validation set and its replay (design §6.1): pinned leaves, a platform-run worker, the real verifier.

`fixtures/validation/validation.json` names a version, the pinned project (a fixture folder with
its sources), and the leaves: extract leaves on the project's pinned sources, and scout leaves
whose pinned source bytes (sha256 in the file) the harness serves itself on a loopback HTTP server,
so the verifier's honest fetch runs for real and always sees the same bytes. Everything is
deterministic but the worker.

A replay makes a scratch RW_HOME, creates the project, writes each leaf, hands the worker a
WorkerTask carrying the candidate skill, submits what it returns through the real `submit`, and
scores the verdicts. The worker is any callable; `CommandWorker` runs the configured command
(`settings.validation_worker`): the task as JSON on stdin, `{"patch_base64", "trace_base64"}` on stdout.
Without one, the platform's own worker does the leaves with the `worker` model
(verifier/agentkit/modelworker.py, `validation_worker`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from verifier.constants import SERVE_POLL_S, WORKER_TIMEOUT_S
from verifier.errors import FormatError, VerifierError
from verifier.formats.base import Strict, iso
from verifier.formats.frontmatter import load_front_matter
from verifier.formats.leaf import LeafContract
from verifier.formats.skill import skill_version
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.submit import Submission, submit
from verifier.roles.gating import LeafScore
from verifier.state.layout import PROJECT_FILE, classify, default_write_rules
from verifier.store.fetcher import HttpFetcher
from verifier.store.home import Home, Settings
from verifier.writes.project import add_leaf, init_project

DEFAULT_SET = Path(__file__).resolve().parents[2] / "fixtures" / "validation"
WORKER = ("validation-worker", "platform")


class ServedSource(Strict):
    path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._/-]{1,200}$")]
    file: str
    media_type: str
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class ValidationLeaf(Strict):
    leaf_id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{2,63}$")]
    kind: Literal["extract", "scout"]
    source_id: str | None = None
    gap: str | None = None
    serve: list[ServedSource] = Field(default_factory=list)


class ValidationSet(Strict):
    version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    project: str  # the pinned project folder, relative to the set's folder
    slug: str  # the project's slug, as its PROJECT.md names it
    leaves: list[ValidationLeaf]


@dataclass(frozen=True)
class LoadedSet:
    spec: ValidationSet
    folder: Path

    @property
    def version(self) -> str:
        return self.spec.version

    def digest(self) -> str:
        """sha256 over the set's definition, its served sources and the pinned project's files."""
        digest = hashlib.sha256(self.spec.model_dump_json().encode())
        project = (self.folder / self.spec.project).resolve()
        files = sorted(path for path in project.rglob("*") if path.is_file())
        for path, data in [(p.relative_to(project).as_posix(), p.read_bytes()) for p in files] + [
                (name, body) for name, (body, _kind) in sorted(self.served().items())]:
            digest.update(f"{path}\0{len(data)}\0".encode() + data)
        return digest.hexdigest()

    def served(self) -> dict[str, tuple[bytes, str]]:
        """Every served path's pinned bytes and media type, checked against the pinned sha256."""
        files: dict[str, tuple[bytes, str]] = {}
        for leaf in self.spec.leaves:
            for item in leaf.serve:
                data = (self.folder / item.file).read_bytes()
                if hashlib.sha256(data).hexdigest() != item.sha256:
                    raise FormatError(f"{item.file} does not match its pinned sha256", str(self.folder))
                files[item.path] = (data, item.media_type)
        return files


def load_validation_set(folder: Path = DEFAULT_SET) -> LoadedSet:
    path = folder / "validation.json"
    try:
        spec = ValidationSet.model_validate(json.loads(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise FormatError(f"not a validation set: {exc}", str(path)) from exc
    return LoadedSet(spec, folder)


@dataclass(frozen=True)
class WorkerTask:
    """What the platform-run worker gets for one leaf. `hints` are URLs of the pinned scout sources."""

    home: str
    project: str
    repo: str
    leaf_id: str
    kind: str
    base_revision: str
    inputs: dict[str, object]
    hints: list[str]
    skill: str
    skill_version: str
    agent: str
    operator: str
    token: str
    now: str
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkerResult:
    patch: bytes
    trace: dict[str, bytes]


Worker = Callable[[WorkerTask], WorkerResult]


class WorkerError(VerifierError):
    """The worker did not return a submission for a leaf: it failed, timed out or said nothing usable."""


@dataclass(frozen=True)
class CommandWorker:
    """Runs the configured worker command once per leaf (argument list, never a shell string)."""

    argv: tuple[str, ...]
    timeout_s: float = WORKER_TIMEOUT_S

    def __call__(self, task: WorkerTask) -> WorkerResult:
        command = " ".join(self.argv)
        try:
            done = subprocess.run(list(self.argv), input=json.dumps(asdict(task)).encode(), capture_output=True,
                                  timeout=self.timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WorkerError(f"worker {command!r} for {task.leaf_id}: {exc}") from exc
        if done.returncode != 0:
            tail = done.stderr[-400:].decode(errors="replace")
            raise WorkerError(f"worker {command!r} for {task.leaf_id} exited {done.returncode}: {tail}")
        try:
            value = json.loads(done.stdout)
            return WorkerResult(base64.b64decode(value["patch_base64"]),
                                {str(k): base64.b64decode(v) for k, v in value["trace_base64"].items()})
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise WorkerError(f"worker {command!r} for {task.leaf_id}: its output is not "
                              f"{{patch_base64, trace_base64}}: {exc}") from exc


class _Handler(BaseHTTPRequestHandler):
    def __init__(self, files: dict[str, tuple[bytes, str]], *args: object) -> None:
        self.files = files
        super().__init__(*args)  # type: ignore[arg-type]

    def do_GET(self) -> None:
        body, kind = self.files.get(self.path, (b"not found", "text/plain"))
        self.send_response(200 if self.path in self.files else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@contextmanager
def _serving(files: dict[str, tuple[bytes, str]]) -> Iterator[str]:
    """A loopback server with exactly the pinned files (robots.txt is a 404: no rules)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, files))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SERVE_POLL_S}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _objects(home: Home, slug: str, before: str, after: str | None) -> int:
    """Findings and source records an accepted leaf landed."""
    if after is None:
        return 0
    paths = home.project(slug).changed_paths(before, after)
    return sum(1 for path in paths if path.endswith(".yaml") and (kind := classify(path)) is not None
               and kind.type in ("finding", "source"))


def _contract(leaf: ValidationLeaf, base: str, now: datetime) -> LeafContract:
    inputs = {key: value for key, value in (("source_id", leaf.source_id), ("gap", leaf.gap)) if value}
    return LeafContract.model_validate({
        "leaf_id": leaf.leaf_id, "kind": leaf.kind, "inputs": inputs, "base_revision": base,
        "may_write": [rule.model_dump() for rule in default_write_rules(leaf.kind)], "check": leaf.kind,
        "created_at": now, "created_by": "planner", "expires_at": now + timedelta(days=1)})


@dataclass(frozen=True)
class _Scratch:
    home: Home
    slug: str
    token: str
    fetcher: HttpFetcher
    base_url: str


def _run_leaf(scratch: _Scratch, leaf: ValidationLeaf, skill_text: str, worker: Worker, now: datetime) -> LeafScore:
    home, slug = scratch.home, scratch.slug
    tip = home.project(slug).tip()
    assert tip is not None  # init_project made the first commit
    contract = _contract(leaf, tip, now)
    add_leaf(home, slug, contract, now=now, actor="planner",
             disjoint=False)  # replays leaves on one source one after another
    before = home.project(slug).tip()
    assert before is not None
    task = WorkerTask(home=str(home.root), project=slug, repo=str(home.repo_path(slug)), leaf_id=leaf.leaf_id,
                      kind=leaf.kind, base_revision=tip, inputs=contract.inputs.model_dump(exclude_none=True),
                      hints=[scratch.base_url + item.path for item in leaf.serve], skill=skill_text,
                      skill_version=skill_version(skill_text.encode("utf-8")), agent=WORKER[0], operator=WORKER[1],
                      token=scratch.token, now=iso(now))
    try:
        output = worker(task)
    except WorkerError:
        # The candidate skill may be what broke the worker: the leaf scores as not accepted.
        return LeafScore(leaf.leaf_id, leaf.kind, "rejected", 0, "worker_failed")
    verdict = submit(home, Submission(slug, leaf.leaf_id, output.patch, output.trace, scratch.token),
                     now=now, fetcher=scratch.fetcher)
    return LeafScore(leaf.leaf_id, leaf.kind, verdict.outcome, _objects(home, slug, before, verdict.commit),
                     verdict.rejections[0].code if verdict.rejections else None)


def _loopback_template(template: Path, into: Path) -> Path:
    """A copy of the pinned project whose source policy names the harness's loopback server (plain
    http to 127.0.0.1), so the verifier's real fetch runs on the pinned bytes; nothing else changes."""
    shutil.copytree(template, into)
    front, body = load_front_matter((into / PROJECT_FILE).read_bytes(), PROJECT_FILE)
    if not isinstance(front, dict):
        raise FormatError("front matter is not a mapping of fields", str(into / PROJECT_FILE))
    policy = dict(front.get("source_policy") or {})
    policy.update(allow_http=True, allow_domains=["127.0.0.1"])
    front["source_policy"] = policy
    (into / PROJECT_FILE).write_bytes(b"---\n" + dump_yaml(front) + b"---\n" + body.encode("utf-8"))
    return into


def replay(validation: LoadedSet, skill_text: str, worker: Worker, *, now: datetime) -> list[LeafScore]:
    """Run every validation leaf with `skill_text` in a scratch home; one LeafScore per leaf."""
    with tempfile.TemporaryDirectory(prefix="rw-validation-") as folder, _serving(validation.served()) as base:
        root = Path(folder) / "home"
        Home(root).save_settings(Settings(durable=False, allow_private_addresses=True))
        home = Home(root)
        slug = validation.spec.slug
        pinned = (validation.folder / validation.spec.project).resolve()
        template = _loopback_template(pinned, Path(folder) / "template")
        init_project(home, slug, now=now, template=template)
        token = home.identities.add(WORKER[0], WORKER[1], "agent", now)
        fetcher = HttpFetcher(user_agent=home.settings.user_agent, timeout_s=10.0, allow_private_addresses=True)
        scratch = _Scratch(home, slug, token, fetcher, base)
        return [_run_leaf(scratch, leaf, skill_text, worker, now) for leaf in validation.spec.leaves]
