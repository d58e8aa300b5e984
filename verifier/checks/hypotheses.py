"""The rules on hypotheses a check applies: a revision must exist, a loose one takes no leaf, a
new wording is a new revision. Reading them is the state room's (verifier.state.project)."""

from __future__ import annotations

from datetime import date

from verifier.errors import Rejection
from verifier.formats.hypothesis import Hypothesis
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


def loose_problem(tree: TreeView, hypothesis_id: str | None) -> Rejection | None:
    """Design §3.5: a loose hypothesis (no criterion, check date and measure yet) takes no agent's
    leaf; a person activates it first. None when the hypothesis is active or resolved (or absent:
    the revision rule names that)."""
    if hypothesis_id is None:
        return None
    hypothesis = current_hypothesis(tree, hypothesis_id)
    if hypothesis is None or hypothesis.status != "loose":
        return None
    return Rejection("loose_hypothesis",
                     f"{hypothesis_id} is loose: it has no resolution criterion, check date and measure yet, so "
                     "no agent's leaf builds on it; a person activates it first (status: active, with all three)",
                     hypothesis_path(hypothesis_id))


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
