"""The verifier home (RW_HOME): project repositories, anchors, locks, traces, identities, caches.

    $RW_HOME/
      config.json                 optional settings (see Settings)
      identities.json             agents and people, hashed tokens (in PostgreSQL when the Commons is)
      commons.sqlite3             the embedded Commons: claims, messages, outages, the job journal
      projects/<slug>.git         bare project repositories (agents clone these)
      projects/<slug>.anchor.json the ledger head as last written (catches a branch reset)
      projects/<slug>.next.json   the anchor a publish of several landings is moving to (until it is)
      locks/<slug>.lock           one writer per project (<slug>.writing: one is open, or was killed)
      locks/<slug>.publish.lock   one push to the project's git host at a time
      locks/<slug>.commons.lock   one Commons notifier pass per project at a time
      locks/<name>.lock           the service, the ops wiki, the skill, the maintainer, the skill gate
      traces/<trace_id>/          the private trace store
      cache/text/                 derived source text, keyed by blob and extractor version
      logs/                       run logs (searched by the leak test)
      runs/<slug>/                the runner's per-leaf logs
      loop/                       the improvement loop: outcomes/, maintainer.json, gate.json
      skill/                      the live SKILL.md and history/<version>.md
      ops-wiki.git                the operations wiki
      eval/validation.json        the validation set (rw eval)
      audit/denials.jsonl         refused authentications and authority checks, bounded (verifier.store.audit)
      site/                       the static site `rw demo` builds

`HomeLayout` spells every one of these paths; nothing else joins a name onto the home's root.

At rest, the home's secrets and databases (PRIVATE_FILES: identities, config, the Commons
database) are 0600 and its private folders (PRIVATE_DIRS: the trace store, the ops wiki, the audit log) 0700
from creation (each writer creates them so), and opening a home tightens any it finds looser
(`tighten`), so a home restored with a umask of 022 is private again at the first `rw` command.
The Resolver's private key is refused, not tightened, when it is readable by others
(verifier.seal.keys): a key that was exposed must be replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field, ValidationError

from verifier.constants import LOCK_WAIT_S, WARM_POOL
from verifier.errors import FormatError, NotFound
from verifier.formats.base import Handle, Strict, check_slug
from verifier.model.adapter import ModelConfig
from verifier.model.roles import Role, RoleKey, role_config
from verifier.store.backends import Backends, TraceBackend, trace_store
from verifier.store.fetcher import DEFAULT_USER_AGENT
from verifier.store.files import write_atomic
from verifier.store.gitrepo import ProjectRepo, open_repo
from verifier.store.identities import FileIdentities, Identities
from verifier.store.upkeep import Upkeep

# What only this home's owner may read (relative to the home): 0600 files, 0700 folders.
COMMONS_FILE = "commons.sqlite3"  # the embedded Commons database (SQLite), in the home's root
PRIVATE_FILES = ("identities.json", "config.json", COMMONS_FILE, f"{COMMONS_FILE}-wal", f"{COMMONS_FILE}-shm")
PRIVATE_DIRS = ("traces", "ops-wiki.git", "audit")
PRIVATE_FILE_MODE, PRIVATE_DIR_MODE = 0o600, 0o700


def _narrow(path: Path, mode: int) -> bool:
    """chmod `path` to `mode` when group or others have any access; True if it was looser. A link
    is left alone (never chmod through one), and so is a file of another user's."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode) or not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return False
    try:
        path.chmod(mode)
    except PermissionError:
        return False
    return True


def tighten(root: Path) -> list[str]:
    """Narrow every private file and folder of the home found looser; returns those narrowed."""
    files = [name for name in PRIVATE_FILES if _narrow(root / name, PRIVATE_FILE_MODE)]
    return files + [name for name in PRIVATE_DIRS if _narrow(root / name, PRIVATE_DIR_MODE)]


