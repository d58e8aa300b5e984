"""The leak test (design §3.5.1, §11, §13): every agent-visible payload of a project, searched for
every baseline that is still sealed.

What an agent (or a person, who must not be anchored either) can see, each under a name:

    tree:<path>               every file at the tip: what a clone checks out; the seal files
                              themselves excepted (they are the ciphertext, by design)
    history:<path>@<blob>     every other version of a file that was ever on the branch: a clone
                              holds the whole history, so a planted value that was later removed
                              or reverted is still handed out. Ledger segments and use-score
                              shards are skipped: rows never change (the chain is checked) and
                              the scores are numbers the verifier derived
    commit:<sha>              every commit message (each ledger commit repeats its row)
    ledger:<seq>              each ledger row as `rw ledger` prints it, with its description
                              unescaped: the error messages agents are told
    leaf:<leaf_id>            what `rw leaf show --json` hands an agent, for every leaf
    digest                    `rw digest`
    log:<name>                the files under $RW_HOME/logs/ (the Resolver's daily log)
    ui:<path>                 every page of the UI (`verifier.ui`, `rw serve` under `/` and
                              `rw ui build`) and the JSON view-model of each, as served
    commons:<table>:<n>       every row the Commons database stores for the project: messages
                              (bodies and data, with the digests they carry), claims, the
                              submission journal's verdicts (commons.payloads)
    <anything>                what the caller adds (`extra`). Commons task bodies are made from
                              the leaf files searched above.

Each sealed baseline is searched for in every spelling `verifier.seal.leaks` knows (plaintext,
canary, answer hash, ciphertext; raw, JSON-escaped, percent-encoded, hex, base64 at three
alignments, any case). Opening the seals needs the Resolver's private key, so the test runs on
the Resolver's side (`rw leaks`, and `rw resolve` before it opens a baseline).

One exclusion: when a still-sealed baseline's answer hash equals that of a baseline already
opened (two hypotheses got byte-identical answers), that hash is public already and is not
searched for; its plaintext, canary and ciphertext still are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pygit2

from verifier.commons.payloads import commons_payloads
from verifier.errors import FormatError
from verifier.formats.base import iso
from verifier.pipeline.digest import digest_of
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.payload import leaf_payload
from verifier.seal.leaks import Leak, find_leaks, labelled_needles
from verifier.seal.sealing import Baseline, SealedBaseline, SealError, baseline_context, unseal
from verifier.state.layout import LEDGER_DIR, SEAL_DIR, USE_SCORES, USE_SHARD_ROOT, is_seal_file
from verifier.state.project import ProjectView
from verifier.store.backends import commons_dsn
from verifier.store.gitrepo import GitTree, ProjectRepo
from verifier.store.home import Home
from verifier.ui.site import ui_payloads
from verifier.writes.baseline import seals_in

ANSWER = "answer_sha256"
# Derived or append-only: their history adds nothing a search of the tip would miss.
_HISTORY_SKIP = (LEDGER_DIR, USE_SHARD_ROOT, USE_SCORES)
_TREE = pygit2.enums.ObjectType.TREE


@dataclass(frozen=True)
class OpenedBaseline:
    hypothesis_id: str
    sealed: SealedBaseline
    baseline: Baseline


@dataclass(frozen=True)
class BaselineLeak:
    hypothesis_id: str
    leak: Leak

    def line(self) -> str:
        return f"LEAK {self.hypothesis_id}: {self.leak.secret} ({self.leak.encoding}) in {self.leak.where}"


@dataclass
class LeakReport:
    baselines: list[str] = field(default_factory=list)  # hypotheses whose sealed baseline was searched for
    payloads: int = 0
    leaks: list[BaselineLeak] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # seals that would not open

    @property
    def ok(self) -> bool:
        return not self.leaks and not self.problems

    def leaked(self) -> dict[str, list[Leak]]:
        out: dict[str, list[Leak]] = {}
        for item in self.leaks:
            out.setdefault(item.hypothesis_id, []).append(item.leak)
        return out


def _json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, default=str).encode("utf-8")


def _changed_blobs(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str,
                   out: dict[str, str]) -> None:
    """blob id -> path for files added or changed between two trees, descending only into
    subtrees whose ids differ (so the walk costs what changed, not the corpus size)."""
    before = {entry.name: entry for entry in old} if old is not None else {}
    for entry in new:
        path = f"{prefix}{entry.name}"
        previous = before.get(entry.name or "")
        if (previous is not None and previous.id == entry.id) or path in _HISTORY_SKIP:
            continue
        if entry.type == _TREE:
            older = repo[previous.id] if previous is not None and previous.type == _TREE else None
            subtree = repo[entry.id]
            assert isinstance(subtree, pygit2.Tree)
            _changed_blobs(repo, older if isinstance(older, pygit2.Tree) else None, subtree, f"{path}/", out)
        elif not is_seal_file(path):
            out.setdefault(str(entry.id), path)


def _history(repo: ProjectRepo, tip: str, at_tip: set[str]) -> dict[str, bytes]:
    payloads: dict[str, bytes] = {}
    blobs: dict[str, str] = {}
    for commit in repo.repo.walk(pygit2.Oid(hex=tip)):
        payloads[f"commit:{commit.id}"] = commit.message.encode("utf-8")
        parent = commit.parents[0].tree if commit.parents else None
        _changed_blobs(repo.repo, parent, commit.tree, "", blobs)
    for blob_id, path in sorted(blobs.items()):
        if blob_id not in at_tip:
            blob = repo.repo[blob_id]
            if isinstance(blob, pygit2.Blob):
                payloads[f"history:{path}@{blob_id[:12]}"] = blob.data
    return payloads


def _leaf_payloads(view: GitTree) -> dict[str, bytes]:
    payloads = {}
    for leaf_id in ProjectView(view).leaf_ids:
        try:
            payloads[f"leaf:{leaf_id}"] = _json(leaf_payload(view, leaf_id))
        except FormatError as exc:
            payloads[f"leaf:{leaf_id}"] = str(exc).encode("utf-8")  # what `rw leaf show` would print
    return payloads


def agent_visible_payloads(repo: ProjectRepo, slug: str, *, now: datetime, logs: Path | None = None,
                           extra: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """Every agent-visible payload of the project, by name (see the module docstring)."""
    tip = repo.tip()
    if tip is None:
        return dict(extra or {})
    view = repo.view(tip)
    payloads: dict[str, bytes] = {}
    at_tip: set[str] = set()
    for path in view.walk():
        blob_id = view.blob_id(path)
        if blob_id is not None:
            at_tip.add(blob_id)
        if not is_seal_file(path):
            payloads[f"tree:{path}"] = view.read(path) or b""
    payloads.update(_history(repo, tip, at_tip))
    for line, row in read_chain(view):
        rendered = f"#{row.seq} {iso(row.at)} {row.outcome} {row.action} {row.actor}: {row.description}"
        payloads[f"ledger:{row.seq}"] = line + rendered.encode("utf-8")
    payloads.update(_leaf_payloads(view))
    payloads["digest"] = _json(digest_of(view, slug, now))
    payloads.update(ui_payloads(repo, slug, now))
    if logs is not None and logs.is_dir():
        for log in sorted(logs.rglob("*")):
            if log.is_file():
                payloads[f"log:{log.relative_to(logs).as_posix()}"] = log.read_bytes()
    payloads.update(extra or {})
    return payloads


def public_answer_hashes(view: GitTree) -> set[str]:
    """Answer hashes already public: those of the baselines the Resolver opened and committed."""
    hashes = set()
    for name in view.list_dir(SEAL_DIR):
        if name.endswith(".json") and not name.endswith(".request.json"):
            try:
                value = json.loads(view.read(f"{SEAL_DIR}/{name}") or b"")
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("answer_sha256"), str):
                hashes.add(value["answer_sha256"])
    return hashes


def search(payloads: Mapping[str, bytes], opened: Iterable[OpenedBaseline],
           public_hashes: set[str] | frozenset[str] = frozenset()) -> list[BaselineLeak]:
    """Every spelling of every opened baseline found in the payloads. Pure."""
    found = []
    for item in opened:
        public = item.baseline.answer_sha256 in public_hashes
        needles = [n for n in labelled_needles(item.sealed, item.baseline) if not (public and n.secret == ANSWER)]
        found += [BaselineLeak(item.hypothesis_id, leak) for leak in find_leaks(payloads, needles)]
    return sorted(found, key=lambda b: (b.hypothesis_id, b.leak))


def open_seals(view: GitTree, slug: str, private_key: bytes) -> tuple[list[OpenedBaseline], list[str]]:
    """Open every seal in the tree; (opened baselines, problems with seals that would not open)."""
    opened, problems = [], []
    for state in seals_in(view):
        try:
            baseline = unseal(private_key, state.sealed, context=baseline_context(slug, state.hypothesis_id))
        except SealError as exc:
            problems.append(f"{state.path}: {exc}")
            continue
        opened.append(OpenedBaseline(state.hypothesis_id, state.sealed, baseline))
    return opened, problems


def leak_test(home: Home, slug: str, *, now: datetime, private_key: bytes,
              extra: Mapping[str, bytes] | None = None) -> LeakReport:
    """Search every agent-visible payload of the project for every baseline still sealed."""
    repo = home.project(slug)
    view = repo.view(repo.tip())
    opened, problems = open_seals(view, slug, private_key)
    report = LeakReport(baselines=sorted(o.hypothesis_id for o in opened), problems=problems)
    if not opened:
        return report
    postgres = None
    if home.settings.backends.commons.kind == "postgres":
        from verifier.commons.pgdb import shared_database  # noqa: PLC0415 - psycopg only when used

        postgres = shared_database(commons_dsn(home.settings.backends.commons))
    stored = commons_payloads(home.root, slug, postgres=postgres)  # issue 10: what Commons stores is agent-visible
    payloads = agent_visible_payloads(repo, slug, now=now, logs=home.layout.logs, extra={**stored, **(extra or {})})
    report.payloads = len(payloads)
    report.leaks = search(payloads, opened, public_answer_hashes(view))
    return report
