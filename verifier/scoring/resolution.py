"""Resolution credit, review accuracy and lift (design §7.3, §7.4), as pure functions of plain data.

The rules, exactly:

    credit(l) = +1  if l.stance matches the outcome (supports & true, contradicts & false)
              = -1  if l.stance opposes the outcome, except
              =  0  for a skeptic-leaf contradicts link that opposes it (the skeptic exemption)
              =  0  if l.stance == context, and for every link when the outcome is unresolved
    a link out of the evidence at resolution (withdrawn after a rejecting review, reverted, or
    rejected from a hold) earns nothing; what it would have earned, by the same rule, still
    scores its reviewers
    credit(f) = Σ credit(l) over links l from finding f
    credit(r) = Σ credit(x) over x in r.introduced (findings and links; other objects count 0)
    credit(operator) = Σ credit(x) over the findings and links the operator authored

    review accuracy(reviewer) = Σ over their reviews of links, with c the link's would-have credit:
        +1  accept (or amend) and c > 0, or reject and c < 0
        -1  accept (or amend) and c < 0, or reject and c > 0
         0  c == 0 (context, the skeptic exemption, an unresolved outcome)
    An amend keeps the link (with changes), so it is judged as an accept.

    lift = (1/N) Σ ([V_c correct and V_b wrong] − [V_b correct and V_c wrong])
        over the N hypotheses resolved true or false that have a baseline. "Correct" means equal
        to the outcome; a corpus verdict of none or unresolved is never correct, so an abstaining
        corpus cannot earn lift. With N = 0 lift is null, not zero. Across projects the terms are
        pooled (one N), not averaged per project.

Unresolved outcomes give no credit and count toward the Planner's unresolved_count. The five v0
components (accepted leaves, use score, resolution credit, review accuracy, cost per accepted
object) are reported side by side per operator and never combined into one number.

Every output is sorted by its ids, so the same inputs in any order give byte-identical JSON.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from verifier.formats.strictjson import Json
from verifier.formats.usescores import UseSummary

Stance = Literal["supports", "contradicts", "context"]
Outcome = Literal["true", "false", "unresolved"]
CorpusVerdict = Literal["true", "false", "unresolved", "none"]
BaselineVerdict = Literal["true", "false"]
ReviewDecision = Literal["accept", "reject", "amend"]
SKEPTIC = "skeptic"
DOCUMENT_VERSION = 1
STANCES: tuple[Stance, ...] = ("supports", "contradicts", "context")
DECISIONS: tuple[ReviewDecision, ...] = ("accept", "reject", "amend")
OUTCOMES: tuple[Outcome, ...] = ("true", "false", "unresolved")
CORPUS_VERDICTS: tuple[CorpusVerdict, ...] = ("true", "false", "unresolved", "none")
T = TypeVar("T")


class ScoringInputError(ValueError):
    """The inputs contradict themselves (a repeated id, a review without a reviewer, ...)."""


@dataclass(frozen=True)
class Link:
    """An evidence link as scoring sees it. `operator` is its author's accountable operator;
    `in_evidence` is False when the link was withdrawn before resolution (it earns nothing, but
    its reviews are still judged)."""

    link_id: str
    finding_id: str
    hypothesis_id: str
    stance: Stance
    leaf_kind: str  # skeptic | link | human
    operator: str
    in_evidence: bool = True


@dataclass(frozen=True)
class Review:
    """One review of one link (reviews/<ab>/<review_id>.yaml); `reviewer` is the operator
    accountable for it."""

    review_id: str
    link_id: str
    reviewer: str
    decision: ReviewDecision


@dataclass(frozen=True)
class Finding:
    finding_id: str
    operator: str


@dataclass(frozen=True)
class Report:
    report_id: str
    introduced: tuple[str, ...]


@dataclass(frozen=True)
class Resolution:
    """A hypothesis at resolution: the outcome (the criterion checked against the measure), the
    corpus-fed verdict V_c held before it, and the unsealed baseline V_b (None if never sealed)."""

    hypothesis_id: str
    outcome: Outcome
    corpus_verdict: CorpusVerdict
    baseline_verdict: BaselineVerdict | None


@dataclass(frozen=True)
class OperatorActivity:
    """What the ledger and the use scores say about an operator (inputs, not computed here)."""

    operator: str
    accepted_leaves: int
    accepted_objects: int
    use_score: float
    usd: float | None = None
    tokens: int | None = None
    # Accepted objects of the leaves that disclosed each cost (the per-object denominators);
    # None means all of them (a summary written before undisclosed cost was kept apart).
    usd_objects: int | None = None
    tokens_objects: int | None = None


def activity_from_use_summary(summary: UseSummary) -> list[OperatorActivity]:
    """OperatorActivity from the operators block of scores/use.json (scoring/use.py writes it)."""
    return [OperatorActivity(operator=name, accepted_leaves=row.accepted_leaves,
                             accepted_objects=row.accepted_objects, use_score=float(row.use_score),
                             usd=None if row.usd is None else float(row.usd),
                             tokens=None if row.tokens is None else int(row.tokens),
                             usd_objects=row.usd_objects, tokens_objects=row.tokens_objects)
            for name, row in sorted(summary.operators.items())]


# --- the rules ----------------------------------------------------------------------------


def link_credit(stance: Stance, leaf_kind: str, outcome: Outcome) -> int:
    """credit(l) for a link in the evidence (design §7.3)."""
    if outcome == "unresolved" or stance == "context":
        return 0
    if (stance == "supports") == (outcome == "true"):
        return 1
    if leaf_kind == SKEPTIC and stance == "contradicts":
        return 0  # the skeptic exemption: hunting for what breaks a hypothesis is never penalized
    return -1


def would_have_credit(link: Link, outcome: Outcome) -> int:
    """The credit the link earns if it is (or had been) in the evidence."""
    return link_credit(link.stance, link.leaf_kind, outcome)


def earned_credit(link: Link, outcome: Outcome) -> int:
    """The credit the link actually earns: nothing when it is out of the evidence."""
    return would_have_credit(link, outcome) if link.in_evidence else 0


def review_point(decision: ReviewDecision, link: Link, outcome: Outcome) -> int:
    """What one review of `link` adds to its reviewer's accuracy: +1, -1 or 0."""
    credit = would_have_credit(link, outcome)
    sign = (credit > 0) - (credit < 0)
    return -sign if decision == "reject" else sign