class Settings(Strict):
    """config.json. `fetch: offline` skips the URL check of scout sources and records that in
    the ledger; `durable: false` skips fsync (tests and benchmarks on throwaway homes only);
    `model` is the default frontier-model backend of every role, and `models` names one per role
    (baseline, resolve, plan, diagnose, propose, worker, or default; docs/models.md)."""

    fetch: str = Field(default="online", pattern="^(online|offline)$")
    allow_private_addresses: bool = False
    durable: bool = True
    user_agent: str = DEFAULT_USER_AGENT
    model: ModelConfig | None = None
    models: dict[RoleKey, ModelConfig] = Field(default_factory=dict)
    # The improvement loop (docs/loop.md): run the maintainer after this many accepted or rejected
    # leaves of a kind (kinds not named: 20; 0 never), and the platform-run validation worker.
    maintainer_every: dict[str, int] = Field(default_factory=dict)
    validation_worker: list[str] | None = None
    warm_pool: int = Field(default=WARM_POOL, ge=0, le=50)  # warm extract leaves the Planner keeps open (§9.1)
    # Operators the steward recruited personally: left out of the 12-month signal (docs/eval.md).
    recruited_by_steward: list[str] = Field(default_factory=list)
    # The controlled arm's worker commands (argument lists), by arm: "single" and "swarm".
    eval_arm: dict[Literal["single", "swarm"], list[str]] = Field(default_factory=dict)
    # How long a write waits for a project's lock held by another live process before it answers
    # busy (exit 9, HTTP 503 `busy`); the default and its reason: verifier.constants.LOCK_WAIT_S.
    lock_wait_s: float = Field(default=LOCK_WAIT_S, gt=0, le=3600)
    # The platform's admins (handles of people): they create projects, name and replace stewards,
    # repair, seal and wake, and read the audit log (docs/authority.md).
    admins: list[Handle] = Field(default_factory=list)
    # Where traces, the Commons and project branches live (docs/deploy.md); defaults: this folder.
    backends: Backends = Field(default_factory=Backends)


@dataclass(frozen=True)
class Anchor:
    seq: int
    row_hash: str
    commit: str


@dataclass(frozen=True)
class HomeLayout:
    """Where each file of the home lives (the tree in this module's docstring)."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def identities(self) -> Path:
        return self.root / "identities.json"

    @property
    def commons(self) -> Path:
        """The embedded Commons database, opened by the service, the outbox and the Planner."""
        return self.root / COMMONS_FILE

    @property
    def projects(self) -> Path:
        return self.root / "projects"

    @property
    def traces(self) -> Path:
        return self.root / "traces"

    @property
    def locks(self) -> Path:
        return self.root / "locks"

    def repo(self, slug: str) -> Path:
        return self.projects / f"{check_slug(slug)}.git"

    def anchor(self, slug: str) -> Path:
        return self.projects / f"{check_slug(slug)}.anchor.json"

    def next_anchor(self, slug: str) -> Path:
        return self.projects / f"{check_slug(slug)}.next.json"

    def lock(self, slug: str) -> Path:
        return self.locks / f"{check_slug(slug)}.lock"

    def publish_lock(self, slug: str) -> Path:
        return self.locks / f"{check_slug(slug)}.publish.lock"

    def text_cache(self, name: str) -> Path:
        return self.root / "cache" / "text" / name

    def commons_lock(self, slug: str) -> Path:
        return self.locks / f"{check_slug(slug)}.commons.lock"

    def named_lock(self, name: Literal["service", "ops-wiki", "skill", "maintainer", "skillgate"]) -> Path:
        return self.locks / f"{name}.lock"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def runs(self, slug: str) -> Path:
        return self.root / "runs" / check_slug(slug)

    @property
    def loop(self) -> Path:
        return self.root / "loop"

    @property
    def skill(self) -> Path:
        return self.root / "skill"

    @property
    def ops_wiki(self) -> Path:
        return self.root / "ops-wiki.git"

    @property
    def validation_set(self) -> Path:
        return self.root / "eval" / "validation.json"

    @property
    def site(self) -> Path:
        return self.root / "site"

    @property
    def audit(self) -> Path:
        """The folder of the audit log of denials (0700: it names who tried what)."""
        return self.root / "audit"

    @property
    def audit_log(self) -> Path:
        return self.audit / "denials.jsonl"

    @property
    def audit_log_previous(self) -> Path:
        """The log before the last roll-over: the log is at most two files of AUDIT_MAX_BYTES."""
        return self.audit / "denials.1.jsonl"


def _no_crash(_step: str) -> None:
    """Production's crash point (see pipeline.writer): nothing happens."""


