"""The Planner's judgement calls, asked of a configured model and held to the same rules.

The decomposition never needs a model (`planning.plan` is the whole Planner on a fresh machine).
Where `model` is configured (the adapter of `verifier.model`: a command, or recorded answers), the
Planner asks it only for what is a matter of judgement: which gap to scout first, which of the
rules' leaves to make and in what order, the plan's goal in words, and a reason for a leaf. It
reads what design §5.1 says the Planner reads: the request (canonical JSON, kind `plan`, version
2) carries the targets, gaps and candidate leaves, and the project's own words: PROJECT.md's free
text and the latest report (by created_at, then id), each cut to a bound in `constants`
(`PLAN_PROJECT_TEXT_MAX_CHARS`, `PLAN_REPORT_MAX_CHARS`; a cut is marked). The answer must be
one JSON object:

    {"gap_order": ["<every gap, exactly as given, in the order to scout them>"],   (optional)
     "leaves": ["<leaf_id of a candidate leaf>", ...],                             (optional)
     "goal": "<one line, at most 300 characters>",                                 (optional)
     "reasons": {"<leaf_id of a planned leaf>": "<one line, at most 300 characters>"}}  (optional)

An answer that is not that (not JSON, unknown keys, a gap order that drops, adds or renames a
gap, a reason for a leaf that is not in the plan, an over-long or multi-line string), or a model
that fails, is logged as a decision in the plan file and the deterministic plan is used as it is.
A valid gap order re-runs the same rules with the gaps in that order; it can change which scout
leaves the budget admits, never what the rules allow.

`leaves` is a selection and order among the candidates the rules produced (after any gap order):
`select_leaves` applies it only within them. A selection naming a leaf that is not a candidate,
naming one twice, or naming more than the wake's budget (`ProjectState.wake_max`) is refused
whole, a decision says why, and the rules' leaves stand; it can never add a leaf. A leaf of a
plan a person approved (`WakePlan.released`) is kept even when the selection leaves it out.

The model's words are untrusted text: the goal and each reason pass the secret gate
(`roles.answergate`) before they go into the plan. One that fails is dropped, a decision says so
(naming the field and the detector, never the text), and the rest of the plan lands; the dropped
texts travel on `WakePlan.stopped` so the wake revokes any bearer token in them. So does the
message of a failed call (a command's stderr can carry anything).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from verifier.constants import PLAN_PROJECT_TEXT_MAX_CHARS, PLAN_REPORT_MAX_CHARS
from verifier.errors import FormatError
from verifier.formats.base import Strict, iso
from verifier.formats.document import Report
from verifier.formats.leaf import LeafContract
from verifier.formats.project import parse_project
from verifier.model.adapter import Backend, ModelError
from verifier.roles.answergate import safe_text, screen
from verifier.roles.planning import ProjectState, WakePlan, plan
from verifier.state.layout import PROJECT_FILE
from verifier.state.project import ProjectView
from verifier.store.gitrepo import GitTree

OneLine = Annotated[str, StringConstraints(min_length=1, max_length=300, pattern=r"^[^\n\r]*\S[^\n\r]*$")]
LeafName = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class Judgement(Strict):
    gap_order: list[str] = Field(default_factory=list)
    # None: no selection (the rules' leaves as they are); a selection names at least one leaf.
    leaves: list[LeafName] | None = Field(default=None, min_length=1, max_length=500)
    goal: OneLine | None = None
    reasons: dict[str, OneLine] = Field(default_factory=dict)


@dataclass(frozen=True)
class Bounded:
    """A text cut to its bound; `cut` says the model saw only the beginning."""

    text: str
    cut: bool = False

    @classmethod
    def of(cls, text: str, limit: int) -> Bounded:
        text = text.strip()
        return cls(text[:limit], len(text) > limit)

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "cut": self.cut}


@dataclass(frozen=True)
class Context:
    """The project's own words a judgement reads (design §5.1), already bounded."""

    project_text: Bounded = Bounded("")
    report_id: str | None = None
    report_title: str = ""
    report_at: str = ""
    report: Bounded = Bounded("")

    def to_json(self) -> dict[str, object]:
        report: dict[str, object] | None = None
        if self.report_id is not None:
            report = {"report_id": self.report_id, "title": self.report_title, "created_at": self.report_at,
                      **self.report.to_json()}
        return {"project_text": self.project_text.to_json(), "latest_report": report}


def context_of(project_body: str, reports: Mapping[str, tuple[Report, str]]) -> Context:
    """PROJECT.md's free text and the latest report (newest created_at, then the greatest id), bounded."""
    text = Bounded.of(project_body, PLAN_PROJECT_TEXT_MAX_CHARS)
    if not reports:
        return Context(text)
    report, body = max(reports.values(), key=lambda item: (item[0].created_at, item[0].report_id))
    return Context(text, report.report_id, report.title, iso(report.created_at),
                   Bounded.of(body, PLAN_REPORT_MAX_CHARS))


def read_context(tree: GitTree, tip: str) -> Context:
    """The context at the tip the wake decides on (the shell's read; a report that does not parse is
    not read, as everywhere)."""
    try:
        _project, body = parse_project(tree.read(PROJECT_FILE) or b"", PROJECT_FILE)
    except FormatError:
        body = ""  # read_state has refused such a project already; never a reason to stop here
    return context_of(body, ProjectView(tree, tip).reports)


