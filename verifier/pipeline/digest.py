"""The digest (design §9.3): newest reports, hypothesis moves, open gaps and open leaves, as one
JSON-ready value. Reading is open, so nothing sealed or private is ever put in it: no baseline,
no trace ids, no trace contents. Which active hypotheses have no sealed baseline yet, and the
recorded reason, is public (`unsealed`): it says nothing of what a baseline would answer."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from verifier.formats.base import iso
from verifier.formats.ledger import LedgerRow
from verifier.pipeline.ledger import read_chain
from verifier.seal.status import unsealed
from verifier.state.project import ProjectView, current_hypothesis
from verifier.state.view import TreeView
from verifier.store.home import Home

NEWEST = 5
RECENT_ROWS = 200


class ReportCard(TypedDict):
    report_id: str
    title: str
    created_at: str
    introduced: int
    use: float


class Stances(TypedDict):
    supports: int
    contradicts: int
    context: int


class VerdictBrief(TypedDict):
    value: str
    confidence: float


class HypothesisCard(TypedDict):
    hypothesis_id: str
    revision: int
    status: str
    statement: str
    check_date: str | None
    verdict: VerdictBrief
    links: Stances
    evidence_health: float
    links_rejected_by_review: int
    linked_to_earlier_wording: int


class Move(TypedDict):
    seq: int
    at: str
    action: str
    kind: str | None
    actor: str
    description: str


class OpenLeaf(TypedDict):
    leaf_id: str
    kind: str
    title: str | None
    expires_at: str


class Corpus(TypedDict):
    findings: int
    sources: int


class UnsealedCard(TypedDict):
    """An active hypothesis with no current sealed baseline, and the latest recorded reason."""

    hypothesis_id: str
    missing: str
    why: str


class Digest(TypedDict):
    """`rw digest SLUG --json`: what changed and what is open (docs/format.md)."""

    project: str
    question: str
    at: str
    reports: list[ReportCard]
    hypotheses: list[HypothesisCard]
    moves: list[Move]
    open_gaps: list[str]
    open_leaves: list[OpenLeaf]
    corpus: Corpus
    unsealed: list[UnsealedCard]  # seal.status: "not sealed: why", until a path that can seal does


def _reports(state: ProjectView) -> list[ReportCard]:
    reports: list[ReportCard] = []
    for report, _body in state.reports.values():
        reports.append({"report_id": report.report_id, "title": report.title, "created_at": iso(report.created_at),
                        "introduced": len(report.introduced), "use": state.use.reports.get(report.report_id, 0.0)})
    return sorted(reports, key=lambda r: (r["created_at"], r["report_id"]), reverse=True)[:NEWEST]


def _hypotheses(state: ProjectView, order: list[str]) -> tuple[list[HypothesisCard], list[str]]:
    stances: dict[str, Stances] = {}
    revisions: dict[str, list[int]] = {}
    rejected: dict[str, int] = {}
    for link in state.links.values():
        counts = stances.setdefault(link.hypothesis_id, {"supports": 0, "contradicts": 0, "context": 0})
        if any((entry := state.use_entry(object_id)) is not None and entry.rejected_by
               for object_id in (link.link_id, link.finding_id)):
            # Withdrawn by a review (of the link, or of its finding): not evidence, as at resolution.
            rejected[link.hypothesis_id] = rejected.get(link.hypothesis_id, 0) + 1
            continue
        counts[link.stance] += 1
        revisions.setdefault(link.hypothesis_id, []).append(link.hypothesis_revision)
    ids = list(order) + sorted(set(state.hypothesis_ids) - set(order))
    cards: list[HypothesisCard] = []
    gaps: list[str] = []
    for hypothesis_id in ids:
        hypothesis = current_hypothesis(state.tree, hypothesis_id)
        if hypothesis is None:
            continue
        found: Stances = stances.get(hypothesis_id, {"supports": 0, "contradicts": 0, "context": 0})
        cards.append({
            "hypothesis_id": hypothesis_id, "revision": hypothesis.revision, "status": hypothesis.status,
            "statement": hypothesis.statement,
            "check_date": hypothesis.resolution.check_date.isoformat() if hypothesis.resolution else None,
            "verdict": {"value": hypothesis.verdict.current.value, "confidence": hypothesis.verdict.current.confidence},
            "links": found, "evidence_health": state.use.hypotheses.get(hypothesis_id, 0.0),
            "links_rejected_by_review": rejected.get(hypothesis_id, 0),
            # Links keep the revision they were made against; after a new wording they are shown as
            # "linked to an earlier wording".
            "linked_to_earlier_wording": sum(1 for r in revisions.get(hypothesis_id, []) if r < hypothesis.revision),
        })
        if hypothesis.status == "active" and not found["supports"] + found["contradicts"] + found["context"]:
            gaps.append(f"{hypothesis_id} is active and has no evidence links")
        elif hypothesis.status == "active" and not found["contradicts"]:
            gaps.append(f"{hypothesis_id} has no contradicting evidence yet")
    return cards, gaps


def _is_move(row: LedgerRow) -> bool:
    """Corpus, evidence and hypothesis moves: extracts, links, reviews, people's edits, the
    Resolver's and people's verdicts (resolutions) and reverts, which withdraw evidence."""
    return (row.kind in ("extract", "skeptic", "link", "human", "review") or row.action == "revert"
            or (row.action == "resolve" and row.kind == "verdict"))


def _moves(rows: list[LedgerRow]) -> list[Move]:
    """The latest accepted rows that touched evidence or hypotheses, newest first."""
    rows = rows[-RECENT_ROWS:]
    moves: list[Move] = [{"seq": row.seq, "at": iso(row.at), "action": row.action, "kind": row.kind, "actor": row.actor,
              "description": row.description}
             for row in rows if row.outcome == "accepted" and _is_move(row)]
    return list(reversed(moves))[:NEWEST * 2]


def _open_leaves(state: ProjectView, now: datetime) -> list[OpenLeaf]:
    return [{"leaf_id": leaf.leaf_id, "kind": leaf.contract.kind, "title": leaf.contract.title,
             "expires_at": iso(leaf.contract.expires_at)} for leaf in state.open_leaves(now)]


def _scout_requests(state: ProjectView) -> list[str]:
    return [f"scout request ({note.hypothesis_id}): {request.gap}"
            for note in state.notes.values() for request in note.scout_requests]


def digest_of(view: TreeView, slug: str, now: datetime) -> Digest:
    state = ProjectView(view)
    project = state.project
    cards, gaps = _hypotheses(state, project.hypotheses)
    rows = [row for _, row in read_chain(view)]
    not_sealed: list[UnsealedCard] = [
        {"hypothesis_id": item.hypothesis_id, "missing": item.missing, "why": item.why}
        for item in unsealed(view, [card["hypothesis_id"] for card in cards], rows)]
    return {
        "project": slug, "question": project.question, "at": iso(now),
        "reports": _reports(state), "hypotheses": cards, "moves": _moves(rows),
        "open_gaps": gaps + _scout_requests(state), "open_leaves": _open_leaves(state, now),
        "corpus": _corpus(state), "unsealed": not_sealed,
    }


def _corpus(state: ProjectView) -> Corpus:
    """How many findings and sources the project holds (counted by path: nothing is parsed)."""
    return {"findings": len(state.finding_ids), "sources": len(state.source_ids)}


def digest(home: Home, slug: str, now: datetime) -> Digest:
    repo = home.project(slug)
    return digest_of(repo.view(repo.tip()), slug, now)