CrashPoint = Callable[[str], None]


class LeaseGuard(Protocol):
    """Takes or renews this instance's lease on a project, under the writer's lock; raises
    RetryableError when another instance writes it (verifier.deploy.instances.hold_lease)."""

    def __call__(self, home: Home, slug: str, /) -> None: ...


class StagedPublisher(Protocol):
    """Returns once the project's git host has `target`, a landing staged under the writer's lock
    (verifier.deploy.publishing.publish)."""

    def __call__(self, home: Home, slug: str, target: str, /, *, crash_point: CrashPoint) -> None: ...


@dataclass(frozen=True)
class Deployment:
    """The seams the one writer calls beyond this machine, chosen by `verifier.wiring` from the
    settings. The embedded default has neither: the writer moves main and the anchor itself."""

    lease_guard: LeaseGuard | None = None
    publish_staged: StagedPublisher | None = None
    hosted: frozenset[str] = frozenset()  # the projects whose branch lives on a git host


class Home:
    """The verifier's home. Open it with `verifier.wiring.open_home`, which builds its identities,
    trace store and deployment from config.json; constructed directly it is the embedded home
    (files and SQLite on this machine) and refuses settings that name other backends.

    `crash_point` is handed to every writer of its projects: tests pass one that raises or kills at
    a named durable step; production passes nothing. `upkeep` is told of every publish and packs
    a repository's loose objects in the background past a threshold (verifier.store.upkeep)."""

    def __init__(self, root: Path, *, crash_point: CrashPoint = _no_crash, identities: Identities | None = None,
                 traces: TraceBackend | None = None, deployment: Deployment | None = None,
                 upkeep: Upkeep | None = None) -> None:
        self.root = root
        self.layout = HomeLayout(root)
        self.crash_point = crash_point
        self.tightened = tighten(root)  # what was found readable by others, now private again
        self.settings = self.read_settings(root)
        backends = self.settings.backends
        if identities is None and backends.commons.kind != "sqlite":
            raise FormatError(f"backends.commons.kind is {backends.commons.kind}, but this home was opened "
                              "without its identity registry: open it with verifier.wiring.open_home",
                              str(HomeLayout(root).config))
        if deployment is None and (backends.remotes or backends.instance is not None):
            raise FormatError("config.json names git hosts or instances, but this home was opened without its "
                              "deployment: open it with verifier.wiring.open_home", str(HomeLayout(root).config))
        self.identities: Identities = identities or FileIdentities(self.layout.identities)
        self.traces: TraceBackend = traces or trace_store(backends.traces, self.layout.traces,
                                                          durable=self.settings.durable)
        self.deployment = deployment or Deployment()
        self.upkeep = upkeep or Upkeep()  # packs what landings leave loose (verifier.store.upkeep)

    @staticmethod
    def root_from_env() -> Path:
        """RW_HOME, or ~/.researchwiki."""
        return Path(os.environ.get("RW_HOME", "~/.researchwiki")).expanduser()

    @staticmethod
    def read_settings(root: Path) -> Settings:
        """config.json of the home at `root` (the defaults when there is none)."""
        path = HomeLayout(root).config
        if not path.exists():
            return Settings()
        try:
            return Settings.model_validate(json.loads(path.read_bytes()))
        except ValidationError as exc:
            # Said without the input values: a credential written into the file by mistake must
            # not reach a terminal or a log through the error that refuses it.
            problems = "; ".join(f"{'.'.join(str(part) for part in error['loc']) or '(file)'}: {error['msg']}"
                                 for error in exc.errors(include_input=False, include_url=False))
            raise FormatError(f"bad settings: {problems}", str(path)) from None
        except ValueError as exc:
            raise FormatError(f"bad settings: {exc}", str(path)) from exc

    def save_settings(self, settings: Settings) -> None:
        write_atomic(self.layout.config, settings.model_dump_json(indent=2).encode(), mode=PRIVATE_FILE_MODE)
        self.settings = settings

    def model_config(self, role: Role) -> ModelConfig | None:
        """The model block that answers `role` (verifier/model/roles.py); None: none is configured."""
        return role_config(self.settings.models, self.settings.model, role)

    def repo_path(self, slug: str) -> Path:
        return self.layout.repo(slug)

    def project(self, slug: str) -> ProjectRepo:
        path = self.repo_path(slug)
        if not path.exists():
            raise NotFound(f"no project {slug!r} in {self.layout.projects}; if it lives on a verifier service, "
                           "set RW_SERVER=URL (or pass --server URL) and RW_TOKEN")
        return open_repo(path)

    def projects(self) -> list[str]:
        folder = self.layout.projects
        return sorted(path.name[:-4] for path in folder.glob("*.git")) if folder.exists() else []

    def lock_path(self, slug: str) -> Path:
        return self.layout.lock(slug)

    def anchor_path(self, slug: str) -> Path:
        return self.layout.anchor(slug)

    def read_anchor(self, slug: str) -> Anchor | None:
        path = self.anchor_path(slug)
        if not path.exists():
            return None
        data = json.loads(path.read_bytes())
        return Anchor(int(data["seq"]), str(data["row_hash"]), str(data["commit"]))

    def write_anchor(self, slug: str, anchor: Anchor) -> None:
        body = {"seq": anchor.seq, "row_hash": anchor.row_hash, "commit": anchor.commit}
        write_atomic(self.anchor_path(slug), json.dumps(body).encode(), durable=self.settings.durable)

    def publish_lock_path(self, slug: str) -> Path:
        return self.layout.publish_lock(slug)

    def next_anchor_path(self, slug: str) -> Path:
        return self.layout.next_anchor(slug)

    def read_next_anchor(self, slug: str) -> Anchor | None:
        """The anchor an unfinished publish was moving to (verifier.deploy.publishing)."""
        try:  # the lock-free history check reads it while a publisher may remove it
            data = json.loads(self.next_anchor_path(slug).read_bytes())
        except FileNotFoundError:
            return None
        return Anchor(int(data["seq"]), str(data["row_hash"]), str(data["commit"]))

    def write_next_anchor(self, slug: str, anchor: Anchor | None) -> None:
        """Record (or, with None, forget) the anchor a publish is moving to; written durably before
        the branch moves, so a writer killed between the two is caught up, not refused."""
        path = self.next_anchor_path(slug)
        if anchor is None:
            path.unlink(missing_ok=True)
            return
        body = {"seq": anchor.seq, "row_hash": anchor.row_hash, "commit": anchor.commit}
        write_atomic(path, json.dumps(body).encode(), durable=self.settings.durable)

    def source_text(self, blob_id: str, data: bytes, media_type: str) -> str:
        """The derived text of retained bytes, cached by blob id and extractor version."""
        # Imported here: the extractors load pypdf and BeautifulSoup (about 0.25 s), which every
        # process opening a home would pay (a push's hook among them) and few need.
        from verifier.text.extract import EXTRACTOR_VERSION, extract_text  # noqa: PLC0415

        version = hashlib.sha256(EXTRACTOR_VERSION.encode()).hexdigest()[:12]
        path = self.layout.text_cache(f"{blob_id}-{version}.txt")
        if path.exists():
            return path.read_text(encoding="utf-8")
        text = extract_text(data, media_type)
        write_atomic(path, text.encode("utf-8"), durable=False)
        return text