def _is_correct(verdict: str | None, outcome: Outcome) -> bool:
    return verdict == outcome


def lift_term(resolution: Resolution) -> int | None:
    """+1 corpus right and baseline wrong, -1 the reverse, 0 otherwise; None when not counted."""
    if resolution.outcome == "unresolved" or resolution.baseline_verdict is None:
        return None
    corpus = _is_correct(resolution.corpus_verdict, resolution.outcome)
    baseline = _is_correct(resolution.baseline_verdict, resolution.outcome)
    return int(corpus and not baseline) - int(baseline and not corpus)


# --- lift ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiftScore:
    n: int  # hypotheses resolved true/false with a baseline
    wins: int  # corpus right, baseline wrong
    losses: int  # baseline right, corpus wrong
    ties: int  # both right or both wrong
    unresolved: int  # resolved unresolved: no lift term, no credit
    no_baseline: int  # resolved true/false without a sealed baseline: cannot be compared
    lift: float | None  # (wins - losses) / n, None when n == 0

    def to_json(self) -> dict[str, Json]:
        return {"n": self.n, "wins": self.wins, "losses": self.losses, "ties": self.ties,
                "unresolved": self.unresolved, "no_baseline": self.no_baseline, "lift": self.lift}


def lift(resolutions: Iterable[Resolution]) -> LiftScore:
    wins = losses = ties = unresolved = no_baseline = 0
    for resolution in resolutions:
        if resolution.outcome == "unresolved":
            unresolved += 1
            continue
        term = lift_term(resolution)
        if term is None:
            no_baseline += 1
        elif term > 0:
            wins += 1
        elif term < 0:
            losses += 1
        else:
            ties += 1
    n = wins + losses + ties
    return LiftScore(n=n, wins=wins, losses=losses, ties=ties, unresolved=unresolved,
                     no_baseline=no_baseline, lift=(wins - losses) / n if n else None)


