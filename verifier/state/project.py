"""One project at one revision, read once and typed: the read model every room reads a project
through (issue 20), instead of walking `leaves/` or joining paths by hand.

`ProjectView` is frozen and lazy. Each part is read the first time it is asked for and kept:
asking for one leaf reads one contract, asking for one finding reads one file, and only the
mappings over a whole folder (`findings`, `links`, ...) walk it. So a submission that touches
one leaf of a project with 10,000 findings parses that leaf, not the corpus.

What a part does with a file that does not parse is said where it is read: one object asked for
by id raises the FormatError (the caller named it, and must hear why it cannot have it); the
mappings over a folder leave an unreadable file out (a corrupt finding is no evidence, and the
audits that must see it, replay and `rw check`, read the tree themselves).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Literal, Protocol, TypeVar, runtime_checkable

from verifier.errors import FormatError
from verifier.formats.document import Plan, Report, parse_plan, parse_report
from verifier.formats.finding import Finding, parse_finding
from verifier.formats.hypothesis import Hypothesis, parse_hypothesis
from verifier.formats.leaf import LeafContract, LeafResult, parse_leaf_result
from verifier.formats.ledger import ROWS_PER_SEGMENT, LedgerRow, parse_row
from verifier.formats.link import CounterEvidenceNote, Link, parse_link, parse_note
from verifier.formats.project import ProjectFile, parse_project
from verifier.formats.review import Review, parse_review
from verifier.formats.source import SourceRecord, parse_source
from verifier.formats.usescores import UseEntry, UseSummary, parse_shard
from verifier.state.contracts import contract_in
from verifier.state.layout import (
    FINDINGS_DIR,
    HYPOTHESES_DIR,
    LEAVES_DIR,
    LEDGER_DIR,
    LINKS_DIR,
    NOTES_DIR,
    PROJECT_FILE,
    QUEUE_DIR,
    REPORTS_DIR,
    REVIEWS_DIR,
    SOURCES_DIR,
    USE_SCORES,
    classify,
    finding_path,
    hypothesis_path,
    leaf_id_of,
    leaf_result_path,
    link_path,
    plan_path,
    queue_path,
    source_record_path,
    use_shard_path,
)
from verifier.state.view import TreeView

LeafStatus = Literal["open", "expired", "accepted", "held", "rejected", "crash"]
T = TypeVar("T")


@runtime_checkable
class WalkableTree(TreeView, Protocol):
    """A tree view that lists every file below a folder in one call (the git tree does)."""

    def walk(self, prefix: str = "") -> Iterator[str]: ...


def walk(tree: TreeView, prefix: str) -> Iterator[str]:
    """Every file path below `prefix`: the tree's own walk when it has one, else folder by folder."""
    if isinstance(tree, WalkableTree):
        yield from tree.walk(prefix)
        return
    stack = [prefix.rstrip("/")]
    while stack:
        folder = stack.pop()
        for name in tree.list_dir(folder):
            path = f"{folder}/{name}" if folder else name
            if tree.is_dir(path):
                stack.append(path)
            else:
                yield path


@dataclass(frozen=True)
class Leaf:
    """A leaf's contract and, once a submission of it landed, its result."""

    contract: LeafContract
    result: LeafResult | None

    @property
    def leaf_id(self) -> str:
        return self.contract.leaf_id

    def status(self, now: datetime) -> LeafStatus:
        """How the leaf stands at `now`: the landing's outcome, else open until it expires."""
        if self.result is not None:
            return self.result.outcome
        return "open" if now < self.contract.expires_at else "expired"

    def is_open(self, now: datetime) -> bool:
        return self.status(now) == "open"


@dataclass(frozen=True)
class HeldObject:
    """One object waiting in queue/<hold>/ (a source's record and bytes together)."""

    hold: str
    object_id: str
    type: str
    paths: tuple[str, ...]  # corpus paths (without the queue prefix)
    leaf_id: str | None


def current_hypothesis(tree: TreeView, hypothesis_id: str) -> Hypothesis | None:
    """The hypothesis as its file says now, or None when there is none or it does not parse."""
    try:
        return ProjectView(tree).hypothesis(hypothesis_id)
    except FormatError:
        return None


