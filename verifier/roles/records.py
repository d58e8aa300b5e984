"""What a resolution freezes, and the score files built from it. Pure.

A resolution record (`scores/resolutions/<H>.json`; a proposal waiting for a person is the same
document at `queue/verdicts/<H>.json`, without a decision) freezes everything the scores of one
hypothesis depend on at the moment the Resolver looked:

- the evidence: the hypothesis's links (present ones in the evidence, withdrawn ones that were
  reviewed out of it), the reviews of those links, and who authored each link and finding;
- the corpus-fed verdict V_c, from the evidence balance alone (below), before the model is asked;
- the model's proposal (the `resolve` call: verdict, confidence, rationale, hashes);
- the decision (who set the outcome, when, why) and what became of the sealed baseline.

    V_c = true   if Σ U(l) over `supports` links > Σ U(l) over `contradicts` links
          false  if it is less
          none   on a tie (no evidence at all included): an abstaining corpus, which the lift
                 formula counts as wrong (it is in N), so a swarm cannot earn lift by staying quiet

So an override only changes the outcome: the credit deltas it posts are differences against the
same frozen evidence, and `scores/resolution.json` (design §7.3, §7.4) is a pure function of the
records, the reports and the use-score summary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError

from verifier.errors import FormatError
from verifier.formats.base import Day, Sha256Hex, Strict, Text, Timestamp, iso
from verifier.formats.project import HypothesisId
from verifier.scoring.resolution import (
    Finding,
    Link,
    Report,
    Resolution,
    Review,
    activity_from_use_summary,
    dump_json,
    resolution_document,
    score_resolutions,
)
from verifier.state.layout import (
    RECORDS_DIR,
)
from verifier.state.project import ProjectView
from verifier.state.view import TreeView

CorpusVerdict = Literal["true", "false", "none"]
Outcome = Literal["true", "false", "unresolved"]
Operator = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class LinkFact(Strict):
    link_id: Annotated[str, StringConstraints(pattern=r"^lnk_[0-9a-f]{16}$")]
    finding_id: Annotated[str, StringConstraints(pattern=r"^fnd_[0-9a-f]{16}$")]
    revision: int = Field(ge=1)  # the hypothesis revision the link was made against
    stance: Literal["supports", "contradicts", "context"]
    leaf_kind: Literal["skeptic", "link", "human"]
    operator: Operator
    in_evidence: bool
    use: float  # U(l) when the evidence was frozen (0 for links out of the evidence)


class ReviewFact(Strict):
    review_id: Annotated[str, StringConstraints(pattern=r"^rev_[0-9a-f]{16}$")]
    link_id: str
    reviewer: Operator
    decision: Literal["accept", "reject", "amend"]


class FindingFact(Strict):
    finding_id: str
    operator: Operator


class Balance(Strict):
    """Σ U(l) of the links in the evidence, by stance (context links do not weigh)."""

    supports: float
    contradicts: float

    def corpus_verdict(self) -> CorpusVerdict:
        if self.supports > self.contradicts:
            return "true"
        if self.supports < self.contradicts:
            return "false"
        return "none"


class ModelCall(Strict):
    """The Resolver's `resolve` call and what it proposed."""

    backend: Literal["command", "recorded", "anthropic", "openai"]  # verifier.model.adapter.BackendName
    model: str
    request_sha256: Sha256Hex
    answer_sha256: Sha256Hex
    verdict: Outcome
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: Text


class Decider(Strict):
    type: Literal["resolver", "human"]
    id: str


class BaselineOutcome(Strict):
    """What became of the sealed baseline at resolution.

    opened   opened and comparable: its verdict is V_b in lift
    stale    opened, but it answered another wording or criterion: not compared (no_baseline)
    leaked   opened, but found in an agent-visible payload first: not compared (no_baseline)
    missing  no baseline was ever sealed: not compared (no_baseline)
    sealed   still sealed: the outcome is unresolved (nothing to compare), or the decision was
             taken by a person's command, which never holds the private key; the next
             `rw resolve` opens it
    """

    state: Literal["opened", "stale", "leaked", "missing", "sealed"]
    verdict: Literal["true", "false"] | None = None
    path: str | None = None
    note: str | None = None

    @property
    def comparable(self) -> Literal["true", "false"] | None:
        return self.verdict if self.state == "opened" else None