@dataclass(frozen=True)
class PlatformLift:
    projects: dict[str, LiftScore]
    overall: LiftScore

    def to_json(self) -> dict[str, Json]:
        return {"version": DOCUMENT_VERSION, "overall": self.overall.to_json(),
                "projects": {slug: self.projects[slug].to_json() for slug in sorted(self.projects)}}


def platform_lift(by_project: Mapping[str, Iterable[Resolution]]) -> PlatformLift:
    """Lift per project and across projects (the terms pooled, one N)."""
    lists = {slug: list(items) for slug, items in by_project.items()}
    return PlatformLift(projects={slug: lift(items) for slug, items in lists.items()},
                        overall=lift(item for items in lists.values() for item in items))


# --- scoring a project --------------------------------------------------------------------


@dataclass(frozen=True)
class LinkScore:
    link: Link
    outcome: Outcome
    credit: int
    would_have: int


@dataclass(frozen=True)
class ReviewScore:
    review: Review
    hypothesis_id: str
    point: int


@dataclass(frozen=True)
class ReviewAccuracy:
    reviewer: str
    score: int
    correct: int
    wrong: int
    neutral: int


@dataclass(frozen=True)
class OperatorCredit:
    operator: str
    links: int  # Σ credit over links they authored
    findings: int  # Σ credit over findings they authored
    resolution_credit: int  # links + findings: credit over every object they introduced


@dataclass(frozen=True)
class ResolutionScores:
    resolutions: tuple[Resolution, ...]
    links: tuple[LinkScore, ...]
    reviews: tuple[ReviewScore, ...]
    findings: dict[str, int]
    reports: dict[str, int]
    operators: dict[str, OperatorCredit]
    review_accuracy: dict[str, ReviewAccuracy]
    lift: LiftScore

    @property
    def unresolved_count(self) -> int:
        return self.lift.unresolved


def _unique(items: Iterable[T], key_name: str, what: str) -> dict[str, T]:
    out: dict[str, T] = {}
    for item in items:
        key = getattr(item, key_name)
        if key in out:
            raise ScoringInputError(f"{what} {key!r} appears twice")
        out[key] = item
    return out


def _check_link(link: Link) -> None:
    if link.stance not in STANCES:
        raise ScoringInputError(f"link {link.link_id}: stance {link.stance!r} is not one of {STANCES}")


def _reviewed_links(reviews: Iterable[Review], links: Mapping[str, Link]) -> list[tuple[Review, Link]]:
    out = []
    for review in _unique(reviews, "review_id", "review").values():
        if review.decision not in DECISIONS:
            raise ScoringInputError(f"review {review.review_id}: decision {review.decision!r} is not one of "
                                    f"{DECISIONS}")
        link = links.get(review.link_id)
        if link is None:
            raise ScoringInputError(f"review {review.review_id} is of {review.link_id}, which is not among the links "
                                    "(pass withdrawn links with in_evidence=False)")
        out.append((review, link))
    return out


def _check_resolution(resolution: Resolution) -> None:
    where = resolution.hypothesis_id
    if resolution.outcome not in OUTCOMES:
        raise ScoringInputError(f"{where}: outcome {resolution.outcome!r} is not one of {OUTCOMES}")
    if resolution.corpus_verdict not in CORPUS_VERDICTS:
        raise ScoringInputError(f"{where}: corpus verdict {resolution.corpus_verdict!r} is not one of "
                                f"{CORPUS_VERDICTS}")
    if resolution.baseline_verdict not in (None, "true", "false"):
        raise ScoringInputError(f"{where}: baseline verdict {resolution.baseline_verdict!r} is not true, false "
                                "or None")


