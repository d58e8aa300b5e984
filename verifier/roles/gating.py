"""The validation gate's rules (design §6.1): score a replay, decide keep or roll back, record it. Pure.

Score = acceptance rate + mean objects per accepted leaf (findings for extract, sources for
scout). A proposal for a validated kind (extract, scout) is kept only if its score beats the best
so far; a tie is refused. For the other kinds v0 has no validation leaves, so the gate runs the
deterministic subset only: the same replay must not score lower than the best.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from verifier.formats.skill import sections

VALIDATED_KINDS = ("extract", "scout")
_PLACES = 6  # scores are compared rounded, so float noise never decides a tie
IMPACT_HEADER = "| date | proposal | leaf kind | validation set | validation score | best so far | outcome |"
DETAILS_HEADING = "## Proposals"
IMPACT_START = ("# Skill impact\n\nWritten only by the gate harness: every proposal, its diff, its validation score "
                "against the best so far, the validation set's version, and whether it was kept. The best so far "
                "resets when the validation set's version changes.\n\n"
                + IMPACT_HEADER + "\n|---|---|---|---|---|---|---|\n")


@dataclass(frozen=True)
class LeafScore:
    leaf_id: str
    kind: str
    outcome: str
    objects: int
    code: str | None = None


@dataclass(frozen=True)
class Score:
    leaves: int
    accepted: int
    objects: int  # objects landed by accepted leaves

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.leaves if self.leaves else 0.0

    @property
    def mean_objects(self) -> float:
        return self.objects / self.accepted if self.accepted else 0.0

    @property
    def value(self) -> float:
        return round(self.acceptance_rate + self.mean_objects, _PLACES)


def score(results: list[LeafScore]) -> Score:
    accepted = [item for item in results if item.outcome == "accepted"]
    return Score(len(results), len(accepted), sum(item.objects for item in accepted))


def keep(kind: str, candidate: Score, best: float) -> bool:
    """Strictly better for a validated kind; no worse for the rest (deterministic subset only)."""
    if kind in VALIDATED_KINDS:
        return candidate.value > best
    return candidate.value >= best


def section_diff(before: str, after: str, kind: str) -> str:
    """The unified diff of one section's body, as the record shows it."""
    old, new = sections(before)[kind].body, sections(after)[kind].body
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/skill/SKILL.md#{kind}", tofile=f"b/skill/SKILL.md#{kind}")
    return "".join(lines)


@dataclass(frozen=True)
class Decision:
    proposal_id: str
    kind: str
    at: str
    set_version: str
    candidate: Score | None  # None when the proposal was refused before any replay
    best: float | None
    outcome: str  # "kept", "rolled back" or "refused"
    diff: str
    rationale: str
    skill_version: str  # the live version after the decision
    reason: str = ""


def impact_document(existing: str, decision: Decision) -> str:
    """skill-impact.md with one more row in its table and one more section under Proposals."""
    head, _sep, details = existing.partition(f"\n{DETAILS_HEADING}\n")
    table = head.rstrip("\n").splitlines()
    if IMPACT_HEADER not in table:  # an older or hand-made header: start the harness's own table
        table = IMPACT_START.rstrip("\n").splitlines()
    value = f"{decision.candidate.value:.3f}" if decision.candidate else "-"
    best = f"{decision.best:.3f}" if decision.best is not None else "-"
    table.append(f"| {decision.at} | {decision.proposal_id} | {decision.kind} | {decision.set_version} | {value} "
                 f"| {best} | {decision.outcome} |")
    section = [f"### {decision.proposal_id} ({decision.kind}): {decision.outcome}", ""]
    if decision.candidate:
        c = decision.candidate
        section.append(f"- validation score {c.value:.3f} = acceptance rate {c.acceptance_rate:.3f} "
                       f"({c.accepted}/{c.leaves}) + mean objects per accepted leaf {c.mean_objects:.3f}")
    section += [f"- best so far {best} on validation set {decision.set_version}",
                f"- live skill_version after the decision: {decision.skill_version}"]
    if decision.reason:
        section.append(f"- {decision.reason}")
    if decision.rationale:
        section.append(f"- rationale: {decision.rationale}")
    section += ["", "```diff", decision.diff.rstrip("\n") or "(no diff)", "```", ""]
    return "\n".join(table) + f"\n\n{DETAILS_HEADING}\n" + details.lstrip("\n") + "\n".join(section)
