"""What an agent is handed for a leaf (`rw leaf show`): the contract and the inputs it names.

A review leaf's payload is the object under review and its source, nothing else: never the
author's trace id or trace contents (design §3.10, the decorrelated lens of §5.2), never the
ledger rows or leaf results that would name them.
"""

from __future__ import annotations

from typing import Any

from verifier.errors import FormatError
from verifier.formats.finding import parse_finding
from verifier.formats.leaf import LeafContract, parse_leaf
from verifier.formats.link import parse_link
from verifier.formats.source import parse_source
from verifier.state.layout import classify, finding_path, leaf_path, source_record_path
from verifier.state.project import current_hypothesis
from verifier.store.gitrepo import GitTree


def _source(view: GitTree, source_id: str) -> dict[str, Any]:
    data = view.read(source_record_path(source_id))
    if data is None:
        return {"source_id": source_id, "missing": True}
    record = parse_source(data, source_record_path(source_id))
    return {"path": source_record_path(source_id),
            "record": record.model_dump(mode="json", exclude={"fetched_by", "leaf_id"}),
            "text_command": f"rw source text <project> {source_id}"}


def _finding(view: GitTree, finding_id: str) -> dict[str, Any]:
    path = finding_path(finding_id)
    finding = parse_finding(view.read(path) or b"", path)
    return {"path": path, "finding": finding.model_dump(mode="json", exclude={"leaf_id"}),
            "source": _source(view, finding.source_id)}


def review_payload(view: GitTree, leaf: LeafContract) -> dict[str, Any]:
    target = leaf.inputs.object_path or ""
    kind = classify(target)
    if kind is None or view.read(target) is None:
        return {"object": {"path": target, "missing": True}}
    if kind.type == "finding":
        return {"object": _finding(view, kind.object_id)}
    if kind.type == "link":
        link = parse_link(view.read(target) or b"", target)
        hypothesis = current_hypothesis(view, link.hypothesis_id)
        return {"object": {"path": target, "link": link.model_dump(mode="json", exclude={"leaf_id"}),
                           "finding": _finding(view, link.finding_id),
                           "hypothesis": {"hypothesis_id": link.hypothesis_id,
                                          "statement": hypothesis.statement if hypothesis else None}}}
    return {"object": {"path": target, "unsupported": kind.type}}


def leaf_payload(view: GitTree, leaf_id: str) -> dict[str, Any]:
    """The contract plus what the leaf's kind needs to start work."""
    contract = parse_leaf(view.read(leaf_path(leaf_id)) or b"", leaf_path(leaf_id))
    payload: dict[str, Any] = {"contract": contract.model_dump(mode="json")}
    try:
        if contract.kind == "review":
            payload["inputs"] = review_payload(view, contract)
        elif contract.kind == "extract" and contract.inputs.source_id:
            payload["inputs"] = {"source": _source(view, contract.inputs.source_id)}
        elif contract.inputs.hypothesis_id:
            hypothesis = current_hypothesis(view, contract.inputs.hypothesis_id)
            payload["inputs"] = {"hypothesis": hypothesis.model_dump(mode="json", exclude={"baseline", "verdict"})
                                 if hypothesis else None}
    except FormatError as exc:
        payload["inputs_error"] = str(exc)
    return payload