def score_resolutions(resolutions: Iterable[Resolution], links: Iterable[Link], reviews: Iterable[Review] = (),
                      findings: Iterable[Finding] = (), reports: Iterable[Report] = ()) -> ResolutionScores:
    """Every §7.3 and §7.4 score of one project. Links to hypotheses not in `resolutions` (not
    resolved yet) are ignored; findings and reports without links to a resolved hypothesis score 0."""
    by_hypothesis = _unique(resolutions, "hypothesis_id", "hypothesis")
    for checked in by_hypothesis.values():
        _check_resolution(checked)
    link_map = _unique(links, "link_id", "link")
    finding_map = _unique(findings, "finding_id", "finding")
    report_map = _unique(reports, "report_id", "report")

    scored: list[LinkScore] = []
    for link_id in sorted(link_map):
        link = link_map[link_id]
        _check_link(link)
        resolution = by_hypothesis.get(link.hypothesis_id)
        if resolution is None:
            continue
        scored.append(LinkScore(link=link, outcome=resolution.outcome, credit=earned_credit(link, resolution.outcome),
                                would_have=would_have_credit(link, resolution.outcome)))
    judged = []
    for review, link in _reviewed_links(reviews, link_map):
        target = by_hypothesis.get(link.hypothesis_id)
        if target is not None:
            judged.append(ReviewScore(review=review, hypothesis_id=link.hypothesis_id,
                                      point=review_point(review.decision, link, target.outcome)))
    judged.sort(key=lambda item: item.review.review_id)

    finding_credit: dict[str, int] = defaultdict(int)
    for item in scored:
        finding_credit[item.link.finding_id] += item.credit
    link_credit_of = {item.link.link_id: item.credit for item in scored}

    report_credit = {
        report_id: sum(link_credit_of.get(x, finding_credit.get(x, 0)) for x in report.introduced)
        for report_id, report in report_map.items()
    }

    by_operator_links: dict[str, int] = defaultdict(int)
    by_operator_findings: dict[str, int] = defaultdict(int)
    for item in scored:
        by_operator_links[item.link.operator] += item.credit
    for finding_id, credit in finding_credit.items():
        finding = finding_map.get(finding_id)
        if finding is not None:
            by_operator_findings[finding.operator] += credit
    operators = {
        name: OperatorCredit(operator=name, links=by_operator_links.get(name, 0),
                             findings=by_operator_findings.get(name, 0),
                             resolution_credit=by_operator_links.get(name, 0) + by_operator_findings.get(name, 0))
        for name in sorted(set(by_operator_links) | set(by_operator_findings))
    }

    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for judgement in judged:
        tallies[judgement.review.reviewer][0 if judgement.point > 0 else 1 if judgement.point < 0 else 2] += 1
    accuracy = {name: ReviewAccuracy(reviewer=name, score=c - w, correct=c, wrong=w, neutral=z)
                for name, (c, w, z) in sorted(tallies.items())}

    ordered = tuple(by_hypothesis[h] for h in sorted(by_hypothesis))
    return ResolutionScores(resolutions=ordered, links=tuple(scored), reviews=tuple(judged),
                            findings={f: finding_credit[f] for f in sorted(finding_credit)},
                            reports={r: report_credit[r] for r in sorted(report_credit)},
                            operators=operators, review_accuracy=accuracy, lift=lift(ordered))


# --- the five components, side by side ----------------------------------------------------


def _per_object(total: float | None, objects: int) -> float | None:
    return None if total is None or objects == 0 else round(total / objects, 6)


def _disclosed(objects: int | None, activity: OperatorActivity) -> int:
    return activity.accepted_objects if objects is None else objects


def components(scores: ResolutionScores, activity: Iterable[OperatorActivity] = ()) -> list[Json]:
    """Per operator, the five v0 components next to each other; unknown inputs are null, not 0.

    Deliberately no total: a composite waits until ten hypotheses have resolved (design §7.4).
    """
    active = _unique(activity, "operator", "operator activity")
    names = sorted(set(active) | set(scores.operators) | set(scores.review_accuracy))
    rows: list[Json] = []
    for name in names:
        act = active.get(name)
        credit = scores.operators.get(name)
        review = scores.review_accuracy.get(name)
        rows.append({
            "operator": name,
            "accepted_leaves": act.accepted_leaves if act else None,
            "use_score": act.use_score if act else None,
            "resolution_credit": credit.resolution_credit if credit else 0,
            "review_accuracy": review.score if review else 0,
            "cost_per_accepted_object": {
                "usd": _per_object(act.usd, _disclosed(act.usd_objects, act)) if act else None,
                "tokens": _per_object(act.tokens, _disclosed(act.tokens_objects, act)) if act else None,
            },
        })
    return rows


