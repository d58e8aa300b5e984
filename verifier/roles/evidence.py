"""Gathering one hypothesis's evidence from a project tree: the `resolve` request and the frozen
facts of its resolution record. Pure (the tree and a history lookup are passed in).

- The evidence is every link present in `links/` for the hypothesis, of any revision (a link
  keeps the wording it was made against), with its finding's statement, excerpt and limitation
  and its source's URL, ordered by link id so the request, and its hash, are reproducible.
- A link out of the evidence is still frozen when it was reviewed: withdrawn (reverted, or
  deleted), or waiting in or rejected from `queue/links/`. It earns nothing, but its would-have
  credit judges its reviewers (design §7.3). Its content comes from the queue or from history.
- A link whose finding is gone (the finding was reverted) is out of the evidence too: there is no
  excerpt to show the model. So is a link that a standing `reject` review withdrew, or whose
  finding one withdrew (the scores' `rejected_by`): it stays in links/ and its reviews judge.
- Operators are the ones the use scores recorded (who first landed each object); U(l) is the
  link's use in `scores/use/`. The balance of U(l) by stance gives the corpus verdict V_c.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from verifier.errors import FormatError
from verifier.formats.finding import Finding
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.link import Link, parse_link
from verifier.model.schema import Evidence, ResolveRequest, request_sha256
from verifier.roles.records import Balance, FindingFact, LinkFact, ResolutionRecord, ReviewFact
from verifier.scoring.use import ScoreBook
from verifier.state.layout import link_path, queue_path
from verifier.state.project import ProjectView, WalkableTree
from verifier.writes.baseline import baseline_request

UNKNOWN_OPERATOR = "unknown"
HistoryLookup = Callable[[str], bytes | None]


@dataclass(frozen=True)
class Gathered:
    """The resolve request and the facts to freeze, from one tree."""

    request: ResolveRequest
    record: ResolutionRecord  # the facts only: no proposal, no decision yet

    @property
    def corpus_verdict(self) -> str:
        return self.record.corpus_verdict


def _finding(state: ProjectView, finding_id: str) -> Finding | None:
    try:
        return state.finding(finding_id)
    except FormatError:
        return None


def _source_url(state: ProjectView, source_id: str) -> str | None:
    try:
        record = state.source(source_id)
    except FormatError:
        return None
    return record.url if record is not None else None


def _operator(book: ScoreBook, view: WalkableTree, object_id: str, leaf_id: str | None) -> str:
    entry = book.entry(object_id)
    if entry is not None:
        return entry.operator
    if leaf_id:  # never landed in the corpus (held): the operator of the leaf that made it
        try:
            result = ProjectView(view).result(leaf_id)
        except FormatError:
            result = None
        if result is not None and result.operator is not None:
            return result.operator
    return UNKNOWN_OPERATOR


def _rejected(book: ScoreBook, object_id: str) -> bool:
    entry = book.entry(object_id)
    return entry is not None and bool(entry.rejected_by)


def _withdrawn(view: WalkableTree, link_id: str, history: HistoryLookup) -> Link | None:
    """A reviewed link no longer in links/: waiting in or rejected from the queue, or reverted."""
    path = link_path(link_id)
    for data in (view.read(queue_path("links", path)), history(path), history(queue_path("links", path))):
        if data is not None:
            try:
                return parse_link(data, path)
            except FormatError:
                continue
    return None


def gather(view: WalkableTree, hypothesis: Hypothesis, *, now: datetime, history: HistoryLookup) -> Gathered:
    """The evidence of `hypothesis` in `view`, as a resolve request and frozen facts."""
    if hypothesis.resolution is None:
        raise FormatError(f"{hypothesis.hypothesis_id} has no resolution criterion, check date and measure")
    h = hypothesis.hypothesis_id
    book = ScoreBook(view.read)
    state = ProjectView(view)
    present = {link_id: link for link_id, link in state.links.items() if link.hypothesis_id == h}
    evidence: list[Evidence] = []
    facts: dict[str, LinkFact] = {}
    findings: dict[str, FindingFact] = {}
    for link_id in sorted(present):
        link = present[link_id]
        finding = _finding(state, link.finding_id)
        entry = book.entry(link_id)
        # A link out of the evidence: its finding is gone, or a standing `reject` review withdrew
        # it or its finding (issue 10: the effect applied is the one resolution sees).
        in_evidence = finding is not None and not _rejected(book, link_id) and not _rejected(book, link.finding_id)
        if finding is not None and in_evidence:
            evidence.append(Evidence(link_id=link_id, finding_id=link.finding_id, stance=link.stance,
                                     statement=finding.statement, excerpt=finding.excerpt,
                                     limitation=finding.limitation, source_id=finding.source_id,
                                     source_url=_source_url(state, finding.source_id)))
        facts[link_id] = LinkFact(link_id=link_id, finding_id=link.finding_id, revision=link.hypothesis_revision,
                                  stance=link.stance, leaf_kind=link.leaf_kind,
                                  operator=_operator(book, view, link_id, link.leaf_id), in_evidence=in_evidence,
                                  use=float(entry.u) if entry is not None and in_evidence else 0.0)
    reviews: list[ReviewFact] = []
    for review in state.reviews.values():
        if not review.object_id.startswith("lnk_"):
            continue  # reviews of findings are not scored by resolution
        if review.object_id not in facts:
            if view.read(link_path(review.object_id)) is not None:
                continue  # a present link of another hypothesis
            gone = _withdrawn(view, review.object_id, history)
            if gone is None or gone.hypothesis_id != h:
                continue
            facts[gone.link_id] = LinkFact(link_id=gone.link_id, finding_id=gone.finding_id,
                                           revision=gone.hypothesis_revision, stance=gone.stance,
                                           leaf_kind=gone.leaf_kind, in_evidence=False, use=0.0,
                                           operator=_operator(book, view, gone.link_id, gone.leaf_id))
        reviews.append(ReviewFact(review_id=review.review_id, link_id=review.object_id, decision=review.decision,
                                  reviewer=_operator(book, view, review.review_id, review.leaf_id)))
    for fact in facts.values():
        if fact.finding_id not in findings:
            finding = _finding(state, fact.finding_id)
            findings[fact.finding_id] = FindingFact(
                finding_id=fact.finding_id,
                operator=_operator(book, view, fact.finding_id, finding.leaf_id if finding else None))
    balance = Balance(
        supports=sum(f.use for f in facts.values() if f.in_evidence and f.stance == "supports"),
        contradicts=sum(f.use for f in facts.values() if f.in_evidence and f.stance == "contradicts"))
    resolution = hypothesis.resolution
    request = ResolveRequest(hypothesis_id=h, revision=hypothesis.revision, statement=hypothesis.statement,
                             criterion=resolution.criterion, measure=resolution.measure,
                             check_date=resolution.check_date, evidence=evidence)
    record = ResolutionRecord(
        hypothesis_id=h, revision=hypothesis.revision, check_date=resolution.check_date, evidence_at=now,
        baseline_request_sha256=request_sha256(baseline_request(hypothesis)),
        balance=balance, corpus_verdict=balance.corpus_verdict(),
        links=[facts[k] for k in sorted(facts)], reviews=sorted(reviews, key=lambda r: r.review_id),
        findings=[findings[k] for k in sorted(findings)])
    return Gathered(request, record)
