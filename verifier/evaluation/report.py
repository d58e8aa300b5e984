"""The evaluation document: every metric of docs/eval.md over a set of project histories, as one
JSON-ready value with sorted keys, and its plain-text rendering. Pure: `now` is passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from verifier.evaluation.metrics import (
    Submissions,
    acceptance_over_time,
    context_of,
    platform_metrics,
    project_metrics,
    project_scope,
    submissions_of,
)
from verifier.evaluation.rows import Attempt, ProjectHistory, ResolvedHypothesis, ValidationResult
from verifier.evaluation.signals import DEFAULT_WEEKS, WEEK, lift_report, skill_versions, twelve_month_signal
from verifier.text.visible import shown

DOCUMENT_VERSION = 1


@dataclass(frozen=True)
class EvalOptions:
    now: datetime
    since: datetime | None = None
    weeks: int = DEFAULT_WEEKS
    recruited: tuple[str, ...] = ()
    validation: tuple[ValidationResult, ...] = field(default_factory=tuple)


def _in_window(row: Attempt, since: datetime | None) -> bool:
    # Leaf rows stay whatever their date: a leaf written before `since` and accepted after it
    # still has a time to accept.
    return since is None or row.action == "leaf" or row.at >= since


def _decided_in(resolved: ResolvedHypothesis, since: datetime | None) -> bool:
    return since is None or resolved.decided_at is None or resolved.decided_at >= since


def evaluate(histories: Sequence[ProjectHistory], options: EvalOptions) -> dict[str, Any]:
    """Per project and platform-wide: §12's metrics, lift and the kill signal, the 12-month signal."""
    ordered = sorted(histories, key=lambda h: h.project)
    context = context_of(ordered)
    now, since = options.now, options.since
    if since is None:  # the usual whole-history run: one comparison a row
        rows = {h.project: [r for r in h.rows if r.at <= now] for h in ordered}
    else:
        rows = {h.project: [r for r in h.rows if _in_window(r, since) and r.at <= now] for h in ordered}
    resolved = {h.project: [r for r in h.resolutions if _decided_in(r, options.since)] for h in ordered}
    everything = [row for h in ordered for row in rows[h.project]]
    # Each project's submissions worked out once; the platform's are theirs joined, in that order.
    submissions = {h.project: submissions_of(rows[h.project], context) for h in ordered}
    scopes = {h.project: project_scope(submissions[h.project], h.project) for h in ordered}
    projects = {
        h.project: {**scopes[h.project].document,
                    "project": project_metrics(h, rows[h.project], resolved[h.project], scopes[h.project].move_sums())}
        for h in ordered
    }
    origin = options.now - options.weeks * WEEK
    return {
        "version": DOCUMENT_VERSION,
        "now": options.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "since": options.since.strftime("%Y-%m-%dT%H:%M:%SZ") if options.since else None,
        "projects": projects,
        "platform": platform_metrics(Submissions.join(list(submissions.values())), list(scopes.values())),
        "skill_versions": skill_versions(everything, options.validation),
        "lift": lift_report(resolved),
        "twelve_month_signal": twelve_month_signal(
            [row for h in ordered for row in h.rows], now=options.now, recruited=options.recruited,
            weeks=options.weeks),
        "acceptance_over_time": acceptance_over_time(
            everything, origin=origin.timestamp(), width_s=WEEK.total_seconds()),
    }


def _fmt(estimate: dict[str, Any], unit: str = "") -> str:
    value, interval = estimate["value"], estimate["interval"]
    if value is None:
        text = "unknown"
    else:
        text = f"{value:.3f}{unit}"
        if interval is not None:
            text += f" [{interval[0]:.3f}, {interval[1]:.3f}]"
    text += f" n={estimate['n']}"
    return text + (f" ({estimate['excluded']} unknown, left out)" if estimate["excluded"] else "")


def _leaf_lines(title: str, groups: dict[str, Any]) -> Iterable[str]:
    yield f"  {title}"
    for label, m in groups.items():
        yield (f"    {label}: acceptance {_fmt(m['acceptance_rate'])}; cost/object "
               f"{_fmt(m['cost_per_accepted_object_usd'], ' usd')}; "
               f"time to accept {_fmt(m['time_to_accept_s'], ' s')} (from claim "
               f"{m['time_to_accept_s']['from_claim']}, from opening {m['time_to_accept_s']['from_opening']}); "
               f"use/object {_fmt(m['use_per_accepted_object'])}; resolution accuracy "
               f"{_fmt(m['resolution_accuracy'])}")


def _crossed_lines(crossed: dict[str, Any]) -> Iterable[str]:
    yield "  acceptance by kind x model"
    for kind, models in crossed.items():
        for model, cell in models.items():
            yield f"    {kind} x {model}: {_fmt(cell['acceptance_rate'])}"


def render_text(document: dict[str, Any]) -> str:
    """The human summary: the honesty check first, then the signal, skill versions, the
    platform's leaf metrics, the projects."""
    lines = [document["lift"]["statement"]]
    lift = document["lift"]["overall"]
    interval = document["lift"]["interval"]
    if lift["lift"] is not None:
        lines.append(f"lift {lift['lift']:+.3f} n={lift['n']} (wins {lift['wins']}, losses {lift['losses']}, ties "
                     f"{lift['ties']})" + (f" 95% [{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else ""))
    signal = document["twelve_month_signal"]
    lines.append(f"12-month signal: {signal['count']} unrecruited operators contributed in each of the last "
                 f"{signal['weeks']} weeks (target {signal['target']}): "
                 + ("met" if signal["met"] else "not met"))
    for entry in document["skill_versions"]:
        flag = "  STALE VALIDATION" if entry["validation_stale"] else ""
        validation = entry["validation"]
        lines.append(f"skill {entry['skill_version']}: live acceptance {_fmt(entry['live']['acceptance_rate'])}; "
                     "validation acceptance "
                     + (_fmt(validation["acceptance_rate"]) if validation else "none") + f"{flag} — {entry['note']}")
    platform = document["platform"]
    lines.append(f"platform ({len(document['projects'])} project{'s' if len(document['projects']) != 1 else ''})")
    lines += _leaf_lines("by kind", platform["by_kind"])
    lines += _leaf_lines("by model", platform["by_model"])
    for slug, block in document["projects"].items():
        p = block["project"]
        lines.append(f"project {slug}: conflict rate {_fmt(p['conflict_rate'])}; reviewer catch rate "
                     f"{_fmt(p['reviewer_catch_rate'])}; unresolved_count {p['unresolved_count']}; cost/move "
                     f"{_fmt(p['cost_per_hypothesis_move_usd'], ' usd')}")
        lines += [f"  baseline not sealed for {u['hypothesis_id']}: {u['why']}" for u in p.get("unsealed", [])]
        lines += _leaf_lines("by kind", block["by_kind"])
        lines += _leaf_lines("by model", block["by_model"])
        lines += _crossed_lines(block["by_kind_and_model"])
    # Labels come from manifests (a model, a skill version); rows from before the manifest's rule
    # may hold control characters: printed as escapes.
    return "\n".join(shown(line) for line in lines)