# --- the documents ------------------------------------------------------------------------


def resolution_document(project: str, scores: ResolutionScores,
                        activity: Iterable[OperatorActivity] = ()) -> dict[str, Json]:
    """The content of scores/resolution.json."""
    links_per_hypothesis: dict[str, int] = defaultdict(int)
    for item in scores.links:
        links_per_hypothesis[item.link.hypothesis_id] += 1
    return {
        "version": DOCUMENT_VERSION,
        "project": project,
        "hypotheses": [
            {"hypothesis_id": r.hypothesis_id, "outcome": r.outcome, "corpus_verdict": r.corpus_verdict,
             "baseline_verdict": r.baseline_verdict, "lift_term": lift_term(r),
             "links": links_per_hypothesis.get(r.hypothesis_id, 0)}
            for r in scores.resolutions
        ],
        "links": [
            {"link_id": s.link.link_id, "hypothesis_id": s.link.hypothesis_id, "finding_id": s.link.finding_id,
             "stance": s.link.stance, "leaf_kind": s.link.leaf_kind, "operator": s.link.operator,
             "in_evidence": s.link.in_evidence, "outcome": s.outcome, "credit": s.credit,
             "would_have_credit": s.would_have}
            for s in scores.links
        ],
        "reviews": [
            {"review_id": j.review.review_id, "link_id": j.review.link_id, "hypothesis_id": j.hypothesis_id,
             "reviewer": j.review.reviewer, "decision": j.review.decision, "accuracy": j.point}
            for j in scores.reviews
        ],
        "findings": [{"finding_id": f, "credit": c} for f, c in scores.findings.items()],
        "reports": [{"report_id": r, "credit": c} for r, c in scores.reports.items()],
        # One row per operator with every number that can move for them, so a reader diffing two
        # versions of this file (the Commons notifier) sees each operator's whole change at once.
        "operators": [
            {"operator": name, "link_credit": credit.links, "finding_credit": credit.findings,
             "resolution_credit": credit.resolution_credit,
             "review_accuracy": scores.review_accuracy[name].score if name in scores.review_accuracy else 0}
            for name in sorted(set(scores.operators) | set(scores.review_accuracy))
            for credit in [scores.operators.get(name, OperatorCredit(name, 0, 0, 0))]
        ],
        "review_accuracy": [
            {"reviewer": a.reviewer, "score": a.score, "correct": a.correct, "wrong": a.wrong, "neutral": a.neutral}
            for a in scores.review_accuracy.values()
        ],
        "lift": scores.lift.to_json(),
        "unresolved_count": scores.unresolved_count,
        "components": components(scores, activity),
    }


