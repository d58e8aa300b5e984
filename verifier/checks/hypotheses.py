"""The rules on hypotheses a check applies: a revision must exist, a new wording is a new revision,
and the one activation rule (design §3.5): a hypothesis is ready for a plan when it has a
criterion, a measure and a check date still ahead, and a loose one becomes active when a plan
targets it. Reading them is the state room's (verifier.state.project)."""

from __future__ import annotations

import io
from collections.abc import Iterable
from datetime import date

from ruamel.yaml import YAML

from verifier.errors import FormatError, Rejection
from verifier.formats.frontmatter import split_front_matter
from verifier.formats.hypothesis import Hypothesis, parse_hypothesis
from verifier.state.layout import hypothesis_path
from verifier.state.project import current_hypothesis
from verifier.state.view import TreeView


def revision_problem(tree: TreeView, hypothesis_id: str, revision: int, where: str) -> Rejection | None:
    """None if `revision` of the hypothesis exists (the current one or an earlier one)."""
    hypothesis = current_hypothesis(tree, hypothesis_id)
    if hypothesis is None:
        return Rejection("unknown_hypothesis", f"hypothesis {hypothesis_id} does not exist", where)
    if revision > hypothesis.revision:
        return Rejection(
            "unknown_revision",
            f"{hypothesis_id} has no revision {revision}; the current revision is {hypothesis.revision}",
            where,
        )
    return None


def ready_for_plan(hypothesis: Hypothesis, today: date) -> bool:
    """Design §3.5: the Planner may target a hypothesis only with a criterion, a check date and a
    measure; the check date must still be ahead (one that passed, e.g. after an `unresolved`
    outcome sent the hypothesis back to loose, is asked of the steward again)."""
    return hypothesis.status != "resolved" and hypothesis.resolution is not None \
        and hypothesis.resolution.check_date > today


def not_ready_why(hypothesis: Hypothesis, today: date) -> str:
    """Why `ready_for_plan` is false, in the words a steward acts on."""
    if hypothesis.resolution is None:
        return "it has no resolution criterion, check date and measure yet"
    return (f"its check date {hypothesis.resolution.check_date.isoformat()} is not after today "
            f"({today.isoformat()}); it needs a later resolution.check_date")


def loose_problem(tree: TreeView, hypothesis_id: str | None) -> Rejection | None:
    """Design §3.5: a loose hypothesis takes no agent's leaf. None when the hypothesis is active or
    resolved (or absent: the revision rule names that). The message says which of the two loose
    cases it is: no criterion yet, or a criterion but no plan has targeted it since it became loose
    (the Planner activates it in the landing of the plan that targets it)."""
    if hypothesis_id is None:
        return None
    hypothesis = current_hypothesis(tree, hypothesis_id)
    if hypothesis is None or hypothesis.status != "loose":
        return None
    if hypothesis.resolution is None:
        why = ("it has no resolution criterion, check date and measure yet, so no agent's leaf builds on it; "
               "a person sets all three (then a plan targets it and activates it)")
    else:
        why = (f"it has a criterion, check date ({hypothesis.resolution.check_date.isoformat()}) and measure, but "
               "no plan has targeted it since it became loose, so no agent's leaf builds on it yet; the "
               "Planner's next plan that targets it activates it (a check date that passed is asked of the "
               "steward first), or a person sets status: active")
    return Rejection("loose_hypothesis", f"{hypothesis_id} is loose: {why}", hypothesis_path(hypothesis_id))


def activated(data: bytes, where: str) -> bytes:
    """The hypothesis file with `status: active` and nothing else changed (same revision: the
    wording did not change). Round-trip YAML keeps the person's wording, key order and comments;
    the body is kept byte for byte; the result is held to the format like any other write."""
    yaml_text, body, _ = split_front_matter(data, where)
    loader = YAML(typ="rt")
    loader.width = 4096
    loader.preserve_quotes = True
    document = loader.load(yaml_text)
    document["status"] = "active"
    stream = io.StringIO()
    loader.dump(document, stream)
    new = f"---\n{stream.getvalue()}---\n{body}".encode()
    parsed, _ = parse_hypothesis(new, where)
    old, _ = parse_hypothesis(data, where)
    problem = revision_rule(old, parsed, where)
    if problem is not None:
        raise FormatError(problem.render(), where)
    return new


def activation_writes(tree: TreeView, hypothesis_ids: Iterable[str], today: date) -> dict[str, bytes | None]:
    """The one activation rule, for every path where a plan targets hypotheses (a Planner's plan
    landing, a person approving a held plan): each target that is loose and ready for a plan
    becomes active in that same landing. Others are left as they are."""
    writes: dict[str, bytes | None] = {}
    for hypothesis_id in dict.fromkeys(hypothesis_ids):
        hypothesis = current_hypothesis(tree, hypothesis_id)
        if hypothesis is None or hypothesis.status != "loose" or not ready_for_plan(hypothesis, today):
            continue
        path = hypothesis_path(hypothesis_id)
        writes[path] = activated(tree.read(path) or b"", path)
    return writes


def activation_problem(old: Hypothesis | None, new: Hypothesis, today: date, where: str) -> Rejection | None:
    """Design §3.5: loose -> active by a person's edit, with criterion, check date and measure
    (the format requires all three for active), and a check date still ahead: a hypothesis that
    is due the day it is activated would be resolved before any evidence could be gathered."""
    activating = new.status == "active" and (old is None or old.status != "active")
    if not activating or new.resolution is None or new.resolution.check_date > today:
        return None
    return Rejection("check_date_past", f"{new.hypothesis_id} is activated with check_date "
                     f"{new.resolution.check_date.isoformat()}, which is not after today ({today.isoformat()}); "
                     "set a check date ahead", where)


def revision_rule(old: Hypothesis | None, new: Hypothesis, where: str) -> Rejection | None:
    """Editing the statement makes a new revision (+1); anything else keeps the revision."""
    if old is None:
        if new.revision != 1:
            return Rejection("bad_revision", f"a new hypothesis starts at revision 1, not {new.revision}", where)
        return None
    if new.hypothesis_id != old.hypothesis_id:
        return Rejection("bad_id", f"hypothesis_id changed from {old.hypothesis_id} to {new.hypothesis_id}", where)
    if new.statement != old.statement and new.revision != old.revision + 1:
        return Rejection(
            "bad_revision",
            f"the statement changed, so the revision must be {old.revision + 1} (it is {new.revision})",
            where,
        )
    if new.statement == old.statement and new.revision != old.revision:
        return Rejection(
            "bad_revision",
            f"the statement did not change, so the revision stays {old.revision} (it is {new.revision})",
            where,
        )
    return None
