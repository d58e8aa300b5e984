"""The Planner's judgement calls, asked of a configured model and held to the same rules.

The decomposition never needs a model (`planning.plan` is the whole Planner on a fresh machine).
Where `model` is configured (the adapter of `verifier.model`: a command, or recorded answers), the
Planner asks it only for what is a matter of judgement: which gap to scout first, the plan's goal
in words, and a reason for a leaf. The request is canonical JSON (kind `plan`, below); the answer
must be one JSON object:

    {"gap_order": ["<every gap, exactly as given, in the order to scout them>"],   (optional)
     "goal": "<one line, at most 300 characters>",                                 (optional)
     "reasons": {"<leaf_id of a planned leaf>": "<one line, at most 300 characters>"}}  (optional)

An answer that is not that (not JSON, unknown keys, a gap order that drops, adds or renames a
gap, a reason for a leaf that is not in the plan, an over-long or multi-line string), or a model
that fails, is logged as a decision in the plan file and the deterministic plan is used as it is.
A valid gap order re-runs the same rules with the gaps in that order; it can change which scout
leaves the budget admits, never what the rules allow.

The model's words are untrusted text: the goal and each reason pass the secret gate
(`roles.answergate`) before they go into the plan. One that fails is dropped, a decision says so
(naming the field and the detector, never the text), and the rest of the plan lands; the dropped
texts travel on `WakePlan.stopped` so the wake revokes any bearer token in them. So does the
message of a failed call (a command's stderr can carry anything).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import datetime
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from verifier.formats.base import Strict
from verifier.model.adapter import Backend, ModelError
from verifier.roles.answergate import safe_text, screen
from verifier.roles.planning import ProjectState, WakePlan, plan

OneLine = Annotated[str, StringConstraints(min_length=1, max_length=300, pattern=r"^[^\n\r]*\S[^\n\r]*$")]


class Judgement(Strict):
    gap_order: list[str] = Field(default_factory=list)
    goal: OneLine | None = None
    reasons: dict[str, OneLine] = Field(default_factory=dict)


def judgement_request(state: ProjectState, draft: WakePlan) -> bytes:
    """What the model is asked: the targets, the gaps and the planned leaves. Nothing sealed, no
    trace: the same public state the digest shows."""
    value = {
        "kind": "plan", "version": 1, "project": state.slug, "targets": draft.targets,
        "gaps": [gap for _hypothesis, gap in state.gaps],
        "leaves": [{"leaf_id": c.leaf_id, "kind": c.kind, "title": c.title} for c in draft.leaves],
        "decisions": draft.decisions,
        "answer": "one JSON object: gap_order (every gap, reordered), goal (one line), reasons (leaf_id -> one line)",
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


def apply_judgement(state: ProjectState, now: datetime, draft: WakePlan, judgement: Judgement) -> WakePlan:
    result = draft
    gaps = [gap for _hypothesis, gap in state.gaps]
    if judgement.gap_order and judgement.gap_order != gaps:
        by_gap = {gap: (hypothesis, gap) for hypothesis, gap in state.gaps}
        result = plan(replace(state, gaps=[by_gap[gap] for gap in judgement.gap_order]), now)
        result.decisions.append("Scout order: the configured model's order of the open gaps.")
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


def judge(state: ProjectState, now: datetime, backend: Backend) -> WakePlan:
    """The deterministic plan, with the model's judgement calls where they pass the rules."""
    draft = plan(state, now)
    if draft.empty:
        return draft  # nothing to plan: nothing to ask
    request = judgement_request(state, draft)
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