def dump_json(document: Json) -> bytes:
    """The one spelling of a scores file: sorted keys, two-space indent, UTF-8, final newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"


# --- credit deltas: the messages the Resolver posts ---------------------------------------


@dataclass(frozen=True)
class CreditDelta:
    """What one resolution (or a verdict override) changed for one operator."""

    operator: str
    hypothesis_id: str
    outcome: Outcome
    previous_outcome: Outcome | None
    link_credit: int
    finding_credit: int
    review_accuracy: int
    links: tuple[tuple[str, int], ...]  # (link_id, change) for links they authored
    findings: tuple[tuple[str, int], ...]  # (finding_id, change) for findings they authored
    reviews: tuple[tuple[str, int], ...]  # (review_id, change) for their reviews of its links

    @property
    def message(self) -> str:
        def signed(value: int) -> str:
            return f"+{value}" if value > 0 else str(value)

        def plural(count: int, noun: str) -> str:
            return f"{count} {noun}{'' if count == 1 else 's'}"

        if self.previous_outcome is None and self.outcome == "unresolved":
            return f"{self.hypothesis_id} could not be resolved at its check date; unresolved gives no credit."
        if self.previous_outcome is None:
            head = f"{self.hypothesis_id} resolved {self.outcome}."
        else:
            head = f"{self.hypothesis_id} verdict changed from {self.previous_outcome} to {self.outcome}."
        parts = [head]
        if self.links:
            parts.append(f"Your links: {signed(self.link_credit)} ({plural(len(self.links), 'link')}).")
        if self.findings:
            parts.append(f"Your findings: {signed(self.finding_credit)} ({plural(len(self.findings), 'finding')}).")
        if self.reviews:
            parts.append(f"Your review accuracy: {signed(self.review_accuracy)} "
                         f"({plural(len(self.reviews), 'review')}).")
        return " ".join(parts)

    def to_json(self) -> dict[str, Json]:
        return {"operator": self.operator, "hypothesis_id": self.hypothesis_id, "outcome": self.outcome,
                "previous_outcome": self.previous_outcome, "link_credit": self.link_credit,
                "finding_credit": self.finding_credit, "review_accuracy": self.review_accuracy,
                "links": [{"link_id": i, "credit": c} for i, c in self.links],
                "findings": [{"finding_id": i, "credit": c} for i, c in self.findings],
                "reviews": [{"review_id": i, "accuracy": c} for i, c in self.reviews],
                "message": self.message}


def credit_deltas(after: Resolution, links: Iterable[Link], reviews: Iterable[Review] = (),
                  findings: Iterable[Finding] = (), *, before: Resolution | None = None) -> list[CreditDelta]:
    """Per operator involved with the hypothesis, what its resolution changed (sorted by operator).

    `before` is the earlier resolution when a person overrides a verdict; the deltas are then the
    differences, so posting both sets of messages adds up to the current scores.
    """
    _check_resolution(after)
    if before is not None:
        _check_resolution(before)
    if before is not None and before.hypothesis_id != after.hypothesis_id:
        raise ScoringInputError(
            f"an override must keep the hypothesis: {before.hypothesis_id} != {after.hypothesis_id}")
    link_map = _unique(links, "link_id", "link")
    finding_owner = {f.finding_id: f.operator for f in _unique(findings, "finding_id", "finding").values()}
    old = before.outcome if before is not None else "unresolved"  # before a resolution: no credit

    link_changes: dict[str, list[tuple[str, int]]] = defaultdict(list)
    finding_totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    review_changes: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for link in link_map.values():
        if link.hypothesis_id != after.hypothesis_id:
            continue
        _check_link(link)
        credit = earned_credit(link, after.outcome) - earned_credit(link, old)
        link_changes[link.operator].append((link.link_id, credit))
        owner = finding_owner.get(link.finding_id)
        if owner is not None:
            finding_totals[owner][link.finding_id] += credit
    for review, link in _reviewed_links(reviews, link_map):
        if link.hypothesis_id == after.hypothesis_id:
            change = review_point(review.decision, link, after.outcome) - review_point(review.decision, link, old)
            review_changes[review.reviewer].append((review.review_id, change))

    deltas = []
    for name in sorted(set(link_changes) | set(finding_totals) | set(review_changes)):
        own_links = tuple(sorted(link_changes.get(name, [])))
        own_findings = tuple(sorted(finding_totals.get(name, {}).items()))
        own_reviews = tuple(sorted(review_changes.get(name, [])))
        deltas.append(CreditDelta(
            operator=name, hypothesis_id=after.hypothesis_id, outcome=after.outcome,
            previous_outcome=before.outcome if before else None,
            link_credit=sum(c for _, c in own_links), finding_credit=sum(c for _, c in own_findings),
            review_accuracy=sum(c for _, c in own_reviews),
            links=own_links, findings=own_findings, reviews=own_reviews))
    return deltas


def deltas_document(deltas: Sequence[CreditDelta]) -> list[Json]:
    return [delta.to_json() for delta in sorted(deltas, key=lambda d: (d.hypothesis_id, d.operator))]
