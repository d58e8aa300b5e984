"""Plans and reports: well-formed, named for their file, and every object they cite or introduce
exists in the tree."""

from __future__ import annotations

from verifier.errors import FormatError, Rejection
from verifier.formats.document import parse_plan, parse_report
from verifier.state.layout import classify, object_path
from verifier.state.view import TreeView


def _missing_refs(tree: TreeView, refs: list[str], what: str, path: str) -> list[Rejection]:
    problems = []
    for ref in refs:
        target = object_path(ref)
        if target is None or tree.read(target) is None:
            problems.append(Rejection("unknown_citation", f"{what} {ref}, which does not exist", path))
    return problems


def check_document_file(tree: TreeView, path: str, data: bytes) -> list[Rejection]:
    kind = classify(path)
    assert kind is not None and kind.type in ("plan", "report")
    try:
        if kind.type == "plan":
            plan, _ = parse_plan(data, path)
            if plan.plan_id != kind.object_id:
                return [Rejection("bad_id", f"plan_id is {plan.plan_id}; the file is {path}", path)]
            return _missing_refs(tree, plan.cites, "the plan cites", path)
        report, _ = parse_report(data, path)
    except FormatError as exc:
        return [Rejection("bad_format", exc.message, exc.where)]
    if report.report_id != kind.object_id:
        return [Rejection("bad_id", f"report_id is {report.report_id}; the file is {path}", path)]
    return (_missing_refs(tree, report.cites, "the report cites", path)
            + _missing_refs(tree, report.introduced, "the report introduces", path))