class ResolutionRecord(Strict):
    version: Literal[1] = 1
    hypothesis_id: HypothesisId
    revision: int = Field(ge=1)
    check_date: Day
    evidence_at: Timestamp
    # sha256 of the baseline request this hypothesis asked when its evidence was frozen: a baseline
    # is compared in lift only if it answered exactly that (same wording, same criterion).
    baseline_request_sha256: Sha256Hex
    balance: Balance
    corpus_verdict: CorpusVerdict
    links: list[LinkFact]
    reviews: list[ReviewFact]
    findings: list[FindingFact]
    proposal: ModelCall | None = None
    outcome: Outcome | None = None  # None: a proposal waiting for a person
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    decided_by: Decider | None = None
    decided_at: Timestamp | None = None
    reason: str | None = None
    baseline: BaselineOutcome | None = None

    def to_json(self) -> bytes:
        data = self.model_dump(mode="json")
        data["evidence_at"] = iso(self.evidence_at)
        if self.decided_at is not None:
            data["decided_at"] = iso(self.decided_at)
        return dump_json(data)

    def scoring(self) -> tuple[Resolution, list[Link], list[Review], list[Finding]]:
        """This record as the pure scoring module's inputs (decided records only)."""
        if self.outcome is None:
            raise ValueError(f"{self.hypothesis_id}: a proposal has no outcome to score yet")
        baseline = self.baseline.comparable if self.baseline is not None else None
        resolution = Resolution(self.hypothesis_id, self.outcome, self.corpus_verdict, baseline)
        links = [Link(f.link_id, f.finding_id, self.hypothesis_id, f.stance, f.leaf_kind, f.operator, f.in_evidence)
                 for f in self.links]
        reviews = [Review(r.review_id, r.link_id, r.reviewer, r.decision) for r in self.reviews]
        findings = [Finding(f.finding_id, f.operator) for f in self.findings]
        return resolution, links, reviews, findings


def parse_record(data: bytes, where: str) -> ResolutionRecord:
    try:
        return ResolutionRecord.model_validate(json.loads(data))
    except (ValueError, ValidationError) as exc:
        raise FormatError(f"not a resolution record: {exc}", where) from exc


def read_record(view: TreeView, path: str) -> ResolutionRecord | None:
    data = view.read(path)
    return None if data is None else parse_record(data, path)


def read_records(view: TreeView) -> dict[str, ResolutionRecord]:
    """Every decided resolution in the project, by hypothesis id."""
    records = {}
    for name in view.list_dir(RECORDS_DIR):
        if name.endswith(".json"):
            record = read_record(view, f"{RECORDS_DIR}/{name}")
            if record is not None:
                records[record.hypothesis_id] = record
    return records


def resolution_scores(view: TreeView, project: str, records: Mapping[str, ResolutionRecord]) -> bytes:
    """scores/resolution.json over every decided record, the reports and the use summary."""
    resolutions: list[Resolution] = []
    links: list[Link] = []
    reviews: list[Review] = []
    findings: dict[str, Finding] = {}  # a finding linked to two hypotheses is one finding
    for record in records.values():
        resolution, own_links, own_reviews, own_findings = record.scoring()
        resolutions.append(resolution)
        links += own_links
        reviews += own_reviews
        findings.update((f.finding_id, f) for f in own_findings)
    state = ProjectView(view)
    # A malformed report is left out: the human check refuses one; history may hold one fixed later.
    reports = [Report(report.report_id, tuple(report.introduced)) for report, _body in state.reports.values()]
    summary = state.use
    scores = score_resolutions(resolutions, links, reviews, findings.values(), reports)
    return dump_json(resolution_document(project, scores, activity_from_use_summary(summary)))


def planner_scores(previous: bytes | None, *, hypothesis_id: str, revision: int, at: str, seq: int,
                   by: str) -> bytes:
    """scores/planner.json with one more unresolved outcome: the Planner's unresolved_count
    (design §7.3, §11) counts every time a criterion could not be checked, and never goes down."""
    value: dict[str, Any] = json.loads(previous) if previous else {"version": 1, "unresolved": []}
    value["unresolved"].append({"hypothesis_id": hypothesis_id, "revision": revision, "at": at, "seq": seq,
                                "by": by})
    value["unresolved_count"] = len(value["unresolved"])
    return dump_json(value)
