"""What a leaf's inputs must be at its base revision before anyone may write the leaf. Pure.

A leaf on a source, hypothesis, finding or object that does not exist at its base lands on the
board and can never be done, so `rw leaf add` (a person's tool) refuses it up front, naming the
input. The activation gate (design §3.5) is here too: a leaf on a loose hypothesis (no criterion,
check date and measure) or a resolved one is refused. The Planner's own leaves meet these rules
by construction (it only picks what it read at the same tip).
"""

from __future__ import annotations

from verifier.checks.hypotheses import revision_problem
from verifier.errors import FormatError
from verifier.formats.leaf import LeafContract
from verifier.formats.source import parse_source
from verifier.state.layout import classify, finding_path, source_record_path
from verifier.state.project import current_hypothesis
from verifier.state.view import TreeView


def _source_problems(view: TreeView, contract: LeafContract) -> list[str]:
    source_id = contract.inputs.source_id
    if source_id is None:
        return []
    data = view.read(source_record_path(source_id))
    if data is None:
        return [f"inputs.source_id: there is no source {source_id} at the base revision"]
    try:
        record = parse_source(data, source_record_path(source_id))
    except FormatError as exc:
        return [f"inputs.source_id: the record of {source_id} is unreadable ({exc})"]
    if contract.kind == "extract" and record.status != "included":
        return [f"inputs.source_id: {source_id} is {record.status}; extract leaves take included sources only"]
    return []


def _hypothesis_problems(view: TreeView, contract: LeafContract) -> list[str]:
    inputs = contract.inputs
    if inputs.hypothesis_id is None:
        return []
    hypothesis = current_hypothesis(view, inputs.hypothesis_id)
    if hypothesis is None:
        return [f"inputs.hypothesis_id: there is no hypothesis {inputs.hypothesis_id} at the base revision"]
    if hypothesis.resolution is None:
        return [f"inputs.hypothesis_id: {inputs.hypothesis_id} is loose (no resolution.criterion, check_date and "
                "measure); leaves on loose hypotheses are refused until the steward sets them"]
    if hypothesis.status == "resolved":
        return [f"inputs.hypothesis_id: {inputs.hypothesis_id} is resolved; it takes no more leaves"]
    if inputs.hypothesis_revision is not None:
        problem = revision_problem(view, inputs.hypothesis_id, inputs.hypothesis_revision, "inputs")
        if problem is not None:
            return [f"inputs.hypothesis_revision: {problem.message}"]
    return []


def _object_problems(view: TreeView, contract: LeafContract) -> list[str]:
    problems = [f"inputs.finding_ids: there is no finding {finding_id} at the base revision"
                for finding_id in contract.inputs.finding_ids if view.read(finding_path(finding_id)) is None]
    path = contract.inputs.object_path
    if path is not None:
        kind = classify(path)
        if kind is None or kind.type not in ("finding", "link"):
            problems.append(f"inputs.object_path: {path} is not the path of a finding or a link")
        elif view.read(path) is None:
            problems.append(f"inputs.object_path: there is no {kind.type} at {path} at the base revision")
    return problems


def input_problems(view: TreeView, contract: LeafContract) -> list[str]:
    """Every way the leaf's inputs fail to exist (or to be allowed) in `view`, its base revision."""
    return [*_source_problems(view, contract), *_hypothesis_problems(view, contract),
            *_object_problems(view, contract)]
