"""Reading what a Planner wake decides from: one tree view in, `planning.ProjectState` out.

It reads PROJECT.md, the hypotheses in their file order, sources, findings (by path only: a
finding's id is in its name), links, notes, reviews, failed sources (for the Field Guide's
research lessons, roles.lessons), leaf contracts and their results, plans
(held ones in queue/plans/ and approved ones waiting for their leaves) and the ledger, each with
its strict format model. It reads one tree and nothing else; Commons' answer to "was the
steward already asked" comes in as `asked`.

A held plan's leaves are its front matter's `waiting` contracts, and they count (reserved while
held, released once approved) only when the Planner's own `plan` ledger row for that plan names
their sha256 (`waiting_digest`): the ledger is written by the verifier alone, so no text in a
plan, nor a plan someone else wrote, can add, change or drop a leaf a person approves.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from verifier.checks.hypotheses import not_ready_why, ready_for_plan
from verifier.errors import FormatError
from verifier.formats.document import parse_plan
from verifier.formats.leaf import LeafContract
from verifier.formats.ledger import LedgerRow
from verifier.formats.project import ProjectFile
from verifier.pipeline.ledger import read_chain
from verifier.roles.budget import budget_room, loop_spend
from verifier.roles.lessons import FailedSource, Lesson, SkepticNote, research_lessons
from verifier.roles.planning import (
    PLANNER,
    HypothesisFacts,
    OpenLeaf,
    ProjectState,
    Settings,
    SourceFacts,
    cadence,
    leaf_keys,
)
from verifier.state.layout import (
    FIELD_GUIDE,
    PLANNER_SCORES,
    PLANS_DIR,
    PLANS_QUEUE,
    finding_path,
    link_path,
    plan_path,
    queue_path,
)
from verifier.state.project import ProjectView, current_hypothesis
from verifier.store.gitrepo import GitTree

WAITING_MARK = "waiting leaves sha256 "  # in a held plan's ledger row, before the digest of its leaves
_HELD_ROW = re.compile(r"^plan ([a-z0-9][a-z0-9-]{2,63}): .*; held for a person's approval \(" + WAITING_MARK
                       + r"([0-9a-f]{64})\)$")


@dataclass
class _Leaves:
    open: list[OpenLeaf] = field(default_factory=list)
    contracts: dict[str, LeafContract] = field(default_factory=dict)
    outcome: dict[str, str] = field(default_factory=dict)  # leaf id -> accepted | held

    def live(self, leaf_id: str) -> bool:
        """Open now, or landed: either way its inputs were given out."""
        return leaf_id in self.outcome or leaf_id in self.open_ids

    @property
    def open_ids(self) -> set[str]:
        if self._open_ids is None:
            self._open_ids = {leaf.leaf_id for leaf in self.open}
        return self._open_ids

    _open_ids: set[str] | None = None


@dataclass
class _Graph:
    linked: set[tuple[str, str]] = field(default_factory=set)  # (hypothesis, finding)
    challenged: set[tuple[str, int]] = field(default_factory=set)  # (hypothesis, revision)
    has_links: set[str] = field(default_factory=set)
    link_paths: list[str] = field(default_factory=list)
    scout_requests: list[tuple[str | None, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Read:
    state: ProjectState
    project: ProjectFile
    last_wake: datetime | None
    open_leaves: dict[str, LeafContract]  # open leaves (re-posted to Commons on every wake)


def _leaves(state: ProjectView, now: datetime, claimed: frozenset[str]) -> _Leaves:
    """Every contract; open ones hold their keys. A claimed warm leaf has been taken: it still
    holds its source, but no longer counts in the warm pool."""
    found = _Leaves()
    for leaf_id, leaf in state.leaves.items():
        contract = leaf.contract
        found.contracts[leaf_id] = contract
        if leaf.result is not None:
            found.outcome[leaf_id] = leaf.result.outcome
        elif now < contract.expires_at:
            warm = bool(contract.warm) and leaf_id not in claimed
            found.open.append(OpenLeaf(leaf_id, contract.kind, leaf_keys(contract), warm))
    return found


def _graph(state: ProjectView) -> _Graph:
    graph = _Graph()
    for link_id, link in state.links.items():
        graph.link_paths.append(link_path(link_id))
        graph.linked.add((link.hypothesis_id, link.finding_id))
        graph.has_links.add(link.hypothesis_id)
        if link.stance == "contradicts":
            graph.challenged.add((link.hypothesis_id, link.hypothesis_revision))
    for note in state.notes.values():
        graph.challenged.add((note.hypothesis_id, note.hypothesis_revision))
        graph.scout_requests += [(note.hypothesis_id, request.gap) for request in note.scout_requests]
    return graph


def _reviewed(state: ProjectView) -> set[str]:
    return {review.object_path for review in state.reviews.values()}


def waiting_digest(contracts: list[LeafContract]) -> str:
    """The sha256 of a held plan's leaf contracts, as canonical JSON of the parsed contracts."""
    value = [c.model_dump(mode="json", exclude_none=True) for c in contracts]
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode()).hexdigest()