def judgement_request(state: ProjectState, draft: WakePlan, context: Context | None = None) -> bytes:
    """What the model is asked: the targets, the gaps, the candidate leaves and the project's own
    words. Nothing sealed, no trace: the same public state the repository shows."""
    value = {
        "kind": "plan", "version": 2, "project": state.slug, "targets": draft.targets,
        "gaps": [gap for _hypothesis, gap in state.gaps],
        "leaves": [{"leaf_id": c.leaf_id, "kind": c.kind, "title": c.title} for c in draft.leaves],
        "leaves_max": state.wake_max,
        "decisions": draft.decisions,
        **(context or Context()).to_json(),
        "answer": "one JSON object: gap_order (every gap, reordered), leaves (leaf_ids among the candidates, "
                  "in the order to make them, at most leaves_max), goal (one line), reasons (leaf_id -> one line)",
    }
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def parse_judgement(answer: bytes, state: ProjectState, draft: WakePlan) -> Judgement:
    """The answer, held to the rules; ValueError saying why not."""
    try:
        judgement = Judgement.model_validate(json.loads(answer))
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0][:200]
        raise ValueError(f"the answer is not the judgement object ({first})") from exc
    gaps = [gap for _hypothesis, gap in state.gaps]
    if judgement.gap_order and sorted(judgement.gap_order) != sorted(gaps):
        raise ValueError("gap_order is not a reordering of exactly the gaps it was given")
    planned = {c.leaf_id for c in draft.leaves}
    unknown = sorted(set(judgement.reasons) - planned)
    if unknown:
        raise ValueError(f"a reason for {unknown[0]}, which is not a leaf of this plan")
    return judgement


def select_leaves(candidates: list[LeafContract], chosen: list[str], budget: int,
                  keep: frozenset[str] = frozenset()) -> tuple[list[LeafContract], str]:
    """The candidates the model chose, in its order, and the decision that says so; or, when the
    choice is not within the rules, the candidates as they are and the decision saying why. Pure.
    Leaves in `keep` (a person approved them) stay, after the chosen ones, even when not chosen."""
    by_id = {c.leaf_id: c for c in candidates}
    outside = [leaf_id for leaf_id in chosen if leaf_id not in by_id]
    twice = sorted({leaf_id for index, leaf_id in enumerate(chosen) if leaf_id in chosen[:index]})
    why = (f"it names {len(outside)} leaf id(s) that are not among the rules' candidates" if outside else
           f"it names {twice[0]} more than once" if twice else
           f"it names {len(chosen)} leaves, more than this wake's budget of {budget}" if len(chosen) > budget else "")
    if why:
        return candidates, f"The model's leaf selection was refused ({why}); the rules' leaves stand."
    kept = [by_id[leaf_id] for leaf_id in chosen]
    kept += [c for c in candidates if c.leaf_id in keep and c.leaf_id not in chosen]
    dropped = len(candidates) - len(kept)
    return kept, (f"Leaves: the configured model's selection and order among the rules' {len(candidates)} "
                  f"candidates ({len(kept)} kept, {dropped} left for a later wake).")


def apply_judgement(state: ProjectState, now: datetime, draft: WakePlan, judgement: Judgement) -> WakePlan:
    result = draft
    gaps = [gap for _hypothesis, gap in state.gaps]
    if judgement.gap_order and judgement.gap_order != gaps:
        by_gap = {gap: (hypothesis, gap) for hypothesis, gap in state.gaps}
        result = plan(replace(state, gaps=[by_gap[gap] for gap in judgement.gap_order]), now)
        result.decisions.append("Scout order: the configured model's order of the open gaps.")
    if judgement.leaves is not None:
        leaves, decision = select_leaves(result.leaves, judgement.leaves, state.wake_max, result.released)
        result = replace(result, leaves=leaves, decisions=[*result.decisions, decision])
    kept = {c.leaf_id for c in result.leaves}
    words = {**({"goal": judgement.goal} if judgement.goal else {}),
             **{f"reasons.{leaf_id}": reason for leaf_id, reason in judgement.reasons.items() if leaf_id in kept}}
    screened = screen(words)
    if "goal" in screened.kept:
        result.goal = screened.kept["goal"]
    result.decisions += [f"{name.split('.', 1)[1]}: {reason} (the model's reason)"
                         for name, reason in screened.kept.items() if name.startswith("reasons.")]
    if not screened.clean:
        result.decisions.append(f"Dropped the model's {', '.join(sorted(screened.stopped))}: the secret gate "
                                f"stopped {'it' if len(screened.stopped) == 1 else 'them'} "
                                f"({screened.summary()}); the rest of the plan stands.")
        result.stopped += screened.texts
    return result


def judge(state: ProjectState, now: datetime, backend: Backend, context: Context | None = None) -> WakePlan:
    """The deterministic plan, with the model's judgement calls where they pass the rules.
    `context` is the project's own words the model reads (`read_context`)."""
    draft = plan(state, now)
    if draft.empty:
        return draft  # nothing to plan: nothing to ask
    request = judgement_request(state, draft, context)
    try:
        exchange = backend.exchange(request)
        judgement = parse_judgement(exchange.answer, state, draft)
    except (ModelError, ValueError) as exc:
        # Scanned whole, then cut: a cut could halve a secret and hide it from the scan.
        said, screened = safe_text(str(exc) or type(exc).__name__, name="the model's error",
                                   instead="the error message was withheld")
        draft.decisions.append(f"The model's judgement was not used ({said.splitlines()[0][:300]}); "
                               "the deterministic plan stands.")
        draft.stopped += screened.texts
        return draft
    result = apply_judgement(state, now, draft, judgement)
    result.decisions.append(f"Judgement calls by the configured {backend.name} model (answer sha256 "
                            f"{hashlib.sha256(exchange.answer).hexdigest()[:16]}), checked against the rules.")
    return result
