"""What an agent is handed for a leaf (`rw leaf show`): the contract and the inputs it names.

A review leaf's payload is the object under review and its source, nothing else: never the
author's trace id or trace contents (design §3.10, the decorrelated lens of §5.2), never the
ledger rows or leaf results that would name them.
"""

from __future__ import annotations

from pydantic import JsonValue

from verifier.errors import FormatError
from verifier.formats.leaf import LeafContract
from verifier.pipeline.trace import asked_level
from verifier.state.layout import classify, finding_path, leaf_path, source_record_path
from verifier.state.project import ProjectView, current_hypothesis
from verifier.state.view import TreeView

Json = dict[str, JsonValue]  # a payload is a JSON document handed to the agent as it is


def _source(state: ProjectView, source_id: str) -> Json:
    record = state.source(source_id)
    if record is None:
        return {"source_id": source_id, "missing": True}
    return {"path": source_record_path(source_id),
            "record": record.model_dump(mode="json", exclude={"fetched_by", "leaf_id"}),
            "text_command": f"rw source text <project> {source_id}"}


def _finding(state: ProjectView, finding_id: str) -> Json:
    path = finding_path(finding_id)
    finding = state.finding(finding_id)
    if finding is None:
        raise FormatError(f"finding {finding_id} is not in the project", path)
    return {"path": path, "finding": finding.model_dump(mode="json", exclude={"leaf_id"}),
            "source": _source(state, finding.source_id)}


def review_payload(state: ProjectView, leaf: LeafContract) -> Json:
    target = leaf.inputs.object_path or ""
    kind = classify(target)
    if kind is None or state.read(target) is None:
        return {"object": {"path": target, "missing": True}}
    if kind.type == "finding":
        return {"object": _finding(state, kind.object_id)}
    if kind.type == "link":
        link = state.link(kind.object_id)
        assert link is not None  # read just above
        hypothesis = current_hypothesis(state.tree, link.hypothesis_id)
        return {"object": {"path": target, "link": link.model_dump(mode="json", exclude={"leaf_id"}),
                           "finding": _finding(state, link.finding_id),
                           "hypothesis": {"hypothesis_id": link.hypothesis_id,
                                          "statement": hypothesis.statement if hypothesis else None}}}
    return {"object": {"path": target, "unsupported": kind.type}}


def leaf_payload(view: TreeView, leaf_id: str) -> Json:
    """The contract plus what the leaf's kind needs to start work."""
    state = ProjectView(view)
    contract = state.contract(leaf_id)
    if contract is None:
        raise FormatError(f"there is no leaf {leaf_id}", leaf_path(leaf_id))
    payload: Json = {"contract": contract.model_dump(mode="json")}
    level = asked_level(contract)
    if level is not None:  # what the verifier will refuse less than (pipeline.trace)
        payload["trace_level"] = level
    try:
        if contract.kind == "review":
            payload["inputs"] = review_payload(state, contract)
        elif contract.kind == "extract" and contract.inputs.source_id:
            payload["inputs"] = {"source": _source(state, contract.inputs.source_id)}
        elif contract.inputs.hypothesis_id:
            hypothesis = current_hypothesis(view, contract.inputs.hypothesis_id)
            payload["inputs"] = {"hypothesis": hypothesis.model_dump(mode="json", exclude={"baseline", "verdict"})
                                 if hypothesis else None}
    except FormatError as exc:
        payload["inputs_error"] = str(exc)
    return payload