def _held_leaves(data: bytes, path: str, held: dict[str, set[str]]) -> list[LeafContract]:
    """The leaf contracts a held plan carries (front matter `waiting`), if the Planner's ledger
    row for the plan names exactly them; none otherwise."""
    plan, _body = parse_plan(data, path)
    if not plan.waiting or f"{plan.plan_id}.md" != path.rsplit("/", 1)[1]:
        return []
    if waiting_digest(plan.waiting) not in held.get(plan.plan_id, set()):
        return []  # not the leaves the Planner held (someone else's plan, or edited since)
    return plan.waiting


def _plans(view: GitTree, existing: dict[str, LeafContract],
           held: dict[str, set[str]]) -> tuple[list[OpenLeaf], list[LeafContract]]:
    """Leaves waiting in held plans (their keys are reserved) and leaves of approved plans that
    are not written yet (released on this wake)."""
    reserved: list[OpenLeaf] = []
    released: list[LeafContract] = []
    for name in sorted(view.list_dir(PLANS_QUEUE)):
        path = f"{PLANS_QUEUE}/{name}"
        try:
            reserved += [OpenLeaf(c.leaf_id, c.kind, leaf_keys(c), bool(c.warm))
                         for c in _held_leaves(view.read(path) or b"", path, held)]
        except (FormatError, ValueError):
            continue
    for name in sorted(view.list_dir(PLANS_DIR)):
        path = f"{PLANS_DIR}/{name}"
        try:
            released += [c for c in _held_leaves(view.read(path) or b"", path, held) if c.leaf_id not in existing]
        except (FormatError, ValueError):
            continue  # a plan that was never held has no `waiting`: its leaves were written when it landed
    return reserved, released


def _sources(state: ProjectView, leaves: _Leaves, failures: dict[str, int]) -> list[SourceFacts]:
    extracted = {c.inputs.source_id for leaf_id, c in leaves.contracts.items()
                 if c.kind == "extract" and leaves.outcome.get(leaf_id) == "accepted"}
    sources = []
    for record in state.sources.values():
        sources.append(SourceFacts(record.source_id, record.status, record.size, bool(record.warm),
                                   record.source_id in extracted, failures.get(record.source_id, 0)))
    return sources


@dataclass(frozen=True)
class _LedgerFacts:
    failures: dict[str, int]  # source id -> rejected extract attempts
    rejections: dict[tuple[str, str], int]  # (kind, reason) -> rejections since the last accepted guide leaf
    last_wake: datetime | None
    held: dict[str, set[str]]  # plan id -> waiting_digest of the leaves its held landing carried
    rows: list[LedgerRow]  # the chain, for the loop's spending (roles.budget)


def _ledger(view: GitTree, contracts: dict[str, LeafContract]) -> _LedgerFacts:
    """Rejected extract attempts per source, rejections per (kind, reason) since the last accepted
    guide leaf, when the Planner last woke, and which leaves each held plan carried."""
    failures: dict[str, int] = {}
    rejections: dict[tuple[str, str], int] = {}
    held: dict[str, set[str]] = {}
    last_wake = None
    rows: list[LedgerRow] = []
    for _line, row in read_chain(view):
        rows.append(row)
        if row.action == "plan":
            last_wake = row.at
            found = _HELD_ROW.match(row.description) if row.outcome == "held" and row.actor == PLANNER else None
            if found is not None:
                held.setdefault(found.group(1), set()).add(found.group(2))
        if row.action != "submit":
            continue
        if row.kind == "guide" and row.outcome == "accepted":
            rejections.clear()
        if row.outcome != "rejected" or row.kind is None:
            continue
        reason = (row.kind, row.reason_code or "rejected")
        rejections[reason] = rejections.get(reason, 0) + 1
        contract = contracts.get(row.leaf_id or "")
        if row.kind == "extract" and contract is not None and contract.inputs.source_id:
            failures[contract.inputs.source_id] = failures.get(contract.inputs.source_id, 0) + 1
    return _LedgerFacts(failures, rejections, last_wake, held, rows)


def _hypotheses(view: GitTree, project: ProjectFile, graph: _Graph, now: datetime) -> list[HypothesisFacts]:
    """Each hypothesis of PROJECT.md; `ready` is the one activation rule (checks.hypotheses)."""
    facts = []
    for hypothesis_id in project.hypotheses:
        hypothesis = current_hypothesis(view, hypothesis_id)
        if hypothesis is None:
            continue
        ready = ready_for_plan(hypothesis, now.date())
        facts.append(HypothesisFacts(hypothesis_id, hypothesis.revision, hypothesis.status, ready,
                                     (hypothesis_id, hypothesis.revision) in graph.challenged,
                                     "" if ready else not_ready_why(hypothesis, now.date())))
    return facts


def finding_ids(view: GitTree) -> list[str]:
    """Accepted findings, by id (from their paths: nothing to parse)."""
    return list(ProjectView(view).finding_ids)


