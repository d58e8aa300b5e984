"""The digest (design §9.3): newest reports, hypothesis moves, open gaps and open leaves, as one
JSON-ready value. Reading is open, so nothing sealed or private is ever put in it: no baseline,
no trace ids, no trace contents. Which active hypotheses have no sealed baseline yet, and the
recorded reason, is public (`unsealed`): it says nothing of what a baseline would answer."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TypedDict

from verifier.checks.hypotheses import current_hypothesis
from verifier.errors import FormatError
from verifier.formats.base import iso
from verifier.formats.document import parse_report
from verifier.formats.layout import LEAVES_DIR, PROJECT_FILE, USE_SCORES, leaf_path, leaf_result_path
from verifier.formats.leaf import parse_leaf
from verifier.formats.ledger import LedgerRow
from verifier.formats.link import parse_link, parse_note
from verifier.formats.project import parse_project
from verifier.pipeline.ledger import read_chain
from verifier.scoring.use import ScoreBook
from verifier.seal.status import unsealed
from verifier.store.gitrepo import GitTree
from verifier.store.home import Home

NEWEST = 5
RECENT_ROWS = 200
Use = dict[str, dict[str, float]]  # scores/use.json's per-object use, by object type (the summary's fields)


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


def _use_table(data: bytes | None) -> Use:
    """The per-object use tables of scores/use.json (objects of a type not there score 0)."""
    raw = json.loads(data or b"{}")
    tables: Use = {}
    for kind, table in raw.items() if isinstance(raw, dict) else ():
        if isinstance(table, dict):
            tables[kind] = {key: value for key, value in table.items() if isinstance(value, int | float)}
    return tables


def _reports(view: GitTree, use: Use) -> list[ReportCard]:
    reports: list[ReportCard] = []
    for path in view.walk("reports"):
        try:
            report, _ = parse_report(view.read(path) or b"", path)
        except FormatError:
            continue
        reports.append({"report_id": report.report_id, "title": report.title, "created_at": iso(report.created_at),
                        "introduced": len(report.introduced), "use": use.get("reports", {}).get(report.report_id, 0.0)})
    return sorted(reports, key=lambda r: (r["created_at"], r["report_id"]), reverse=True)[:NEWEST]


def _hypotheses(view: GitTree, order: list[str], use: Use) -> tuple[list[HypothesisCard], list[str]]:
    stances: dict[str, Stances] = {}
    revisions: dict[str, list[int]] = {}
    rejected: dict[str, int] = {}
    book = ScoreBook(view.read)
    for path in view.walk("links"):
        try:
            link = parse_link(view.read(path) or b"", path)
        except FormatError:
            continue
        counts = stances.setdefault(link.hypothesis_id, {"supports": 0, "contradicts": 0, "context": 0})
        if any((entry := book.entry(object_id)) is not None and entry.get("rejected_by")
               for object_id in (link.link_id, link.finding_id)):
            # Withdrawn by a review (of the link, or of its finding): not evidence, as at resolution.
            rejected[link.hypothesis_id] = rejected.get(link.hypothesis_id, 0) + 1
            continue
        counts[link.stance] += 1
        revisions.setdefault(link.hypothesis_id, []).append(link.hypothesis_revision)
    ids = list(order) + sorted({name[:-3] for name in view.list_dir("hypotheses") if name.endswith(".md")} - set(order))
    cards: list[HypothesisCard] = []
    gaps: list[str] = []
    for hypothesis_id in ids:
        hypothesis = current_hypothesis(view, hypothesis_id)
        if hypothesis is None:
            continue
        found: Stances = stances.get(hypothesis_id, {"supports": 0, "contradicts": 0, "context": 0})
        cards.append({
            "hypothesis_id": hypothesis_id, "revision": hypothesis.revision, "status": hypothesis.status,
            "statement": hypothesis.statement,
            "check_date": hypothesis.resolution.check_date.isoformat() if hypothesis.resolution else None,
            "verdict": {"value": hypothesis.verdict.current.value, "confidence": hypothesis.verdict.current.confidence},
            "links": found, "evidence_health": use.get("hypotheses", {}).get(hypothesis_id, 0.0),
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


def _open_leaves(view: GitTree, now: datetime) -> list[OpenLeaf]:
    leaves: list[OpenLeaf] = []
    for name in view.list_dir(LEAVES_DIR):
        if not name.endswith(".yaml"):
            continue
        leaf_id = name[:-5]
        if view.read(leaf_result_path(leaf_id)) is not None:
            continue
        try:
            leaf = parse_leaf(view.read(leaf_path(leaf_id)) or b"", leaf_path(leaf_id))
        except FormatError:
            continue
        if now < leaf.expires_at:
            leaves.append({"leaf_id": leaf_id, "kind": leaf.kind, "title": leaf.title,
                           "expires_at": iso(leaf.expires_at)})
    return leaves


def _scout_requests(view: GitTree) -> list[str]:
    gaps = []
    for path in view.walk("notes"):
        try:
            note = parse_note(view.read(path) or b"", path)
        except FormatError:
            continue
        gaps += [f"scout request ({note.hypothesis_id}): {request.gap}" for request in note.scout_requests]
    return gaps


def digest_of(view: GitTree, slug: str, now: datetime) -> Digest:
    project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    use = _use_table(view.read(USE_SCORES))
    cards, gaps = _hypotheses(view, project.hypotheses, use)
    rows = [row for _, row in read_chain(view)]
    not_sealed: list[UnsealedCard] = [
        {"hypothesis_id": item.hypothesis_id, "missing": item.missing, "why": item.why}
        for item in unsealed(view, [card["hypothesis_id"] for card in cards], rows)]
    return {
        "project": slug, "question": project.question, "at": iso(now),
        "reports": _reports(view, use), "hypotheses": cards, "moves": _moves(rows),
        "open_gaps": gaps + _scout_requests(view), "open_leaves": _open_leaves(view, now),
        "corpus": _corpus(view), "unsealed": not_sealed,
    }


def _corpus(view: GitTree) -> Corpus:
    """How many findings and sources the project holds (counted by path: nothing is parsed)."""
    return {"findings": sum(1 for path in view.walk("findings") if path.endswith(".yaml")),
            "sources": sum(1 for path in view.walk("sources") if path.endswith(".yaml"))}


def digest(home: Home, slug: str, now: datetime) -> Digest:
    repo = home.project(slug)
    return digest_of(repo.view(repo.tip()), slug, now)