@dataclass(frozen=True)
class ProjectView:
    """The project in `tree` (at `revision`, when the caller knows it)."""

    tree: TreeView
    revision: str | None = None

    def read(self, path: str) -> bytes | None:
        return self.tree.read(path)

    # -- PROJECT.md ----------------------------------------------------------------------------
    @cached_property
    def _project(self) -> tuple[ProjectFile, str]:
        return parse_project(self.tree.read(PROJECT_FILE) or b"", PROJECT_FILE)

    @property
    def project(self) -> ProjectFile:
        """PROJECT.md's front matter (raises FormatError when it does not parse)."""
        return self._project[0]

    @property
    def project_body(self) -> str:
        return self._project[1]

    # -- leaves ----------------------------------------------------------------------------------
    @cached_property
    def leaf_ids(self) -> tuple[str, ...]:
        """Every leaf with a contract file, by id."""
        return tuple(leaf_id for name in self.tree.list_dir(LEAVES_DIR) if (leaf_id := leaf_id_of(name)))

    @cached_property
    def _contracts(self) -> dict[str, LeafContract | FormatError | None]:
        return {}

    @cached_property
    def _results(self) -> dict[str, LeafResult | None]:
        return {}

    def contract(self, leaf_id: str) -> LeafContract | None:
        """The leaf's contract, or None when there is none; raises FormatError when it does not parse."""
        if leaf_id not in self._contracts:
            try:
                self._contracts[leaf_id] = contract_in(self.tree, leaf_id)  # parsed once per blob, process-wide
            except FormatError as exc:
                self._contracts[leaf_id] = exc
        found = self._contracts[leaf_id]
        if isinstance(found, FormatError):
            raise found
        return found

    def result(self, leaf_id: str) -> LeafResult | None:
        """How the leaf closed (leaves/<id>.result.json), or None while no submission landed."""
        if leaf_id not in self._results:
            data = self.tree.read(leaf_result_path(leaf_id))
            self._results[leaf_id] = None if data is None else parse_leaf_result(data, leaf_result_path(leaf_id))
        return self._results[leaf_id]

    def is_closed(self, leaf_id: str) -> bool:
        """A submission of the leaf landed (its result file exists), read without parsing it."""
        return self.tree.blob_id(leaf_result_path(leaf_id)) is not None

    def leaf(self, leaf_id: str) -> Leaf | None:
        contract = self.contract(leaf_id)
        return None if contract is None else Leaf(contract, self.result(leaf_id))

    @cached_property
    def leaves(self) -> Mapping[str, Leaf]:
        """Every leaf whose contract parses, by id (an unreadable contract is no leaf to take).
        An unreadable result raises: only the verifier writes results, so one that does not
        parse is a damaged history (`rw replay` says where), not a leaf to leave out."""
        found: dict[str, Leaf] = {}
        for leaf_id in self.leaf_ids:
            try:
                contract = self.contract(leaf_id)
            except FormatError:
                continue
            if contract is not None:
                found[leaf_id] = Leaf(contract, self.result(leaf_id))
        return found

    def open_leaves(self, now: datetime) -> list[Leaf]:
        """The leaves an agent may still submit to at `now`, by id. A closed leaf's contract is
        never parsed for this: its result file alone rules it out."""
        found = []
        for leaf_id in self.leaf_ids:
            if self.is_closed(leaf_id):
                continue
            try:
                contract = self.contract(leaf_id)
            except FormatError:
                continue
            if contract is not None and now < contract.expires_at:
                found.append(Leaf(contract, None))
        return found

    # -- the corpus ------------------------------------------------------------------------------
    def _one(self, path: str, parse: Callable[[bytes, str], T]) -> T | None:
        data = self.tree.read(path)
        return None if data is None else parse(data, path)

    def _all(self, prefix: str, parse: Callable[[bytes, str], T], suffix: str = ".yaml") -> dict[str, T]:
        found: dict[str, T] = {}
        for path in sorted(walk(self.tree, prefix)):
            kind = classify(path)
            if kind is None or not path.endswith(suffix):
                continue
            try:
                found[kind.object_id] = parse(self.tree.read(path) or b"", path)
            except FormatError:
                continue
        return found

    @cached_property
    def hypothesis_ids(self) -> tuple[str, ...]:
        """Every hypothesis file's id, from the names alone (nothing parsed), in name order."""
        return tuple(name[:-3] for name in self.tree.list_dir(HYPOTHESES_DIR) if name.endswith(".md"))

    def hypothesis(self, hypothesis_id: str) -> Hypothesis | None:
        return self._one(hypothesis_path(hypothesis_id), _hypothesis)

    @cached_property
    def hypotheses(self) -> Mapping[str, Hypothesis]:
        """Every hypothesis file that parses, by id."""
        return self._all(HYPOTHESES_DIR, _hypothesis, ".md")

    def source(self, source_id: str) -> SourceRecord | None:
        return self._one(source_record_path(source_id), parse_source)

    @cached_property
    def sources(self) -> Mapping[str, SourceRecord]:
        return self._all(SOURCES_DIR, parse_source)

    def finding(self, finding_id: str) -> Finding | None:
        return self._one(finding_path(finding_id), parse_finding)

    @cached_property
    def findings(self) -> Mapping[str, Finding]:
        return self._all(FINDINGS_DIR, parse_finding)

    @cached_property
    def finding_ids(self) -> tuple[str, ...]:
        """Every finding's id, from the paths alone (nothing parsed), in id order."""
        return tuple(sorted(kind.object_id for path in walk(self.tree, FINDINGS_DIR)
                            if (kind := classify(path)) is not None and kind.type == "finding"))

    def link(self, link_id: str) -> Link | None:
        return self._one(link_path(link_id), parse_link)

    @cached_property
    def links(self) -> Mapping[str, Link]:
        return self._all(LINKS_DIR, parse_link)

    def plan(self, plan_id: str) -> tuple[Plan, str] | None:
        """A landed plan's front matter and body (a held one waits in the queue: not here)."""
        return self._one(plan_path(plan_id), parse_plan)

    @cached_property
    def source_ids(self) -> tuple[str, ...]:
        """Every source record's id, from the paths alone (nothing parsed), in id order."""
        return tuple(sorted(kind.object_id for path in walk(self.tree, SOURCES_DIR)
                            if (kind := classify(path)) is not None and kind.type == "source"))

    @cached_property
    def reports(self) -> Mapping[str, tuple[Report, str]]:
        """Every report that parses, by id: its front matter and its body."""
        return self._all(REPORTS_DIR, parse_report, ".md")

    @cached_property
    def reviews(self) -> Mapping[str, Review]:
        return self._all(REVIEWS_DIR, parse_review)

    @cached_property
    def notes(self) -> Mapping[str, CounterEvidenceNote]:
        """The counter-evidence notes (notes/<leaf>.yaml), by leaf id."""
        return self._all(NOTES_DIR, parse_note)

    # -- the queue -------------------------------------------------------------------------------
    @cached_property
    def held(self) -> tuple[HeldObject, ...]:
        """Everything waiting in the queue, one entry per object, by hold then id."""
        types: dict[tuple[str, str], str] = {}
        paths: dict[tuple[str, str], list[str]] = {}
        for queued in sorted(walk(self.tree, QUEUE_DIR)):
            _, hold, corpus_path = queued.split("/", 2)
            kind = classify(corpus_path)
            if kind is None:
                continue
            key = (hold, kind.object_id)
            types[key] = "source" if kind.type == "source-bytes" else kind.type
            paths.setdefault(key, []).append(corpus_path)
        return tuple(HeldObject(hold, object_id, types[(hold, object_id)], tuple(found),
                                self._leaf_of(hold, tuple(found)))
                     for (hold, object_id), found in sorted(paths.items()))

    def _leaf_of(self, hold: str, paths: tuple[str, ...]) -> str | None:
        """The leaf named by the held object's own record, read with its strict model."""
        for path in paths:
            kind = classify(path)
            data = self.tree.read(queue_path(hold, path))
            if kind is None or data is None:
                continue
            try:
                if kind.type == "source":
                    return parse_source(data, path).leaf_id
                if kind.type == "link":
                    return parse_link(data, path).leaf_id
            except FormatError:
                return None
        return None

    # -- scores ----------------------------------------------------------------------------------
    @cached_property
    def use(self) -> UseSummary:
        """scores/use.json (the empty summary before anything was scored)."""
        return UseSummary.parse(self.tree.read(USE_SCORES), USE_SCORES)

    @cached_property
    def _shards(self) -> dict[str, dict[str, UseEntry]]:
        return {}

    def use_entry(self, object_id: str) -> UseEntry | None:
        """The object's use-score entry, reading only its shard."""
        path = use_shard_path(object_id)
        if path not in self._shards:
            data = self.tree.read(path)
            self._shards[path] = parse_shard(data, path) if data else {}
        return self._shards[path].get(object_id)

    # -- the ledger ------------------------------------------------------------------------------
    def rows_from(self, start: int, limit: int | None = None) -> list[LedgerRow]:
        """Ledger rows with seq >= start (at most `limit`), parsing only those: the rest of a
        segment, and the segments before it, are skipped. The chain is not checked here
        (verifier.pipeline.ledger does that for a writer)."""
        rows: list[LedgerRow] = []
        first = start // ROWS_PER_SEGMENT
        for name in sorted(self.tree.list_dir(LEDGER_DIR)):
            if not name.endswith(".jsonl") or not name[:-6].isdigit() or int(name[:-6]) < first:
                continue
            path = f"{LEDGER_DIR}/{name}"
            lines = (self.tree.read(path) or b"").split(b"\n")[:-1]
            skip = max(0, start - int(name[:-6]) * ROWS_PER_SEGMENT)
            for line in lines[skip:]:
                if limit is not None and len(rows) >= limit:
                    return rows
                row = parse_row(line, path)
                if row.seq >= start:
                    rows.append(row)
        return rows


def _hypothesis(data: bytes, where: str) -> Hypothesis:
    return parse_hypothesis(data, where)[0]


def rows_from(view: TreeView, start: int, limit: int | None = None) -> list[LedgerRow]:
    """`ProjectView.rows_from` of a tree read for nothing else (the Commons notifier, the service)."""
    return ProjectView(view).rows_from(start, limit)