def _filing(findings: list[str], hypotheses: list[HypothesisFacts], leaves: _Leaves, graph: _Graph,
            cap: int) -> dict[str, list[str]]:
    """Accepted findings not yet filed against each ready hypothesis: no link joins them and no
    link leaf (open, or one that landed) was given them. At most `cap` per hypothesis: more than
    one wake can use is not worth listing."""
    given: set[tuple[str, str]] = set()
    for leaf_id, contract in leaves.contracts.items():
        if contract.kind == "link" and leaves.live(leaf_id):
            given.update((contract.inputs.hypothesis_id or "", f) for f in contract.inputs.finding_ids)
    unfiled: dict[str, list[str]] = {}
    for hypothesis in hypotheses:
        if not hypothesis.ready or hypothesis.status == "resolved":
            continue
        hid, free = hypothesis.hypothesis_id, []
        for finding in findings:
            if (hid, finding) not in graph.linked and (hid, finding) not in given:
                free.append(finding)
                if len(free) >= cap:
                    break
        unfiled[hid] = free
    return unfiled


def _unreviewed(state: ProjectView, leaves: _Leaves, graph: _Graph, cap: int) -> list[str]:
    reviewed = _reviewed(state)
    under_review = {c.inputs.object_path for leaf_id, c in leaves.contracts.items()
                    if c.kind == "review" and leaves.live(leaf_id)}
    out: list[str] = []
    for path in [*(finding_path(f) for f in state.finding_ids), *graph.link_paths]:
        if path not in reviewed and path not in under_review:
            out.append(path)
            if len(out) >= cap:
                break
    return out


def _gaps(view: GitTree, hypotheses: list[HypothesisFacts], sources: list[SourceFacts],
          graph: _Graph) -> list[tuple[str | None, str]]:
    """Scout requests from skeptic notes; and, once every included source has been extracted, a
    gap for each ready hypothesis with no evidence at all."""
    gaps = list(graph.scout_requests)
    if all(s.extracted or s.status != "included" for s in sources):
        for hypothesis in hypotheses:
            if hypothesis.ready and hypothesis.hypothesis_id not in graph.has_links:
                found = current_hypothesis(view, hypothesis.hypothesis_id)
                statement = found.statement if found is not None else hypothesis.hypothesis_id
                gaps.append((hypothesis.hypothesis_id, f"sources bearing on {hypothesis.hypothesis_id}: "
                                                       f"{statement[:300]}"))
    return gaps


def _lessons(state: ProjectView) -> list[Lesson]:
    """The research lessons in the project's history: its failed sources and its skeptic notes."""
    failed = [FailedSource(record.source_id, record.url, record.failure or "")
              for record in state.sources.values() if record.status == "failed"]
    notes = [SkepticNote(note.hypothesis_id, request.gap, request.why)
             for note in state.notes.values() for request in note.scout_requests if request.why]
    return research_lessons(failed, notes)


def _unresolved_count(view: GitTree) -> int:
    data = view.read(PLANNER_SCORES)
    try:
        return int(json.loads(data).get("unresolved_count", 0)) if data else 0
    except (ValueError, AttributeError):
        return 0


def read_state(view: GitTree, slug: str, tip: str, now: datetime, *, settings: Settings,
               asked: Callable[[str, int], bool], claimed: frozenset[str] = frozenset()) -> Read:
    """The state a wake decides from. `asked(H, revision)` says whether Commons already holds the
    steward's question about that hypothesis revision."""
    read = ProjectView(view, tip)
    project = read.project
    leaves = _leaves(read, now, claimed)
    ledger = _ledger(view, leaves.contracts)
    failures, rejections, last_wake = ledger.failures, ledger.rejections, ledger.last_wake
    reserved, released = _plans(view, leaves.contracts, ledger.held)
    graph = _graph(read)
    hypotheses = _hypotheses(view, project, graph, now)
    sources = _sources(read, leaves, failures)
    cap = project.budget_per_loop.leaves_max * settings.link_batch
    findings = list(read.finding_ids)
    budget = budget_room(project.budget_per_loop, loop_spend(ledger.rows, now, cadence(project.loop_cadence)),
                         project.loop_cadence)
    state = ProjectState(
        slug=slug, tip=tip, steward=project.steward, hold_plans="plans" in project.holds,
        leaves_max=project.budget_per_loop.leaves_max, hypotheses=hypotheses, sources=sources,
        open_leaves=leaves.open + reserved, unfiled=_filing(findings, hypotheses, leaves, graph, cap),
        unreviewed=_unreviewed(read, leaves, graph, project.budget_per_loop.leaves_max),
        gaps=_gaps(view, hypotheses, sources, graph), rejections=rejections, lessons=_lessons(read),
        findings=len(findings),
        field_guide=(view.read(FIELD_GUIDE) or b"").decode("utf-8", "replace"),
        asked=frozenset(f"{h.hypothesis_id}:{h.revision}" for h in hypotheses
                        if not h.ready and asked(h.hypothesis_id, h.revision)),
        released=released, settings=settings, unresolved_count=_unresolved_count(view),
        cost_room=budget.room, budget_note=budget.note,
    )
    return Read(state, project, last_wake, {i: c for i, c in leaves.contracts.items() if i in leaves.open_ids})


def held_plan_path(plan_id: str) -> str:
    return queue_path(PLANS_DIR, plan_path(plan_id))
